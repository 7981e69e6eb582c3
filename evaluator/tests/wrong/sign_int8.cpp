// WRONG: the sign as int8 where the reference returns float32 — the same numbers, a quarter of the
// bytes to write, and another output contract. Caught by: the dtype rule.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) { return at::sign(x).to(at::kChar); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
