#!/usr/bin/env python3
"""The older, Python way of evaluating a candidate (for comparison with kopt-bench only).

Loads the KernelBench-format reference in Python, builds the candidate with
torch.utils.cpp_extension.load (ninja; cached by the extension's own hash), checks 5 trials and
times 100 calls with time.perf_counter. Same candidate source as kopt-bench (kopt/op.h).
    python3 old_python_eval.py REF.py CANDIDATE.cpp BUILD_DIR
"""
import hashlib
import importlib.util
import os
import sys
import time

import torch
import torch.utils.cpp_extension as ext

ref_py, cand, build_dir = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ref", ref_py)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
torch.manual_seed(42)
model = mod.Model(*mod.get_init_inputs()).eval()
src = open(cand, "rb").read()
ns = "oldbench_" + hashlib.sha256(src).hexdigest()[:12]
os.makedirs(build_dir, exist_ok=True)
ext.load(name=ns, sources=[cand], extra_cflags=["-O2", f"-DKOPT_NS={ns}", "-I" + os.path.join(here, "..", "include")],
         build_directory=build_dir, is_python_module=False, verbose=False)
op = getattr(torch.ops, ns).forward
params = [p.detach() for p in model.parameters()]
ok = True
with torch.no_grad():
    for t in range(5):
        x = mod.get_inputs()
        ok &= torch.allclose(model(*x), op(*x, *params), atol=1e-4, rtol=1e-4)
    x = mod.get_inputs()
    def timeit(f):
        for _ in range(10):
            f()
        ts = []
        for _ in range(100):
            t0 = time.perf_counter(); f(); ts.append((time.perf_counter() - t0) * 1e3)
        ts.sort()
        return ts[len(ts) // 2]
    r = timeit(lambda: model(*x))
    c = timeit(lambda: op(*x, *params))
print(f"CORRECT: {ok}\nRUNTIME: {c:.4f}\nREF_RUNTIME: {r:.4f}\nSPEEDUP: {r / c:.4f}x")
