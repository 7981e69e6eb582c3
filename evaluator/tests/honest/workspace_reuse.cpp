// Honest: heavy legitimate workspace reuse — one static scratch buffer kept across calls for an
// intermediate, a fresh output every call.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x_) {
  static at::Tensor workspace;
  at::Tensor x = x_.contiguous();
  if (!workspace.defined() || workspace.numel() < x.numel()) workspace = at::empty({x.numel()}, x.options());
  float* W = workspace.data_ptr<float>();
  const float* X = x.data_ptr<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) W[i] = X[i] > 0.f ? X[i] : 0.f;
  at::Tensor y = at::empty_like(x);
  std::copy(W, W + x.numel(), y.data_ptr<float>());
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
