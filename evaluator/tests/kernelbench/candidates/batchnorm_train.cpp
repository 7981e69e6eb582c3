// Honest for level1_33 (BatchNorm2d as constructed = training mode): batch statistics, biased variance.
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  at::Tensor mean = x.mean({0, 2, 3}, true);
  at::Tensor var = (x - mean).pow(2).mean({0, 2, 3}, true);
  return (x - mean) * at::rsqrt(var + 1e-5) * w.view({1, -1, 1, 1}) + b.view({1, -1, 1, 1});
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor w, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
