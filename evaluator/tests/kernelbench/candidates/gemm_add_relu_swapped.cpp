// Wrong for level2_76: takes (x, bias, weight) where the export passes (x, gemm.weight, bias).
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& w) {
  return at::relu(at::addmm(bias, x, w.t()));
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor bias, Tensor weight) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
