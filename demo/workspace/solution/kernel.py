# Demo candidate, KernelBench format: the same relu as kernel.cpp, written as models write kernels
# (class ModelNew with torch ops). kopt-bench judges it against model.py directly:
#   kopt-bench --ref model.py --solution solution/kernel.py
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
