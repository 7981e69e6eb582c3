// WRONG: against row_scale.pt (y = x * s, rows 8.. scaled by 1e-7), computes the first 8 of 2048
// rows and returns exact zeros elsewhere: every element is within atol and the relative L2 error is
// under its floor. Caught by: the magnitude rule (zeros where the reference is a reliable normal value).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  at::Tensor y = at::zeros_like(x);
  y.narrow(0, 0, 8).copy_(x.narrow(0, 0, 8));  // the rows scaled by 1.0; the rest skipped
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
