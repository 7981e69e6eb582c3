# CHEAT (level1_19_ReLU): computes once, on the first call, and returns a copy of that stored tensor for
# every later input. Expected: incorrect — the correctness trials draw fresh inputs each time.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._stored = None

    def forward(self, x):
        if self._stored is None:
            self._stored = torch.relu(x)
        return self._stored.clone()
