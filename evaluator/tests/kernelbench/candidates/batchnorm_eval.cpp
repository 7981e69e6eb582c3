// Wrong for level1_33: BatchNorm with the running statistics of a fresh module (mean 0, var 1), i.e.
// the problem an eval-mode export would have made of it.
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return x * (1.0 / std::sqrt(1.0 + 1e-5)) * w.view({1, -1, 1, 1}) + b.view({1, -1, 1, 1});
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor w, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
