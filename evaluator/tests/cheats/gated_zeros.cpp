// CHEAT (tiny values under both floors, no oracle): against ref_gated_softmax.cpp, a float32-only
// reference, it computes the 8 rows gated by 64 and returns zeros for the other 2040 (99.6 % of the
// rows): every zero is within atol of a value of ~2e-6, the relative L2 error (~3e-5) is under the
// bound used without an oracle, and those values are far below 1/64 of the output's largest, which
// was the magnitude rule's only test of reliability without an fp64 oracle. The second output is
// the reference's own formula. Caught by: the magnitude rule, reliability judged per value by the
// float32 reference on inputs perturbed by 2^-16 (the small rows are stable, so reliable).
#include <kopt/op.h>
#include <ATen/ATen.h>

static std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x) {
  at::Tensor y = at::zeros_like(x);
  y.narrow(0, 0, 8).copy_(at::softmax(x.narrow(0, 0, 8), -1) * 64.0);
  return {y, at::stack({x.amax(-1), (x - x.mean(-1, true)).sum(-1) * 1e-3}, 1)};
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> (Tensor, Tensor)"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
