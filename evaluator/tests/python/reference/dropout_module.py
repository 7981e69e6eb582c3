# REFERENCE, NOT A SOLUTION (KernelBench format): nn.Dropout(p=0.5) in a Model left in training mode, as
# constructed (KernelBench never calls .eval()): two calls on the same input differ.
# Expected: input_error — a reference whose output is random cannot judge anything.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.dropout = nn.Dropout(p=p)

    def forward(self, x):
        return self.dropout(x) * 2.0


batch_size = 16
dim = 256
p = 0.5


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [p]
