// CHEAT (a recycled output ring): twelve output buffers allocated once and reused in turn, so no
// call pays for fresh output memory; each answer is complete when the call returns, but it is gone
// twelve calls later while the caller still holds it. Closed by: the runner holds every output as
// a caller would, the judge sees a new output in the memory of one still held (and reads the held
// ones again at the end).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  static at::Tensor ring[12];
  static int next = 0;
  at::Tensor& out = ring[next++ % 12];
  if (!out.defined() || out.sizes() != x.sizes()) out = at::empty_like(x);
  at::clamp_min_out(out, x, 0);
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
