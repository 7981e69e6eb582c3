# Device check problem (KernelBench format): relu over one 8192x8192 float32 tensor (256 MiB), large
# enough that one call is device-bound. get_inputs returns CPU tensors as KernelBench does; kopt-bench
# reads only their shapes, dtypes and distribution (standard normal) and draws the inputs on the device.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


rows, cols = 8192, 8192


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
