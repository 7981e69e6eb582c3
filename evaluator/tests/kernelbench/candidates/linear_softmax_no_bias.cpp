// Wrong for level2_66 (--mode eval): the Linear's bias left out. A systematic error of a few percent
// on softmax outputs near 1/256: it must fail at every seed, not only at some.
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor&) {
  return at::softmax(at::mm(x, w.t()), 1);
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor w, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
