#!/usr/bin/env python3
"""Export a KernelBench-format reference (class Model, get_inputs(), get_init_inputs()) for kopt-bench.

    evaluator/tools/export-ref model.py -o ref.pt -s inputs.json [--mode train|eval] [--seed 42]

(`export-ref` picks a Python whose torch matches the LibTorch kopt-bench links; running this file
with such a Python directly works too.)

Faithful to the problem as KernelBench defines it:
- mode: the module is kept in the mode it has after construction (training mode, as KernelBench
  runs it: BatchNorm uses batch statistics). `--mode eval` switches to eval mode on request. The
  spec records `mode`; kopt-bench puts the module in that mode.
- a random reference (two runs on identical inputs differ, e.g. Dropout in training mode) is
  refused: a comparison against it would be luck.
- integer inputs: the range and dtype are read from get_inputs()'s own calls
  (torch.randint(low, high, ...)), checked against several draws; when they cannot be known the
  export stops and asks for them (--int-range NAME=LOW:HIGH).
- parameters are passed to the candidate after the inputs, in declaration order: the order in
  which the constructor assigned parameters and submodules, recursively (a submodule's
  parameters where the submodule was assigned). The expected candidate signature is printed.
"""
import argparse
import ast
import hashlib
import importlib.util
import inspect
import json
import math
import os
import sys

N_DRAWS = 8  # draws of get_inputs() looked at for ranges, dtypes and shapes


def dtype_name(dt):
    return str(dt).replace("torch.", "")


# ---------- declaration order ----------
class DeclarationOrder:
    """Records the order in which parameters and submodules are assigned during construction."""

    def __init__(self):
        self.seq = {}  # (id(module), name) -> counter
        self.n = 0

    def __enter__(self):
        import torch.nn as nn
        self.nn = nn
        self.orig_setattr = nn.Module.__setattr__
        self.orig_regp = nn.Module.register_parameter
        self.orig_add = nn.Module.add_module
        rec = self

        def note(mod, name):
            key = (id(mod), name)
            if key not in rec.seq:
                rec.seq[key] = rec.n
                rec.n += 1

        def setattr_(mod, name, value):
            if isinstance(value, (nn.Parameter, nn.Module)):
                note(mod, name)
            rec.orig_setattr(mod, name, value)

        def regp(mod, name, param):
            note(mod, name)
            rec.orig_regp(mod, name, param)

        def add(mod, name, module):
            note(mod, name)
            rec.orig_add(mod, name, module)

        nn.Module.__setattr__ = setattr_
        nn.Module.register_parameter = regp
        nn.Module.add_module = add
        return self

    def __exit__(self, *exc):
        self.nn.Module.__setattr__ = self.orig_setattr
        self.nn.Module.register_parameter = self.orig_regp
        self.nn.Module.add_module = self.orig_add

    def params(self, module, prefix=""):
        """Parameter names in declaration order, recursively; shared parameters once."""
        items = [("p", n, v) for n, v in module._parameters.items() if v is not None]
        items += [("m", n, v) for n, v in module._modules.items() if v is not None]
        # Unrecorded entries (assigned some other way) keep nn.Module's own order, after the rest.
        order = {id(x): i for i, x in enumerate(items)}
        items.sort(key=lambda x: (self.seq.get((id(module), x[1]), 1 << 60), order[id(x)]))
        out = []
        for kind, name, v in items:
            full = prefix + name
            if kind == "p":
                out.append((full, v))
            else:
                out.extend(self.params(v, full + "."))
        return out


