// CHEAT: two outputs where the reference returns two separately stored tensors, but the second is a
// transposed view of the first: one buffer paid for instead of two, and a caller writing one output
// changes the other. The values are right. Closed by: overlap between outputs is judged against the
// reference's own outputs (shared storage there allows it, separate storage does not).
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <tuple>

static std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x) {
  at::Tensor y = at::relu(x);
  return {y, y.t()};
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> (Tensor, Tensor)"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
