// CHEAT: constant output — returns zeros of the right shape without computing anything.
// Caught by: several seeds of non-uniform inputs (the reference is not all zeros).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return at::zeros({x.size(0), weight.size(0)}, x.options());
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
