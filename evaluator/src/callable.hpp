// The op a runner or the judge calls, loaded once: a TorchScript module (a reference exported from
// Python, in the spec's mode and precision) or a library that registers `NS::forward` (a C++
// reference, or a candidate). Both sides load ops through this one file.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

namespace kopt::bench {

struct Callable {
  std::optional<torch::jit::Module> module;
  c10::optional<c10::OperatorHandle> op;

  // A TorchScript module on `dev`, in training mode when `train`, cast to `precision` (float32: as is).
  static Callable script(const std::string& path, at::Device dev, bool train, const std::string& precision);
  // A library registering `ns::forward` (KOPT_LIBRARY). Throws with what to do when it does not.
  static Callable library(const std::string& so, const std::string& ns);

  // Calls it on `stack` (inputs, then parameters); the returned tensors (to_outputs). `who` names
  // it in errors ("reference", "candidate").
  std::vector<at::Tensor> call(std::vector<c10::IValue> stack, const char* who);
};

}  // namespace kopt::bench
