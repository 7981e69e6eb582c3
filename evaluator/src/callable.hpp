// The op a runner or the judge calls, loaded once: a TorchScript module (a reference exported from
// Python, in the spec's mode and precision), a library that registers `NS::forward` (a C++
// reference, or a candidate) or a Python solution (a candidate, in its runner only). Both sides load ops through this one file.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/script.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kopt::bench {

class PythonOp;

struct Callable {
  std::optional<torch::jit::Module> module;
  c10::optional<c10::OperatorHandle> op;
  std::shared_ptr<PythonOp> py;

  // A TorchScript module on `dev`, in training mode when `train`, cast to `precision` (float32: as is).
  static Callable script(const std::string& path, at::Device dev, bool train, const std::string& precision);
  // A library registering `ns::forward` (KOPT_LIBRARY). Throws with what to do when it does not.
  static Callable library(const std::string& so, const std::string& ns);
  // A KernelBench-format Python solution (python_op.hpp); `launch` is the parent's JSON for it.
  static Callable python(const std::string& path, const std::string& launch, at::Device dev);

  // Calls it on `stack` (inputs, then parameters); the returned tensors (to_outputs). `who` names
  // it in errors ("reference", "candidate").
  std::vector<at::Tensor> call(std::vector<c10::IValue> stack, const char* who);
};

}  // namespace kopt::bench
