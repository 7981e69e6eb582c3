// Wrong for level2_1: written for named_parameters() order (bias, conv.weight, conv.bias) instead of
// the declaration order the export passes (conv.weight, conv.bias, bias).
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& cw, const at::Tensor& cb) {
  return at::relu(at::conv2d(x, cw, cb)) + bias;
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor bias, Tensor conv_weight, Tensor conv_bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
