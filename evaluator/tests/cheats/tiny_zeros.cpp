// CHEAT: trivial output against a reference whose values (|y| <= 1e-6) sit far below the fp32
// tolerance: zeros would pass a flat allclose(atol=1e-4).
// Caught by: the signal check (judged on relative error when the reference is below 10 x atol).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) { return at::zeros_like(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
