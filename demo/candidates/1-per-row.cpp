// v1: one ATen relu per row (64 dispatcher round trips per call).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  at::Tensor y = at::empty_like(x);
  for (int64_t r = 0; r < x.size(0); ++r) y[r].copy_(at::relu(x[r]));
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
