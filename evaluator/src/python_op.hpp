// A KernelBench-format Python solution as an op: CPython embedded in the runner, the solution's
// module imported, `ModelNew` (or `Model`) constructed as KernelBench does, and each call handed
// to its forward through DLPack (no copy: the tensors the judge laid out are the ones the forward
// sees, and the tensors it returns are the ones the judge reads). Everything in Python here is the
// candidate's, import-time code included; nothing it returns is trusted beyond the tensors.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <memory>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kopt::bench {

class PythonOp {
 public:
  // `launch`: the JSON the parent wrote for this runner (python_build.hpp): sys_path, the module
  // folder, init args, seed, mode, precision, extension records. Throws with what to do.
  // Starts CPython and imports torch (once per process), before anything of the solution runs, so
  // that what torch itself registers at import is not taken for the solution's doing.
  static void start(const std::string& launch);
  // In the warm judge image (kopt-bench --serve), once: CPython started and torch imported before
  // any judge is forked, so that a Python runner forked from it later does not pay ~0.8 s of
  // imports. "" when done (or not needed); else why not (the runners then start Python themselves).
  static std::string preload_in_image();
  static std::shared_ptr<PythonOp> load(const std::string& solution, const std::string& launch, at::Device dev);
  // Tensors cross as DLPack capsules; scalars (a spec's float, int and bool inputs) as Python numbers.
  std::vector<at::Tensor> call(const std::vector<c10::IValue>& inputs, const char* who);
  ~PythonOp();

 private:
  void* model_ = nullptr;  // PyObject*: the constructed module
  void* call_ = nullptr;   // PyObject*: the bootstrap's call function
};

// The launch file as the runner uses it: its relative paths resolved against its own folder
// (build_dir, module_dir and each extension's path made whole).
nlohmann::json resolve_launch(const std::string& launch_text, const std::string& launch_path);

// The folders a Python candidate's runner reads (Landlock): the build stage's output (the solution's
// copy and its extensions) and the interpreter's search path, from a resolved launch.
std::vector<std::string> python_read_dirs(const nlohmann::json& launch);

// Whether this build embeds CPython (KOPT_WITH_PYTHON).
bool python_available();

}  // namespace kopt::bench
