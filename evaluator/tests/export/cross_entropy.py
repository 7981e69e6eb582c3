# Test problem (our own, KernelBench format): CrossEntropy with integer targets from torch.randint(0, 512, ...).
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)
batch_size = 64
num_classes = 512
def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]
def get_init_inputs():
    return []
