# REFERENCE, NOT A SOLUTION (KernelBench format): dropout forced on (F.dropout(training=True)), random in
# training and in eval mode alike. Expected: input_error — refused as a reference even if the judge calls .eval().
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return torch.nn.functional.dropout(torch.relu(x), p=self.p, training=True)


batch_size = 16
dim = 256
p = 0.5


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [p]
