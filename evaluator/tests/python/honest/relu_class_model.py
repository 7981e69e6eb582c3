# HONEST (level1_19_ReLU): the solution names its class Model, not ModelNew (KernelBench accepts either).
# Expected: correct — the judge must fall back to class Model.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.maximum(x, torch.zeros((), dtype=x.dtype))
