#include "python_op.hpp"

#include <stdexcept>

#ifdef KOPT_WITH_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ATen/DLConvertor.h>

#include <cstring>
#include <mutex>

#include "kopt_bench_config.hpp"

extern char** environ;
#endif

namespace kopt::bench {

nlohmann::json resolve_launch(const std::string& launch_text, const std::string& launch_path) {
  nlohmann::json l = nlohmann::json::parse(launch_text);
  const std::string dir = launch_path.substr(0, launch_path.find_last_of('/'));
  l["build_dir"] = dir;
  l["module_dir"] = dir + "/src";
  if (l.contains("extensions") && l["extensions"].is_object())
    for (auto& [name, rec] : l["extensions"].items())
      if (rec.is_object() && rec.contains("path") && rec["path"].is_string())
        rec["path"] = dir + "/" + rec["path"].get<std::string>();
  return l;
}

std::vector<std::string> python_read_dirs(const nlohmann::json& launch) {
  std::vector<std::string> dirs;
  auto add = [&](const nlohmann::json& v) {
    if (v.is_string() && !v.get<std::string>().empty() && v.get<std::string>()[0] == '/') dirs.push_back(v.get<std::string>());
  };
  add(launch.value("build_dir", nlohmann::json()));
  for (const auto& p : launch.value("sys_path", nlohmann::json::array())) add(p);
  return dirs;
}

#ifndef KOPT_WITH_PYTHON

bool python_available() { return false; }
void PythonOp::start(const std::string&) { PythonOp::load("", "", at::kCPU); }
std::string PythonOp::preload_in_image() { return "built without Python"; }
std::shared_ptr<PythonOp> PythonOp::load(const std::string&, const std::string&, at::Device) {
  throw std::runtime_error("this kopt-bench was built without Python (CMake found no Python 3 development files "
                           "for the Python whose torch matches its LibTorch): rebuild with python3-dev installed, "
                           "or write the kernel as a C++ op (kopt/op.h)");
}
std::vector<at::Tensor> PythonOp::call(const std::vector<c10::IValue>&, const char*) { return {}; }
PythonOp::~PythonOp() = default;

#else

namespace {

// The runner's side of the solution, in Python: import it as KernelBench does, with the build
// stage's extensions in place of load_inline/load (no compiler can run here), and call it. Errors
// come back as text: the first element of the returned pair says which.
constexpr const char* kBoot = R"PY(
import sys, json, importlib.util, importlib.machinery, traceback
import torch
import torch.utils.cpp_extension as _cx
from torch.utils.dlpack import from_dlpack as _from_dlpack, to_dlpack as _to_dlpack

_launch = {}

def _import_built(name, *args, **kwargs):
    rec = _launch.get("extensions", {}).get(name)
    if rec is None:
        raise RuntimeError("the extension '%s' was not built by the build stage: load_inline/load must run when the "
                           "solution is imported or its model constructed, with the same name each time" % name)
    if not rec.get("python_module", True):
        torch.ops.load_library(rec["path"])
        return rec["path"]
    loader = importlib.machinery.ExtensionFileLoader(rec["module"], rec["path"])
    spec = importlib.util.spec_from_file_location(rec["module"], rec["path"], loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod

def _load_inline(name, *args, **kwargs):
    return _import_built(name)

def _load(name, *args, **kwargs):
    return _import_built(name)

def _kopt_fresh_env(env):
    # An interpreter inherited from the warm image kept the image's environment: the runner's is
    # the one it was started with (wiped by the sandbox).
    import os
    os.environ.clear()
    os.environ.update(env)

def _kopt_load(path, launch_text, device):
    global _launch
    try:
        _launch = json.loads(launch_text)
        if _launch.get("module_dir") and _launch["module_dir"] not in sys.path:
            sys.path.insert(0, _launch["module_dir"])
        import os
        for k, v in (_launch.get("env") or {}).items():
            # TRITON_CACHE_DIR is relative to the build folder; the rest as recorded
            os.environ[k] = os.path.join(_launch["build_dir"], v) if k == "TRITON_CACHE_DIR" else v
        _cx.load_inline = _load_inline
        _cx.load = _load
        spec = importlib.util.spec_from_file_location("kopt_solution", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["kopt_solution"] = mod
        spec.loader.exec_module(mod)
        wanted = _launch.get("class")  # what the build stage constructed
        cls = getattr(mod, wanted, None) if wanted else getattr(mod, "ModelNew", None) or getattr(mod, "Model", None)
        if cls is None:
            return ("error", "the solution defines neither class ModelNew nor class Model (KernelBench format)")
        seed = int(_launch.get("seed", 42))
        init = _launch.get("init_args", [])
        torch.manual_seed(seed)
        model = cls(*init)
        if not callable(model):
            return ("error", "%s(...) is not callable" % cls.__name__)
        if isinstance(model, torch.nn.Module):
            model.train(bool(_launch.get("train", False)))
            model = model.to(torch.device(device))
            prec = _launch.get("precision", "float32")
            if prec != "float32":
                model = model.to(getattr(torch, prec))
        return ("ok", model)
    except BaseException:
        return ("error", "".join(traceback.format_exc().splitlines(True)[-12:]))

def _describe(v):
    return type(v).__name__

def _kopt_call(model, caps, bools):
    try:
        xs = [_from_dlpack(c) if type(c).__name__ == "PyCapsule" else c for c in caps]
        for i in bools:
            xs[i] = xs[i].view(torch.bool)
        with torch.no_grad():
            out = model(*xs)
        if isinstance(out, torch.Tensor):
            out = (out,)
        elif isinstance(out, (tuple, list)) and len(out) > 0 and all(isinstance(t, torch.Tensor) for t in out):
            out = tuple(out)
        else:
            return ("error", "forward returned %s, not a tensor or a tuple of tensors" % _describe(out))
        res = []
        for t in out:
            t = t.detach()
            flag = t.dtype == torch.bool
            if flag:
                t = t.view(torch.uint8)
            res.append((_to_dlpack(t), flag))
        return ("ok", res)
    except BaseException:
        return ("error", "".join(traceback.format_exc().splitlines(True)[-12:]))
)PY";

// The GIL, held only while Python runs: between calls the solution's own threads may run (and are
// counted by the judge, which stops this whole process between commands).
struct Gil {
  PyGILState_STATE s;
  Gil() : s(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(s); }
};

struct Ref {  // an owned PyObject*
  PyObject* p;
  explicit Ref(PyObject* o = nullptr) : p(o) {}
  ~Ref() { Py_XDECREF(p); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* release() {
    PyObject* o = p;
    p = nullptr;
    return o;
  }
};

std::string py_error_text() {
  PyObject *t = nullptr, *v = nullptr, *tb = nullptr;
  PyErr_Fetch(&t, &v, &tb);
  std::string s = "Python error";
  if (v) {
    Ref str(PyObject_Str(v));
    if (str.p && PyUnicode_Check(str.p)) s = PyUnicode_AsUTF8(str.p);
  }
  Py_XDECREF(t);
  Py_XDECREF(v);
  Py_XDECREF(tb);
  return s;
}

PyObject* g_boot = nullptr;  // the bootstrap's globals
bool g_inherited = false;     // Python came initialized from the process this one was forked from

// CPython isolated from the environment (no PYTHONPATH, no user site), its search path `paths`,
// no bytecode written, no signal handlers; then the bootstrap (which imports torch). Returns what
// went wrong, "" when it started. Holds the GIL on return.
std::string initialize(const std::vector<std::string>& paths) {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.install_signal_handlers = 0;
  config.write_bytecode = 0;
  config.site_import = 0;
  config.user_site_directory = 0;
  config.module_search_paths_set = 1;
  for (const auto& p : paths) {
    if (p.empty()) continue;
    wchar_t* w = Py_DecodeLocale(p.c_str(), nullptr);
    if (w) {
      PyWideStringList_Append(&config.module_search_paths, w);
      PyMem_RawFree(w);
    }
  }
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) return std::string("cannot start Python: ") + (st.err_msg ? st.err_msg : "?");
  PyObject* main = PyImport_AddModule("__main__");  // borrowed
  g_boot = PyModule_GetDict(main);                  // borrowed, lives as long as Python
  Ref r(PyRun_String(kBoot, Py_file_input, g_boot, g_boot));
  if (!r.p) return "cannot import torch in the runner's Python: " + py_error_text();
  return "";
}

// The environment this process has now, as a dict (new reference).
PyObject* environment_dict() {
  PyObject* d = PyDict_New();
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    Ref k(PyUnicode_DecodeFSDefaultAndSize(*e, Py_ssize_t(eq - *e)));
    Ref v(PyUnicode_DecodeFSDefault(eq + 1));
    if (k.p && v.p) PyDict_SetItem(d, k.p, v.p);
  }
  PyErr_Clear();
  return d;
}

// Once per process. A runner forked from a warm image (preload_in_image) finds Python initialized
// with torch imported and the GIL held by this thread: it only brings Python's own state up to date
// after the fork and takes its environment; otherwise it starts Python here.
void start_python(const nlohmann::json& launch) {
  static std::once_flag once;
  std::string problem;
  std::call_once(once, [&] {
    if (Py_IsInitialized() && g_boot) {
      g_inherited = true;
      PyOS_AfterFork_Child();
      Ref env(environment_dict());
      PyObject* fn = PyDict_GetItemString(g_boot, "_kopt_fresh_env");  // borrowed
      Ref args(PyTuple_Pack(1, env.p));
      Ref r(fn ? PyObject_CallObject(fn, args.p) : nullptr);
      if (!r.p) problem = "cannot reset the runner's Python environment: " + py_error_text();
    } else {
      std::vector<std::string> paths;
      for (const auto& p : launch.value("sys_path", nlohmann::json::array()))
        if (p.is_string()) paths.push_back(p.get<std::string>());
      problem = initialize(paths);
    }
    if (Py_IsInitialized()) PyEval_SaveThread();  // the GIL is taken per call from here on
  });
  if (!problem.empty()) throw std::runtime_error(problem);
  if (!g_boot) throw std::runtime_error("Python did not start in this runner");
}

// ("ok", value) or ("error", text): the value (new reference), or throws with the text.
PyObject* unpack(PyObject* pair, const char* what) {
  Ref r(pair);
  if (!r.p) throw std::runtime_error(std::string(what) + ": " + py_error_text());
  if (!PyTuple_Check(r.p) || PyTuple_Size(r.p) != 2) throw std::runtime_error(std::string(what) + ": bad reply");
  PyObject* tag = PyTuple_GetItem(r.p, 0);
  PyObject* val = PyTuple_GetItem(r.p, 1);
  const char* t = PyUnicode_Check(tag) ? PyUnicode_AsUTF8(tag) : "";
  if (std::string(t) != "ok") {
    std::string msg = PyUnicode_Check(val) ? PyUnicode_AsUTF8(val) : "unknown error";
    throw std::runtime_error(msg);
  }
  Py_INCREF(val);
  return val;
}

void free_capsule_tensor(PyObject* cap) {
  // A capsule the consumer never took (still named "dltensor") owns its tensor.
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  }
}

}  // namespace

