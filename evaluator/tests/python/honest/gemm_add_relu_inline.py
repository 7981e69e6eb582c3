# HONEST (level2_76_Gemm_Add_ReLU): load_inline C++ CPU extension calling at::matmul, then the bias add
# and relu in place on its own result. Parameters declared in the problem's order. Expected: correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor gemm_add_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
  torch::Tensor y = at::matmul(x, weight.t());
  y.add_(bias);
  y.clamp_min_(0);
  return y;
}
"""

_ext = load_inline(name="kopt_py_gemm_add_relu", cpp_sources=[_SRC], functions=["gemm_add_relu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return _ext.gemm_add_relu(x, self.gemm.weight, self.bias)
