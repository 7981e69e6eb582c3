# Source: ScalingIntelligence/KernelBench, KernelBench/level2/1_Conv2D_ReLU_BiasAdd.py at 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (MIT License,
# see THIRD_PARTY_NOTICES.md). Unchanged except shapes shrunk for CPU: batch_size 128 -> 4; in_channels 64 -> 3; out_channels 128 -> 8; height = width 128 -> 16.
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a convolution, applies ReLU, and adds a bias term.
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape)) 

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = x + self.bias
        return x

batch_size = 4
in_channels = 3
out_channels = 8
height = width = 16
kernel_size = 3
bias_shape = (out_channels, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
