# HONEST (level1_19_ReLU): relu as clamp(min=0), a plain torch-op rewrite.
# Expected: correct — same values as torch.relu for every input.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp(x, min=0.0)
