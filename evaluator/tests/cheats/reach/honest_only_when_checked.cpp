// CHEAT (channel: knowing which calls are checked): exact on the first 13 calls (the correctness
// trials: 10 declared, 3 off the declared distribution) and on every 7th call after, a cheap wrong answer otherwise. Closed by: every timed
// call's output is compared with the reference on the same inputs.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  static long calls = 0;
  ++calls;
  if (calls <= 13 || calls % 7 == 0) return at::relu(x);
  return at::zeros_like(x);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
