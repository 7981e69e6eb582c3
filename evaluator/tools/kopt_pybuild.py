"""kopt-bench's build stage for a KernelBench-format Python solution (run by kopt-bench-runner
pybuild, confined; not meant to be run by hand).

    kopt_pybuild.py BUILD ENTRY PARAMS

Imports BUILD/src/ENTRY, constructs its ModelNew (or Model) as KernelBench does (the same seed and
constructor arguments as the reference), and calls it once on inputs of the spec's shapes, so that
every extension it builds with torch.utils.cpp_extension.load_inline/load (and every JIT cache a
first call fills) is built here, where a compiler may run. Writes BUILD/manifest.json: the
interpreter's search path, the class used, and each extension's module name and file, relative to
BUILD. Exit 0: built; 1: the solution does not build or does not run (the reason in BUILD/error.txt
and at the end of stderr).
"""
import json
import os
import sys
import traceback


ERROR_FILE = None  # BUILD/error.txt: the reason alone, without what imports print on the way


def fail(msg):
    sys.stderr.write(msg.rstrip() + "\n")
    if ERROR_FILE:
        with open(ERROR_FILE, "w") as f:
            f.write(msg.rstrip() + "\n")
    sys.exit(1)


def describe_exception():
    """The exception's own words first, then where in the solution it was raised."""
    etype, value, tb = sys.exc_info()
    head = "".join(traceback.format_exception_only(etype, value)).strip()
    where = ""
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(SRC_DIR or "\0"):
            where = " (at %s:%d, in %s)" % (os.path.basename(frame.filename), frame.lineno, frame.name)
    return head + where


SRC_DIR = None


def main():
    global ERROR_FILE
    build, entry, params_path = sys.argv[1], sys.argv[2], sys.argv[3]
    ERROR_FILE = os.path.join(build, "error.txt")
    with open(params_path) as f:
        params = json.load(f)
    src = os.path.join(build, "src")
    global SRC_DIR
    SRC_DIR = src
    # The interpreter's own search path (sys.path[0] is this script's folder, not the solution's).
    search_path = [p for p in sys.path[1:] if p]
    sys.path.insert(0, src)
    try:
        import torch
        import torch.utils.cpp_extension as cx
    except Exception as e:  # noqa: BLE001 - the message is the point
        fail("the build stage's Python (%s) cannot import torch: %s" % (sys.executable, e))

    extensions = {}

    def recorded(original):
        def build_and_record(name, *args, **kwargs):
            kwargs.setdefault("verbose", False)
            result = original(name, *args, **kwargs)
            if isinstance(result, str):  # is_python_module=False: a library of torch ops
                path, module, python_module = result, name, False
            else:
                path, module, python_module = getattr(result, "__file__", ""), result.__name__, True
            if not path:
                fail("the extension '%s' was built but its file cannot be found" % name)
            extensions[name] = {"module": module, "path": os.path.relpath(os.path.abspath(path), build),
                                "python_module": python_module}
            return result
        return build_and_record

    cx.load_inline = recorded(cx.load_inline)
    cx.load = recorded(cx.load)

    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("kopt_solution", os.path.join(src, entry))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["kopt_solution"] = mod
        spec.loader.exec_module(mod)
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - a build error is reported, whatever raised it
        fail("the solution does not import: " + describe_exception())
    wanted = params.get("class")  # a reference's Model; a solution's ModelNew, else Model
    cls = getattr(mod, wanted, None) if wanted else getattr(mod, "ModelNew", None) or getattr(mod, "Model", None)
    if cls is None:
        fail("%s defines %s (KernelBench format)" % (entry, "no class " + wanted if wanted else "neither class ModelNew nor class Model"))
    device = torch.device(params.get("device", "cpu"))
    try:
        torch.manual_seed(int(params.get("seed", 42)))
        model = cls(*params.get("init_args", []))
        if isinstance(model, torch.nn.Module):
            model.train(bool(params.get("train", False)))
            model = model.to(device)
            if params.get("precision", "float32") != "float32":
                model = model.to(getattr(torch, params["precision"]))
    except BaseException:  # noqa: BLE001
        fail("%s(*init_inputs) fails: %s" % (cls.__name__, describe_exception()))

    # One call on inputs of the declared shapes: builds what a first call builds (lazy extensions,
    # Triton's kernels) and shows a forward that does not return tensors before any judging starts.
    inputs = []
    for d in params.get("inputs", []):
        if "scalar" in d:  # a spec's scalar: a Python number, as the judge passes it
            kind = d.get("type", "")
            v = d["scalar"]
            inputs.append(bool(v) if kind == "bool" or isinstance(v, bool) else
                          int(v) if kind == "int" or (kind != "float" and isinstance(v, int)) else float(v))
            continue
        dtype = getattr(torch, d.get("dtype", "float32"))
        shape = d.get("shape", [])
        if dtype.is_floating_point:
            inputs.append(torch.randn(*shape, dtype=dtype, device=device))
        elif dtype == torch.bool:
            inputs.append(torch.zeros(*shape, dtype=dtype, device=device))
        else:
            hi = int((d.get("dist") or {}).get("high", 2))
            lo = int((d.get("dist") or {}).get("low", 0))
            inputs.append(torch.randint(lo, max(hi, lo + 1), tuple(shape), dtype=dtype, device=device))
    try:
        with torch.no_grad():
            out = model(*inputs)
    except BaseException:  # noqa: BLE001
        fail("the first call of forward fails: " + describe_exception())
    outs = out if isinstance(out, (tuple, list)) else [out]
    if not outs or not all(isinstance(t, torch.Tensor) for t in outs):
        fail("forward returned %s, not a tensor or a tuple of tensors" % type(out).__name__)

    # What the runner's Python needs from this build beyond the extensions: Triton's kernel cache
    # (filled by the call above; the runner reads it and compiles nothing) and where libcuda is
    # (Triton would otherwise run ldconfig, and the runner may start no process).
    runner_env = {}
    if "triton" in sys.modules:
        runner_env["TRITON_CACHE_DIR"] = "triton"
        for name in ("triton.backends.nvidia.driver", "triton.common.build"):
            try:
                dirs = __import__(name, fromlist=["libcuda_dirs"]).libcuda_dirs()
                if dirs:
                    runner_env["TRITON_LIBCUDA_PATH"] = dirs[0]
                    break
            except Exception:  # noqa: BLE001 - another Triton version: the next place
                pass
    with open(os.path.join(build, "manifest.json"), "w") as f:
        json.dump({"sys_path": search_path, "class": cls.__name__, "extensions": extensions, "env": runner_env,
                   "torch": torch.__version__, "python": sys.executable}, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001 - whatever else went wrong, said in one line
        fail("the build stage failed: " + describe_exception())