bool python_available() { return true; }

void PythonOp::start(const std::string& launch_text) { start_python(nlohmann::json::parse(launch_text)); }

std::string PythonOp::preload_in_image() {
  if (Py_IsInitialized()) return "";
  std::vector<std::string> paths;
  try {
    for (const auto& p : nlohmann::json::parse(KOPT_CFG_PYTHON_PATH)) paths.push_back(p.get<std::string>());
  } catch (const std::exception& e) {
    return std::string("no search path recorded for ") + KOPT_CFG_PYTHON + ": " + e.what();
  }
  // The GIL stays with this thread: the image and the judges and zygotes forked from it never run
  // Python, and every fork copies the interpreter with its lock held by the forking thread.
  return initialize(paths);
}

std::shared_ptr<PythonOp> PythonOp::load(const std::string& solution, const std::string& launch_text, at::Device dev) {
  nlohmann::json launch = nlohmann::json::parse(launch_text);
  start_python(launch);
  Gil gil;
  PyObject* fn = PyDict_GetItemString(g_boot, "_kopt_load");  // borrowed
  Ref args(Py_BuildValue("(sss)", solution.c_str(), launch_text.c_str(), dev.is_cuda() ? "cuda" : "cpu"));
  auto op = std::shared_ptr<PythonOp>(new PythonOp());
  op->model_ = unpack(PyObject_CallObject(fn, args.p), "loading the solution");
  op->call_ = PyDict_GetItemString(g_boot, "_kopt_call");
  Py_INCREF(static_cast<PyObject*>(op->call_));
  return op;
}

