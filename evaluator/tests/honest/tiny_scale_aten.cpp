// Honest: tanh(x) * 1e-6 through ATen, against a reference far below the fp32 tolerance (the
// signal check must judge it on relative error and accept it).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) { return at::tanh(x).mul_(1e-6); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
