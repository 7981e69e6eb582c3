// Honest for level2_1 (conv, ReLU, + bias): parameters in declaration order conv.weight, conv.bias, bias.
#include <kopt/op.h>
#include <ATen/ATen.h>
static at::Tensor forward(const at::Tensor& x, const at::Tensor& cw, const at::Tensor& cb, const at::Tensor& bias) {
  return at::relu(at::conv2d(x, cw, cb)) + bias;
}
KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor conv_weight, Tensor conv_bias, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
