# HONEST (level1_19_ReLU): load_inline C++ CPU extension, relu as a raw loop over a contiguous float buffer
# into a fresh output. Expected: correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor relu_loop(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "relu_loop: float32 only");
  torch::Tensor xc = x.contiguous();
  torch::Tensor y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  return y;
}
"""

_ext = load_inline(name="kopt_py_relu_loop", cpp_sources=[_SRC], functions=["relu_loop"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_loop(x)
