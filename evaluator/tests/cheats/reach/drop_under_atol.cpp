// CHEAT (channel: hiding under atol): against mixed_scale.pt (y = x * s), computes only the columns
// with a large scale and leaves the rest zero — every skipped element is below atol, so an
// element-wise check passes. Closed by: the magnitude rule (zeros where the reference holds a
// reliable normal value); values kept but off by less than 8x meet the relative L2 error instead.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  at::Tensor y = at::zeros_like(x);
  y.narrow(1, 0, 32).copy_(x.narrow(1, 0, 32));  // the columns scaled by 1.0; the rest skipped
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
