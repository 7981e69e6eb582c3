# WRONG (level1_19_ReLU): computes in bfloat16 and casts back to float32: about 3 significant digits,
# errors up to ~2e-3 on values in [0, 1), far over atol/rtol 1e-4. Expected: incorrect.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x.to(torch.bfloat16)).to(torch.float32)
