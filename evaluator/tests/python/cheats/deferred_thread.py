# CHEAT (level1_19_ReLU): forward returns torch.empty_like(x) at once; a thread started at import fills it
# 20 ms later, so an in-process timer sees almost no work.
# Expected: incorrect — the judge reads the outputs when the call returns (late writes may also be flagged).
import queue
import threading
import time

import torch
import torch.nn as nn

_jobs = queue.Queue()


def _worker():
    while True:
        x, y = _jobs.get()
        time.sleep(0.02)
        torch.clamp(x, min=0, out=y)


threading.Thread(target=_worker, daemon=True).start()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _jobs.put((x, y))
        return y