std::vector<at::Tensor> PythonOp::call(const std::vector<c10::IValue>& inputs, const char* who) {
  Gil gil;
  Ref caps(PyList_New(Py_ssize_t(inputs.size())));
  Ref bools(PyList_New(0));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& v = inputs[i];
    PyObject* item = nullptr;
    if (v.isTensor()) {
      at::Tensor t = v.toTensor();
      if (t.scalar_type() == at::kBool) {
        t = t.view(at::kByte);  // DLPack has no bool in every torch this builds against
        Ref n(PyLong_FromSize_t(i));
        PyList_Append(bools.p, n.p);
      }
      item = PyCapsule_New(at::toDLPack(t), "dltensor", free_capsule_tensor);
    } else if (v.isBool()) {
      item = PyBool_FromLong(v.toBool());
    } else if (v.isInt()) {
      item = PyLong_FromLongLong(v.toInt());
    } else if (v.isDouble()) {
      item = PyFloat_FromDouble(v.toDouble());
    } else {
      throw std::runtime_error(std::string("a Python solution cannot be passed a ") + v.tagKind() + " input");
    }
    PyList_SetItem(caps.p, Py_ssize_t(i), item);  // steals
  }
  Ref args(PyTuple_Pack(3, static_cast<PyObject*>(model_), caps.p, bools.p));
  Ref res(unpack(PyObject_CallObject(static_cast<PyObject*>(call_), args.p), who));
  std::vector<at::Tensor> outs;
  for (Py_ssize_t i = 0; i < PyList_Size(res.p); ++i) {
    PyObject* item = PyList_GetItem(res.p, i);  // (capsule, was_bool)
    PyObject* cap = PyTuple_GetItem(item, 0);
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (!m) throw std::runtime_error(std::string(who) + ": an output could not be read: " + py_error_text());
    PyCapsule_SetName(cap, "used_dltensor");  // ours now: the tensor below owns it
    at::Tensor t = at::fromDLPack(m);
    if (PyObject_IsTrue(PyTuple_GetItem(item, 1))) t = t.view(at::kBool);
    outs.push_back(std::move(t));
  }
  return outs;
}

PythonOp::~PythonOp() {
  // Python is never finalized (the runner's process ends with it); the model lives until then.
}

#endif

}  // namespace kopt::bench
