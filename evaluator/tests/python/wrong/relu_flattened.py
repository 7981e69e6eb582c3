# WRONG (level1_19_ReLU): right values, wrong shape (returns the flattened 1-d tensor).
# Expected: incorrect — the output shape differs from the reference's.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x).flatten()
