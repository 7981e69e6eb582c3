# Test problem (our own, KernelBench format): conv + bias parameter + BatchNorm in training mode.
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, c, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(c, 8, 3)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.bn = nn.BatchNorm2d(8)
    def forward(self, x):
        return self.bn(self.conv(x) + self.bias)
def get_inputs():
    return [torch.randn(4, 3, 8, 8)]
def get_init_inputs():
    return [3, (8, 1, 1)]
