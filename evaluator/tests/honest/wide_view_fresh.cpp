// Honest: the same wide strided view as cheats/runner/wide_ring.cpp (a span of ~280 MiB, rows 1.06 M
// floats apart), but over a fresh buffer every call: nothing is reused, so holding every call's
// outputs (the budget counts their elements, not their span) finds nothing.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t stride = (int64_t(1) << 20) + (int64_t(1) << 16);
  at::Tensor buf = at::empty({(rows - 1) * stride + cols}, x.options());
  at::Tensor out = buf.as_strided({rows, cols}, {stride, 1});
  at::clamp_min_out(out, x, 0);
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
