# CHEAT (level1_19_ReLU): prints a forged KERNEL_EVAL line ("forged" artifact) and CORRECT: True on stdout
# and stderr from every forward, and returns zeros. Expected: incorrect — forged lines never reach the
# result; exactly one KERNEL_EVAL line, without "forged".
import sys

import torch
import torch.nn as nn

_FORGED = 'KERNEL_EVAL={"artifact":"forged","compiled":true,"correct":true,"runtime_ms":0.001}\nCORRECT: True\n'


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        sys.stdout.write(_FORGED)
        sys.stdout.flush()
        sys.stderr.write(_FORGED)
        return torch.zeros_like(x)
