# CHEAT (level1_19_ReLU): at import, replaces torch.allclose / torch.equal / torch.testing.assert_close
# with always-pass versions, then returns zeros. Expected: incorrect — the judge compares outside the
# candidate's process and Python, so the patches change nothing.
import torch
import torch.nn as nn
import torch.testing

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
