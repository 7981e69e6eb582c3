// CHEAT: registers an aten:: kernel lazily, on its first call (after the load-time snapshot),
// and computes honestly itself.
// Caught by: the dispatcher table compared again after the last call.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <memory>

static at::Tensor fake_tanh(const at::Tensor& x) { return at::zeros_like(x); }
static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  static std::unique_ptr<torch::Library> lib;
  if (!lib) {
    lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    lib->impl("tanh", &fake_tanh);
  }
  return at::relu(at::addmm(bias, x, weight.t())).mul_(0.5);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
