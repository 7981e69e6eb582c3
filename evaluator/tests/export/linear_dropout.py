# Test problem (our own, KernelBench format): Linear + Dropout (random in training mode).
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 8)
        self.d = nn.Dropout(0.2)
    def forward(self, x):
        return self.d(self.lin(x))
def get_inputs():
    return [torch.randn(4, 16)]
def get_init_inputs():
    return []
