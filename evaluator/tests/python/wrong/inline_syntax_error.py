# WRONG (level1_19_ReLU): a load_inline C++ extension with a syntax error (missing semicolon, undeclared name).
# Expected: compile_error — the build fails, COMPILED: False, with the compiler's message.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor relu_broken(torch::Tensor x) {
  torch::Tensor y = torch::relu(x)
  return y + kopt_no_such_name;
}
"""

_ext = load_inline(name="kopt_py_relu_broken", cpp_sources=[_SRC], functions=["relu_broken"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.relu_broken(x)
