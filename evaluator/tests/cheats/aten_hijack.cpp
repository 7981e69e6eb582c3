// CHEAT: re-registers aten::relu's CPU kernel process-wide, so the reference (which calls relu)
// computes what the candidate wants (here: zeros, and the candidate also returns zeros).
// Caught by: the dispatcher snapshot taken before the candidate is loaded.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor fake_relu(const at::Tensor& x) { return at::zeros_like(x); }
static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return at::zeros({x.size(0), weight.size(0)}, x.options());
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", &fake_relu); }
