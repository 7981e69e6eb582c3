// CHEAT: input mutation — computes the answer, then zeros the input, so a reference that runs
// afterwards on the same tensors would see zeros and agree with anything.
// Caught by: the reference runs on a pristine copy beforehand; the judge compares the input region
// with what it wrote after every call (the reference does not write its input).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  at::Tensor y = at::relu(at::addmm(bias, x, weight.t())).mul_(0.5);
  const_cast<at::Tensor&>(x).zero_();
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