# ---------- integer ranges from get_inputs()'s source ----------
def randint_calls(fn):
    """[(low, high, dtype or None)] for each torch.randint call in fn's source, in source order;
    None where an argument is not a constant the module defines."""
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(src.lstrip() if src[:1].isspace() else src)
    except SyntaxError:
        return None
    g = fn.__globals__

    def value(node):
        try:
            return eval(compile(ast.Expression(node), "<arg>", "eval"), dict(g))
        except Exception:
            return None

    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("randint", "randint_like"):
            args = node.args
            kw = {k.arg: k.value for k in node.keywords}
            if node.func.attr == "randint_like":
                args = args[1:]
            low, high = 0, None
            ints = [a for a in args if not isinstance(a, (ast.Tuple, ast.List))]
            # torch.randint(high, size) / torch.randint(low, high, size)
            if len(args) >= 3:
                low, high = value(args[0]), value(args[1])
            elif len(args) == 2:
                high = value(args[0])
            elif len(ints) == 1:
                high = value(ints[0])
            if "low" in kw:
                low = value(kw["low"])
            if "high" in kw:
                high = value(kw["high"])
            dt = value(kw["dtype"]) if "dtype" in kw else None
            calls.append((node.lineno, node.col_offset, low, high, dt))
    calls.sort()
    return [(lo, hi, dt) for _, _, lo, hi, dt in calls]


