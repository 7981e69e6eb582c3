// CHEAT: an int64 matrix product computed in float32 and rounded back. Every product (1e6..4e6) and
// every sum (~1.4e8) is an integer, but float32 carries 24 bits: the sums are rounded to multiples
// of 8 or 16, so the result is wrong by units to tens. atol + rtol*|ref| (1e-4 * 1.4e8 = 1.4e4) and
// a relative L2 floor of 1e-5 would take it. Closed by: integer outputs are compared exactly.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& a, const at::Tensor& b) {
  return at::mm(a.to(at::kFloat), b.to(at::kFloat)).round().to(at::kLong);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor a, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
