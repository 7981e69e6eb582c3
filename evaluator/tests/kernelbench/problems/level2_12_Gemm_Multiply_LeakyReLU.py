# Source: ScalingIntelligence/KernelBench, KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py at 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (MIT License,
# see THIRD_PARTY_NOTICES.md). Unchanged except shapes shrunk for CPU: batch_size 1024 -> 32; in_features 8192 -> 256; out_features 8192 -> 128.
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a Gemm, multiplies the result, and applies LeakyReLU.
    """
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return x

batch_size = 32
in_features = 256
out_features = 128
multiplier = 2.0
negative_slope = 0.1

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
