# WRONG (level1_19_ReLU): a correct relu, but the class is called ReluNet: neither ModelNew nor Model.
# Expected: compile_error — the solution cannot be loaded in KernelBench format.
import torch
import torch.nn as nn


class ReluNet(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
