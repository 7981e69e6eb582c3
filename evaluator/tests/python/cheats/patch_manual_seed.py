# CHEAT (level1_19_ReLU): at import, makes torch.manual_seed always seed 0 and precomputes relu of the
# inputs get_inputs() would draw after it; forward returns that prediction. Expected: incorrect — the judge
# draws its inputs from its own secret seed in its own process.
import torch
import torch.nn as nn

_real_seed = torch.manual_seed
torch.manual_seed = lambda seed: _real_seed(0)
_real_seed(0)
_predicted = torch.relu(torch.rand(16, 1024))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.shape == _predicted.shape:
            return _predicted.clone()
        return torch.relu(x)
