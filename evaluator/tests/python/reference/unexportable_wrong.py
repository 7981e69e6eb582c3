# Wrong solution for reference/unexportable_problem.py: forgets the constructor's offset. Expected:
# incorrect, judged against the Python-run reference like any other.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, offset):
        super().__init__()
        self.offset = offset

    def forward(self, x, scale):
        return torch.clamp_min(x, 0.0) * scale
