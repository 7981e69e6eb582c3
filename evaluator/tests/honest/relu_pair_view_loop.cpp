// Honest for ref_relu_pair_view.cpp, whose own outputs share storage: relu by hand, returned with a
// transposed view of itself, as the reference does.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <tuple>

static std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return {y, y.t()};
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> (Tensor, Tensor)"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
