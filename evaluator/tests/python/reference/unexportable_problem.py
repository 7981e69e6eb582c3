# A KernelBench-format problem that neither scripts (a lambda) nor traces (a float input): kopt-bench
# runs its Model as Python, in the judge, instead of refusing it (docs/evaluator.md, Python solutions).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, offset):
        super().__init__()
        self.offset = offset

    def forward(self, x, scale: float):
        shifted = lambda t: torch.relu(t) * scale + self.offset  # noqa: E731 - the lambda is the point
        return shifted(x)


def get_inputs():
    return [torch.randn(64, 64), 2.0]


def get_init_inputs():
    return [0.5]
