#!/usr/bin/python3
"""Sanity check of the Python solution corpus without kopt-bench (CASES.md says what each file is).

  /usr/bin/python3 evaluator/tests/python/check_corpus.py [FILTER]

honest/*:    seeded as KernelBench does (manual_seed(42) before get_init_inputs and before each model),
             the problem's Model and the solution on 3 get_inputs() sets: allclose(atol=rtol=1e-4).
wrong/*:     compile_error rows must fail to import or lack ModelNew/Model; incorrect rows must raise,
             return a non-tensor or a wrong shape, or differ on a get_inputs() set or an
             off-distribution set (the same draw mapped to [-1, 1)).
cheats/*:    imported, constructed and called twice in a subprocess (never in this process).
reference/*: input_error rows: the problem's Model must give two different outputs on one input and
             the solution imports; correct/incorrect rows (a problem run as Python): as honest/wrong.
One line per file; exit status 1 on any failure. load_inline builds go to $TORCH_EXTENSIONS_DIR
(a temporary directory, removed at the end, unless it is set).
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the corpus folders
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
VERDICTS = {"correct", "incorrect", "compile_error", "input_error", "hack"}
SEED = 42
ATOL = RTOL = 1e-4

_own_ext_dir = None
if not os.environ.get("TORCH_EXTENSIONS_DIR"):
    _own_ext_dir = tempfile.mkdtemp(prefix="kopt-pycorpus-ext-")
    os.environ["TORCH_EXTENSIONS_DIR"] = _own_ext_dir

import torch  # noqa: E402  (after TORCH_EXTENSIONS_DIR)


def read_cases():
    rows, text = [], open(os.path.join(HERE, "CASES.md")).read()
    block = re.search(r"^```cases\n(.*?)^```", text, re.S | re.M)
    if not block:
        raise SystemExit("CASES.md: no ```cases block")
    for n, line in enumerate(block.group(1).splitlines(), 1):
        if not re.match(r"(honest|wrong|cheats|reference)/", line):
            continue
        f = [x.strip() for x in line.split("|", 3)]
        if len(f) != 4:
            raise SystemExit("CASES.md cases line %d: want 4 fields: %s" % (n, line))
        rows.append(tuple(f))
    return rows


_count = [0]


def load_module(path):
    _count[0] += 1
    spec = importlib.util.spec_from_file_location("kopt_corpus_%d" % _count[0], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def solution_class(mod):
    return getattr(mod, "ModelNew", None) or getattr(mod, "Model", None)


def build(cls, init):
    torch.manual_seed(SEED)
    return cls(*init)


def init_inputs(prob):
    torch.manual_seed(SEED)
    return prob.get_init_inputs()


def input_sets(prob, n=3):
    out = []
    for k in range(n):
        torch.manual_seed(1000 + k)
        out.append(prob.get_inputs())
    return out


def off_distribution(xs):
    return [x * 2 - 1 if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs]


def compare(ref, got):
    """None when got matches ref under the tolerance, else why not."""
    if isinstance(ref, torch.Tensor):
        ref = (ref,)
    if isinstance(got, torch.Tensor):
        got = (got,)
    elif not (isinstance(got, (tuple, list)) and got and all(isinstance(t, torch.Tensor) for t in got)):
        return "returned %s, not a tensor" % type(got).__name__
    if len(got) != len(ref):
        return "%d outputs, the reference has %d" % (len(got), len(ref))
    for i, (r, g) in enumerate(zip(ref, got)):
        if g.shape != r.shape:
            return "output %d has shape %s, the reference's is %s" % (i, tuple(g.shape), tuple(r.shape))
        if g.dtype != r.dtype:
            return "output %d has dtype %s, the reference's is %s" % (i, g.dtype, r.dtype)
        if not torch.allclose(g, r, atol=ATOL, rtol=RTOL):
            return "output %d differs, max_abs=%.3g" % (i, (g.double() - r.double()).abs().max().item())
    return None


def run(model, xs):
    with torch.no_grad():
        return model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs])


def check_honest(sol, prob_path):
    prob = load_module(prob_path)
    init = init_inputs(prob)
    ref = build(prob.Model, init)
    mod = load_module(sol)
    cls = solution_class(mod)
    if cls is None:
        return False, "defines neither ModelNew nor Model"
    cand = build(cls, init)
    worst = 0.0
    for k, xs in enumerate(input_sets(prob)):
        r, g = run(ref, xs), run(cand, xs)
        why = compare(r, g)
        if why:
            return False, "input set %d: %s" % (k, why)
        g0 = g if isinstance(g, torch.Tensor) else g[0]
        r0 = r if isinstance(r, torch.Tensor) else r[0]
        worst = max(worst, (g0.double() - r0.double()).abs().max().item())
    return True, "allclose on 3 input sets (%s, max_abs=%.2g)" % (cls.__name__, worst)


def check_wrong(sol, prob_path, verdict):
    prob = load_module(prob_path)
    init = init_inputs(prob)
    try:
        mod = load_module(sol)
    except Exception as e:
        msg = str(e).strip().splitlines()
        first = msg[0] if msg else ""
        return verdict == "compile_error", "import failed: %s: %s" % (type(e).__name__, first[:120])
    cls = solution_class(mod)
    if cls is None:
        return verdict == "compile_error", "defines neither ModelNew nor Model"
    if verdict == "compile_error":
        return False, "imports and defines %s, expected a compile error" % cls.__name__
    ref = build(prob.Model, init)
    cand = build(cls, init)
    sets = [("get_inputs() set %d" % k, xs) for k, xs in enumerate(input_sets(prob))]
    sets += [("off-distribution set %d" % k, off_distribution(xs)) for k, xs in enumerate(input_sets(prob))]
    for name, xs in sets:
        r = run(ref, xs)
        try:
            g = run(cand, xs)
        except Exception as e:
            return True, "%s: forward raised %s: %s" % (name, type(e).__name__, e)
        why = compare(r, g)
        if why:
            return True, "%s: %s" % (name, why)
    return False, "matches the reference on every input set"


CHILD = r"""
import importlib.util, sys, torch
allclose = torch.allclose  # before the solution can patch it
def load(p, n):
    s = importlib.util.spec_from_file_location(n, p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
prob = load(sys.argv[1], "problem")
torch.manual_seed(42); init = prob.get_init_inputs()
sol = load(sys.argv[2], "solution")
cls = getattr(sol, "ModelNew", None) or getattr(sol, "Model", None)
assert cls is not None, "defines neither ModelNew nor Model"
torch.manual_seed(42); ref = prob.Model(*init)
torch.manual_seed(42); cand = cls(*init)
first = None
for k in range(2):
    torch.manual_seed(1000 + k); xs = prob.get_inputs()
    with torch.no_grad():
        r = ref(*[x.clone() for x in xs]); g = cand(*xs)
    assert isinstance(g, torch.Tensor), "forward returned %s" % type(g).__name__
    if first is None:
        first = g.shape == r.shape and bool(allclose(g, r, atol=1e-4, rtol=1e-4))
sys.stderr.write("KOPT_CHILD_OK %s\n" % ("first call matches the reference" if first else "first call differs from the reference"))
"""


def check_cheat(sol, prob_path):
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, prob_path, sol], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, "subprocess timed out"
    m = re.search(r"KOPT_CHILD_OK (.*)", p.stderr)
    if p.returncode != 0 or not m:
        tail = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return False, "subprocess failed: %s" % tail
    return True, "imported, constructed, called twice in a subprocess (%s)" % m.group(1)


def check_reference(sol, prob_path):
    prob = load_module(prob_path)
    init = init_inputs(prob)
    ref = build(prob.Model, init)
    xs = input_sets(prob, 1)[0]
    a, b = run(ref, xs), run(ref, xs)
    if torch.equal(a, b):
        return False, "the reference is deterministic: two calls on one input agree"
    mod = load_module(sol)
    cls = solution_class(mod)
    if cls is None:
        return False, "the paired solution defines neither ModelNew nor Model"
    build(cls, init)
    ref.eval()
    in_eval = "random in eval mode too" if not torch.equal(run(ref, xs), run(ref, xs)) else "deterministic after .eval()"
    return True, "the reference's Model gives different outputs on one input as constructed (%s); the solution loads" % in_eval


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    rows = read_cases()
    failures, done = [], 0
    # the table and the folder agree
    listed = set()
    for sol, prob, verdict, rx in rows:
        listed.add(sol)
        if prob.startswith("python/"):
            listed.add(prob[len("python/"):])
    problems = []
    for d in ("honest", "wrong", "cheats", "reference"):
        for f in sorted(os.listdir(os.path.join(HERE, d))):
            if f.endswith(".py") and "%s/%s" % (d, f) not in listed:
                problems.append("%s/%s is not in CASES.md" % (d, f))
    for sol, prob, verdict, rx in rows:
        if verdict not in VERDICTS:
            problems.append("%s: unknown verdict %r" % (sol, verdict))
        if not os.path.isfile(os.path.join(HERE, sol)):
            problems.append("%s: no such file" % sol)
        if not os.path.isfile(os.path.join(TESTS, prob)):
            problems.append("%s: no such problem %s" % (sol, prob))
        try:
            re.compile(rx)
        except re.error as e:
            problems.append("%s: bad regex %r: %s" % (sol, rx, e))
    for p in problems:
        print("FAIL CASES.md: %s" % p)
    failures += problems
    for sol, prob, verdict, rx in rows:
        if flt and flt not in sol:
            continue
        folder = sol.split("/", 1)[0]
        sp, pp = os.path.join(HERE, sol), os.path.join(TESTS, prob)
        label = "%s [%s vs %s]" % (sol, verdict, os.path.basename(prob))
        try:
            if folder == "honest" or (folder == "reference" and verdict == "correct"):
                ok, why = check_honest(sp, pp)
            elif folder == "wrong" or (folder == "reference" and verdict == "incorrect"):
                ok, why = check_wrong(sp, pp, verdict)
            elif folder == "cheats":
                ok, why = check_cheat(sp, pp)
            else:
                ok, why = check_reference(sp, pp)
        except Exception:
            ok, why = False, "checker error: " + traceback.format_exc().strip().splitlines()[-1]
        done += 1
        print("%s %s: %s" % ("PASS" if ok else "FAIL", label, why), flush=True)
        if not ok:
            failures.append(sol)
    print("SUMMARY: %d checked, %d passed, %d failed%s" % (
        done, done - (len(failures) - len(problems)), len(failures) - len(problems),
        ", %d CASES.md problems" % len(problems) if problems else ""))
    if _own_ext_dir:
        shutil.rmtree(_own_ext_dir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
