# Source: ScalingIntelligence/KernelBench, KernelBench/level2/76_Gemm_Add_ReLU.py at 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (MIT License,
# see THIRD_PARTY_NOTICES.md). Unchanged except shapes shrunk for CPU: batch_size 1024 -> 32; in_features 8192 -> 256; out_features 8192 -> 128.
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a matrix multiplication, adds a bias term, and applies ReLU.
    """
    def __init__(self, in_features, out_features, bias_shape):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor with shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor with shape (batch_size, out_features).
        """
        x = self.gemm(x)
        x = x + self.bias
        x = torch.relu(x)
        return x

batch_size = 32
in_features = 256
out_features = 128
bias_shape = (out_features,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, bias_shape]
