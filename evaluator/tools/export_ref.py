#!/usr/bin/env python3
"""Export a KernelBench-format reference (class Model, get_inputs(), get_init_inputs()) for kopt-bench.

    python3 export_ref.py model.py -o ref.pt -s inputs.json [--seed 42] [--precision float32]

Writes a TorchScript module (torch.jit.script, falling back to torch.jit.trace; the spec records
which) and an input spec describing get_inputs(): shapes, dtypes, a distribution per tensor,
scalars, the reference's parameter names (passed to the candidate after the inputs), the seed,
the torch version and the SHA-256 of the Python source. Run it with the same torch line as the
LibTorch that kopt-bench links (a .pt from another major version may not load).
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import sys


def describe_tensor(name, x):
    import torch
    d = {"name": name, "shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
    if x.is_floating_point():
        # Keep the flavour of the example data: uniform [0,1) stays uniform, otherwise normal.
        if x.numel() > 1 and float(x.min()) >= 0.0 and float(x.max()) <= 1.0:
            d["dist"] = {"kind": "uniform", "low": 0.0, "high": 1.0}
        else:
            std = float(x.std()) if x.numel() > 1 else 1.0
            mean = float(x.mean()) if x.numel() > 0 else 0.0
            if not math.isfinite(std) or std <= 0:
                std = 1.0
            if abs(mean) < 0.05 and abs(std - 1.0) < 0.05:
                mean, std = 0.0, 1.0  # torch.randn example data: standard normal
            d["dist"] = {"kind": "normal", "mean": round(mean, 6), "std": round(std, 6)}
    elif x.dtype == torch.bool:
        d["dist"] = {"kind": "randint", "low": 0, "high": 2}
    else:
        lo = int(x.min()) if x.numel() else 0
        hi = int(x.max()) + 1 if x.numel() else 1
        d["dist"] = {"kind": "randint", "low": lo, "high": max(hi, lo + 1)}
    return d


def describe_scalar(name, v):
    if isinstance(v, bool):
        return {"name": name, "scalar": v, "type": "bool"}
    if isinstance(v, int):
        return {"name": name, "scalar": v, "type": "int"}
    if isinstance(v, float):
        return {"name": name, "scalar": v, "type": "float"}
    raise SystemExit(f"export_ref: input {name} is a {type(v).__name__}; only tensors, ints, floats and bools are supported")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="KernelBench-format Python file")
    ap.add_argument("-o", "--out", default="ref.pt", help="TorchScript output (default ref.pt)")
    ap.add_argument("-s", "--spec", default="inputs.json", help="input spec output (default inputs.json)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--precision", choices=["float32", "float16", "bfloat16"], default=None)
    ap.add_argument("--trace", action="store_true", help="skip torch.jit.script and trace directly")
    a = ap.parse_args(argv)

    import torch

    src_bytes = open(a.model, "rb").read()
    spec_ = importlib.util.spec_from_file_location("kopt_ref_model", a.model)
    mod = importlib.util.module_from_spec(spec_)
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.model)))
    spec_.loader.exec_module(mod)
    for need in ("Model", "get_inputs"):
        if not hasattr(mod, need):
            raise SystemExit(f"export_ref: {a.model} has no {need} (KernelBench format: class Model, get_inputs(), get_init_inputs())")

    torch.manual_seed(a.seed)
    init = list(mod.get_init_inputs()) if hasattr(mod, "get_init_inputs") else []
    torch.manual_seed(a.seed)
    model = mod.Model(*init).eval()
    torch.manual_seed(a.seed)
    example = list(mod.get_inputs())

    how, why = "script", ""
    ts = None
    if not a.trace:
        try:
            ts = torch.jit.script(model)
        except Exception as e:  # scripting rejects some Python; tracing freezes control flow
            why = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
    if ts is None:
        how = "trace"
        with torch.no_grad():
            ts = torch.jit.trace(model, tuple(example), check_trace=False)
    ts.save(a.out)

    inputs = []
    for i, x in enumerate(example):
        name = f"in{i}"
        inputs.append(describe_tensor(name, x) if isinstance(x, torch.Tensor) else describe_scalar(name, x))
    spec = {
        "inputs": inputs,
        "params": [n for n, _ in ts.named_parameters()],
        "init_args": [a_ if not isinstance(a_, torch.Tensor) else {"tensor": list(a_.shape)} for a_ in init],
        "seed": a.seed,
        "export": how,
        "torch": torch.__version__,
        "ref_source_sha256": hashlib.sha256(src_bytes).hexdigest(),
    }
    if why:
        spec["export_note"] = "torch.jit.script failed, traced instead: " + why
    if a.precision:
        spec["precision"] = a.precision
    with open(a.spec, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    print(f"exported {a.model} -> {a.out} ({how}), spec -> {a.spec}; params: {spec['params']}")
    if why:
        print(f"note: scripting failed ({why}); the trace fixes control flow to the example inputs")


if __name__ == "__main__":
    main()
