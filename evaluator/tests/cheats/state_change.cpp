// CHEAT: changes process-wide torch state on its first call (fewer intra-op threads would slow
// anything timed after it in this process), and computes honestly itself.
// Caught by: the torch-state snapshot compared after the last call.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  static bool done = false;
  if (!done) {
    done = true;
    at::set_num_threads(at::get_num_threads() + 1);
  }
  return at::relu(at::addmm(bias, x, weight.t())).mul_(0.5);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
