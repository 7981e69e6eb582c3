// CHEAT: precision downgrade — the fp32 matmul computed in bfloat16.
// Caught by: the tolerance of the declared dtype (and the fp64 oracle does not excuse it); the
// deviation is reported.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& a, const at::Tensor& b) {
  return at::matmul(a.to(at::kBFloat16), b.to(at::kBFloat16)).to(at::kFloat);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor a, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
