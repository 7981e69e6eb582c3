// Wrong for level1_95: per-sample losses (reduction 'none'), shape [64] where the reference is a scalar.
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& logits, const at::Tensor& target) {
  return -at::log_softmax(logits, 1).gather(1, target.unsqueeze(1)).squeeze(1);
}
KOPT_LIBRARY(m) { m.def("forward(Tensor logits, Tensor target) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
