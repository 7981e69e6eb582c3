// CHEAT: replay keyed on the input pointer — the answer computed for an address is returned
// again whenever the same address comes back, whatever the values are now.
// Caught by: fresh inputs at varied addresses, and the mutation sentinel (same address, new bytes).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  static const void* key = nullptr;
  static at::Tensor cached;
  if (cached.defined() && key == x.data_ptr()) return cached.clone();
  key = x.data_ptr();
  cached = at::relu(at::addmm(bias, x, weight.t())).mul_(0.5);
  return cached.clone();
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
