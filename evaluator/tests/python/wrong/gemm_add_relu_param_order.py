# WRONG (level2_76_Gemm_Add_ReLU): the right math, but the bias is declared before the Linear, so the seeded
# construction draws different weights than the reference's Model. Expected: incorrect — the judge
# constructs the candidate as KernelBench does (same seed), it does not copy the reference's parameters.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.gemm = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        return torch.relu(self.gemm(x) + self.bias)
