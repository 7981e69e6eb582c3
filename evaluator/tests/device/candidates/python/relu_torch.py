# Device check (relu_problem.py): an honest ModelNew made of torch ops only (torch.relu on the device).
# Expected: correct.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
