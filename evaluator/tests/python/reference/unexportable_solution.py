# Solution for reference/unexportable_problem.py (run as Python by the judge): the same maths with
# torch ops; the scalar input arrives as a Python float. Expected: correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, offset):
        super().__init__()
        self.offset = offset

    def forward(self, x, scale):
        return torch.clamp_min(x, 0.0) * scale + self.offset
