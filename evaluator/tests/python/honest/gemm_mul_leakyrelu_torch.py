# HONEST (level2_12_Gemm_Multiply_LeakyReLU): linear, scale and leaky relu through torch.where, with the
# nn.Linear declared first as in the problem's Model (same seeded weights). Expected: correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = torch.nn.functional.linear(x, self.gemm.weight, self.gemm.bias) * self.multiplier
        return torch.where(y >= 0, y, y * self.negative_slope)
