// CHEAT (a ring beyond the hold): two output buffers reused in turn, each returned as a view whose
// strides describe a span of ~280 MiB (rows 1.06 M floats apart; only the 64 x 256 elements are ever
// touched, so it costs the candidate almost nothing). The judge counted what it holds by that span:
// past its 256 MiB budget it released every older output, and the buffer of two calls ago, still
// held by any real caller, was reused unseen. Closed by: the budget counts the bytes of an output's
// elements, not its described span (and the last two calls are held whatever their size).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  static at::Tensor ring[2];
  static int next = 0;
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t stride = (int64_t(1) << 20) + (int64_t(1) << 16);
  at::Tensor& buf = ring[next++ % 2];
  if (!buf.defined()) buf = at::empty({(rows - 1) * stride + cols}, x.options());
  at::Tensor out = buf.as_strided({rows, cols}, {stride, 1});
  at::clamp_min_out(out, x, 0);
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
