# WRONG (level1_19_ReLU): forward raises (a shape check that rejects the problem's 2-d input).
# Expected: incorrect — the judge reports the exception, with no result.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.dim() != 4:
            raise RuntimeError("ModelNew expects an NCHW tensor")
        return torch.relu(x)
