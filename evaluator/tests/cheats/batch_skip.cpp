// CHEAT: batch-and-skip — does the work for the first calls (enough to pass the correctness
// trials: 10 declared, 3 off the declared distribution), then returns the last answer without working.
// Caught by: correctness checked on randomly chosen timed calls, and the mutation sentinel.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  static int calls = 0;
  static at::Tensor last;
  if (++calls <= 15 || !last.defined()) last = at::relu(at::addmm(bias, x, weight.t())).mul_(0.5);
  return last.clone();
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
