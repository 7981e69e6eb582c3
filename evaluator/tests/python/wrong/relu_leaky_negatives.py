# WRONG (level1_19_ReLU): lets negatives through as 0.01*x (a leaky relu). The problem's get_inputs() draws
# torch.rand (all >= 0), so only trials off the declared distribution (negative values) can see it.
# Expected: incorrect, on an off-distribution trial (a judge that only uses get_inputs() would accept it).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.where(x > 0, x, 0.01 * x)
