# WRONG (level1_1_Square_matrix_multiplication_): computes A^T @ B. Expected: incorrect.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.mm(A.t(), B)
