# Source: ScalingIntelligence/KernelBench, KernelBench/level2/66_Matmul_Dropout_Softmax.py at 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (MIT License,
# see THIRD_PARTY_NOTICES.md). Unchanged except shapes shrunk for CPU: batch_size 128 -> 32; in_features 16384 -> 1024; out_features 16384 -> 256.
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A model that performs matrix multiplication, applies dropout, and then applies softmax.
    """
    def __init__(self, in_features, out_features, dropout_p):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.matmul(x)
        x = self.dropout(x)
        x = torch.softmax(x, dim=1)  # Softmax over features
        return x

batch_size = 32
in_features = 1024
out_features = 256
dropout_p = 0.2

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, dropout_p]
