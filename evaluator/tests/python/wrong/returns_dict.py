# WRONG (level1_19_ReLU): forward returns a dict {"out": tensor}, not a tensor.
# Expected: incorrect — the output is not a tensor or a tuple of tensors.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {"out": torch.relu(x)}
