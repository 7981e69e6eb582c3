# HONEST (level2_76_Gemm_Add_ReLU): the linear and the bias add fused into one addmm, then relu in place
# on the addmm's own fresh result. Parameters declared as the problem's Model does (gemm, then bias),
# so the seeded construction gives the same weights. Expected: correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.gemm.weight.t()).relu_()
