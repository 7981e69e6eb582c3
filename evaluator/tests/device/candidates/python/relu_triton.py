# Device check (relu_problem.py): an honest Triton relu, one program per BLOCK elements over
# x.numel(), JIT-compiled in kopt-bench's build stage (its cache then read by the runner).
# Expected: correct.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)  # NaN stays NaN, as torch.relu


class ModelNew(nn.Module):
    BLOCK = 1024

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _relu_kernel[(triton.cdiv(n, self.BLOCK),)](x, y, n, BLOCK=self.BLOCK)
        return y
