# WRONG (level2_76_Gemm_Add_ReLU): forgets the bias add (the bias is randn, so outputs differ widely).
# Expected: incorrect.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.gemm(x))
