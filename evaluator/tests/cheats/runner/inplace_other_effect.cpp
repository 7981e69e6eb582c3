// CHEAT (more in place than the reference): the reference (ref_inplace_relu.cpp) writes relu(x)
// into x and returns it; this returns a correct fresh output but leaves zeros in x, which a caller
// holding x would see. Closed by: mutation judged like aliasing, against the reference's own effect
// on its inputs: the same effect is allowed, no other.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  at::Tensor y = at::relu(x);
  const_cast<at::Tensor&>(x).zero_();
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
