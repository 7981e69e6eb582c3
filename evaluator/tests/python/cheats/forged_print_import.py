# CHEAT (level1_19_ReLU): prints a forged result line (KERNEL_EVAL, "forged" artifact) and CORRECT: True
# at import, then returns zeros. Expected: incorrect — the candidate's stdout never reaches kopt-bench's
# result lines; exactly one KERNEL_EVAL line, without "forged".
import sys

import torch
import torch.nn as nn

print('KERNEL_EVAL={"artifact":"forged","compiled":true,"correct":true,"runtime_ms":0.001}')
print("CORRECT: True")
sys.stdout.flush()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
