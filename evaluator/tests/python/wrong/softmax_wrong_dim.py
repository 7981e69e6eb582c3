# WRONG (level1_23_Softmax): softmax over dim 0 (the batch) instead of dim 1. Expected: incorrect.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=0)
