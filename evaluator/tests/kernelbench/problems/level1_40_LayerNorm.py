# Source: ScalingIntelligence/KernelBench, KernelBench/level1/40_LayerNorm.py at 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (MIT License,
# see THIRD_PARTY_NOTICES.md). Unchanged except shapes shrunk for CPU: batch_size 16 -> 4; features 64 -> 8; dim1 256 -> 16; dim2 256 -> 16.
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs Layer Normalization.
    """
    def __init__(self, normalized_shape: tuple):
        """
        Initializes the LayerNorm layer.

        Args:
            normalized_shape (tuple): Shape of the input tensor to be normalized.
        """
        super(Model, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Layer Normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (*, normalized_shape).

        Returns:
            torch.Tensor: Output tensor with Layer Normalization applied, same shape as input.
        """
        return self.ln(x)

batch_size = 4
features = 8
dim1 = 16
dim2 = 16
def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [(features, dim1, dim2)]
