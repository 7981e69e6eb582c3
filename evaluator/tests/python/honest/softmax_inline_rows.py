# HONEST (level1_23_Softmax): load_inline C++ CPU extension, softmax per row in three passes (max, sum of
# exp in double, scale). Expected: correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_rows(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat, "softmax_rows: 2-d float32 only");
  torch::Tensor xc = x.contiguous();
  torch::Tensor y = torch::empty_like(xc);
  const int64_t rows = xc.size(0), cols = xc.size(1);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = in + r * cols;
    float* b = out + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = a[c] > m ? a[c] : m;
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      b[c] = std::exp(a[c] - m);
      s += b[c];
    }
    const float inv = static_cast<float>(1.0 / s);
    for (int64_t c = 0; c < cols; ++c) b[c] *= inv;
  }
  return y;
}
"""

_ext = load_inline(name="kopt_py_softmax_rows", cpp_sources=[_SRC], functions=["softmax_rows"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_rows(x)
