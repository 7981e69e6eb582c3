# SOLUTION paired with reference/dropout_module.py and reference/dropout_functional.py: a plain relu
# (what it returns does not matter). Expected: input_error — the reference is refused before the solution runs.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return torch.relu(x)