def describe_float(x):
    if x.numel() > 1 and float(x.min()) >= 0.0 and float(x.max()) <= 1.0:
        return {"kind": "uniform", "low": 0.0, "high": 1.0}
    std = float(x.std()) if x.numel() > 1 else 1.0
    mean = float(x.mean()) if x.numel() > 0 else 0.0
    if not math.isfinite(std) or std <= 0:
        std = 1.0
    if abs(mean) < 0.05 and abs(std - 1.0) < 0.05:
        mean, std = 0.0, 1.0  # torch.randn example data: standard normal
    return {"kind": "normal", "mean": round(mean, 6), "std": round(std, 6)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="KernelBench-format Python file")
    ap.add_argument("-o", "--out", default="ref.pt", help="TorchScript output (default ref.pt)")
    ap.add_argument("-s", "--spec", default="inputs.json", help="input spec output (default inputs.json)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--mode", choices=["train", "eval"], default=None,
                    help="module mode (default: as constructed, i.e. training mode as KernelBench runs it)")
    ap.add_argument("--int-range", action="append", default=[], metavar="NAME=LOW:HIGH",
                    help="range [LOW, HIGH) of an integer input when get_inputs() does not say it")
    ap.add_argument("--precision", choices=["float32", "float16", "bfloat16"], default=None)
    ap.add_argument("--trace", action="store_true", help="skip torch.jit.script and trace directly")
    ap.add_argument("--python-fallback", action="store_true",
                    help="when neither scripting nor tracing works, write the spec alone with export: python "
                         "(kopt-bench then runs the reference as Python) instead of failing")
    a = ap.parse_args(argv)

    try:
        import torch
    except ImportError:
        raise SystemExit(f"export_ref: {sys.executable} has no torch. Use the Python whose torch matches the LibTorch "
                         "kopt-bench links (Debian: /usr/bin/python3 with python3-torch), e.g. run "
                         "evaluator/tools/export-ref, which finds it.")

    def fail(msg):
        raise SystemExit("export_ref: " + msg)

    user_ranges = {}
    for r in a.int_range:
        try:
            n, rng = r.split("=", 1)
            lo, hi = rng.split(":", 1)
            user_ranges[n] = (int(lo), int(hi))
        except ValueError:
            fail(f"--int-range {r!r}: expected NAME=LOW:HIGH, e.g. in1=0:512")

    src_bytes = open(a.model, "rb").read()
    spec_ = importlib.util.spec_from_file_location("kopt_ref_model", a.model)
    mod = importlib.util.module_from_spec(spec_)
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.model)))
    spec_.loader.exec_module(mod)
    for need in ("Model", "get_inputs"):
        if not hasattr(mod, need):
            fail(f"{a.model} has no {need} (KernelBench format: class Model, get_inputs(), get_init_inputs())")

    torch.manual_seed(a.seed)
    init = list(mod.get_init_inputs()) if hasattr(mod, "get_init_inputs") else []
    torch.manual_seed(a.seed)
    with DeclarationOrder() as decl:
        model = mod.Model(*init)
    constructed = "train" if model.training else "eval"
    mode = a.mode or constructed
    model.train(mode == "train")
    draws = []
    for k in range(N_DRAWS):
        torch.manual_seed(a.seed + k)
        draws.append(list(mod.get_inputs()))
    example = draws[0]

    # A random reference cannot be judged: run it twice on identical inputs under different seeds.
    def run(seed):
        torch.manual_seed(seed)
        with torch.no_grad():
            out = model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in example])
        return out if isinstance(out, (tuple, list)) else (out,)

    def same_values(p, q):  # NaN where the other has NaN is the same value (sqrt of a negative is not random)
        if p.shape != q.shape or p.dtype != q.dtype:
            return False
        eq = p == q
        if p.is_floating_point() or p.is_complex():
            eq = eq | (torch.isnan(p) & torch.isnan(q))
        return bool(eq.all())

    o1, o2 = run(1), run(2)
    same = len(o1) == len(o2) and all(
        (not isinstance(p, torch.Tensor)) or same_values(p, q) for p, q in zip(o1, o2))
    if not same:
        random_mods = sorted({type(m).__name__ for m in model.modules()
                              if m.training and type(m).__name__.startswith(("Dropout", "AlphaDropout", "FeatureAlphaDropout", "RReLU"))})
        cause = (f"{', '.join(random_mods)} in training mode draws new random numbers on every call"
                 if random_mods else "the forward draws random numbers (torch.rand*, dropout, ...)")
        fail(f"the reference is random: two runs on identical inputs give different outputs ({cause}). "
             "A candidate cannot be compared against it. Export with --mode eval (Dropout becomes the identity), "
             "or remove the randomness from the problem.")

    # Parameters in declaration order.
    ordered = decl.params(model)
    seen, params = set(), []
    for n, p in ordered:
        if id(p) not in seen:
            seen.add(id(p))
            params.append((n, p))

    how, why = "script", ""
    ts = None
    if not a.trace:
        try:
            ts = torch.jit.script(model)
        except Exception as e:  # scripting rejects some Python; tracing freezes control flow
            why = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
    if ts is None:
        how = "trace"
        try:
            with torch.no_grad():
                ts = torch.jit.trace(model, tuple(example), check_trace=False)
        except Exception as e:  # e.g. scalar inputs, or outputs trace cannot hold
            if not a.python_fallback:
                raise
            trace_why = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
            how, why = "python", (why + "; " if why else "") + "torch.jit.trace failed: " + trace_why
    if ts is not None:
        ts.train(mode == "train")
        ts.save(a.out)
        ts_names = {n for n, _ in ts.named_parameters()}
        missing = [n for n, _ in params if n not in ts_names]
        if missing:
            fail(f"parameters {missing} are not in the exported module's named_parameters(); cannot pass them by name")

    # Inputs: shapes and dtypes must not vary between draws; integer ranges come from the source.
    calls = randint_calls(mod.get_inputs)
    int_tensors = [i for i, x in enumerate(example) if isinstance(x, torch.Tensor) and not x.is_floating_point()
                   and x.dtype != torch.bool]
    inputs, notes = [], []
    for i, x in enumerate(example):
        name = f"in{i}"
        if not isinstance(x, torch.Tensor):
            if isinstance(x, bool):
                inputs.append({"name": name, "scalar": x, "type": "bool"})
            elif isinstance(x, int):
                inputs.append({"name": name, "scalar": x, "type": "int"})
            elif isinstance(x, float):
                inputs.append({"name": name, "scalar": x, "type": "float"})
            else:
                fail(f"input {name} is a {type(x).__name__}; only tensors, ints, floats and bools are supported")
            if any(d[i] != x for d in draws):
                fail(f"scalar input {name} changes between calls of get_inputs(); the spec cannot say that")
            continue
        for d in draws:
            if not isinstance(d[i], torch.Tensor) or d[i].shape != x.shape or d[i].dtype != x.dtype:
                fail(f"input {name} changes shape or dtype between calls of get_inputs()")
        e = {"name": name, "shape": list(x.shape), "dtype": dtype_name(x.dtype)}
        if x.is_floating_point():
            e["dist"] = describe_float(x)
        elif x.dtype == torch.bool:
            e["dist"] = {"kind": "randint", "low": 0, "high": 2}
        else:
            lo_seen = min(int(d[i].min()) for d in draws if d[i].numel())  if x.numel() else 0
            hi_seen = max(int(d[i].max()) for d in draws if d[i].numel()) + 1 if x.numel() else 1
            rng, src = None, ""
            if name in user_ranges:
                rng, src = user_ranges[name], "--int-range"
            elif calls is not None and len(calls) == len(int_tensors):
                lo, hi, _ = calls[int_tensors.index(i)]
                if isinstance(lo, int) and isinstance(hi, int):
                    rng, src = (lo, hi), "get_inputs() source"
            if rng is None:
                fail(f"the range of integer input {name} ({e['dtype']}, values {lo_seen}..{hi_seen - 1} seen in "
                     f"{N_DRAWS} draws) cannot be read from get_inputs(); state it: --int-range {name}=LOW:HIGH "
                     "(HIGH exclusive), or write it in the spec's dist")
            if not (rng[0] <= lo_seen and hi_seen <= rng[1]) or rng[1] <= rng[0]:
                fail(f"integer input {name}: range [{rng[0]}, {rng[1]}) from {src} does not cover the drawn values "
                     f"{lo_seen}..{hi_seen - 1}; state it with --int-range {name}=LOW:HIGH")
            e["dist"] = {"kind": "randint", "low": rng[0], "high": rng[1]}
            notes.append(f"{name}: integers in [{rng[0]}, {rng[1]}) from {src}")
        inputs.append(e)

    spec = {
        "inputs": inputs,
        "params": [n for n, _ in params],
        "param_order": "declaration",
        "mode": mode,
        "init_args": [a_ if not isinstance(a_, torch.Tensor) else {"tensor": list(a_.shape)} for a_ in init],
        "seed": a.seed,
        "export": how,
        "torch": torch.__version__,
        "ref_source_sha256": hashlib.sha256(src_bytes).hexdigest(),
    }
    if how == "python":
        spec["export_note"] = "not exportable (" + why + "): kopt-bench runs the reference as Python"
    elif why:
        spec["export_note"] = "torch.jit.script failed, traced instead: " + why
    if a.precision:
        spec["precision"] = a.precision
    with open(a.spec, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")

    how_mode = "as constructed" if a.mode is None else ("requested" + ("" if mode == constructed else f", constructed {constructed}"))
    if how == "python":
        print(f"not exportable ({why}); spec -> {a.spec}: the reference runs as Python")
    else:
        print(f"exported {a.model} -> {a.out} ({how}), spec -> {a.spec}")
    print(f"mode: {mode} ({how_mode})")
    for n in notes:
        print("range: " + n)
    prec = a.precision or "float32"
    print("candidate signature (inputs, then parameters in declaration order):")
    for e in inputs:
        if "scalar" in e:
            print(f"  {e['name']}: {e['type']} scalar")
        else:
            dt = prec if e["dtype"] in ("float32", "float16", "bfloat16", "float64") else e["dtype"]
            print(f"  {e['name']}: Tensor {dt} {e['shape']}")
    for n, p in params:
        print(f"  {n}: Tensor {prec} {list(p.shape)}")
    if why and how == "trace":
        print(f"note: scripting failed ({why}); the trace fixes control flow to the example inputs")


if __name__ == "__main__":
    main()
