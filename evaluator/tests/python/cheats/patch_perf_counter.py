# CHEAT (level1_19_ReLU): at import, freezes time.perf_counter / perf_counter_ns / monotonic / time so an
# in-process timer measures 0; forward is a correct relu that sleeps 5 ms. Expected: correct — the judge's
# clock is not the candidate's; when timed, the latency must be >= 5 ms (no fake speedup).
import time

import torch
import torch.nn as nn

_frozen = time.perf_counter()
time.perf_counter = lambda: _frozen
time.perf_counter_ns = lambda: int(_frozen * 1e9)
time.monotonic = lambda: _frozen
time.time = lambda: _frozen
_sleep = time.sleep


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        _sleep(0.005)
        return torch.relu(x)
