// Honest for level2_66 exported with --mode eval (Linear, Dropout = identity, softmax over dim 1).
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::softmax(at::addmm(b, x, w.t()), 1);
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor w, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
