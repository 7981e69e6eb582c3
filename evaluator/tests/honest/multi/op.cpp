// Honest two-file candidate against a C++ reference: out = alpha * x + y, with a float scalar.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include "kernel.h"

static at::Tensor forward(const at::Tensor& x_, const at::Tensor& y_, double alpha) {
  at::Tensor x = x_.contiguous(), y = y_.contiguous();
  at::Tensor out = at::empty_like(x);
  scale_add_kernel(x.data_ptr<float>(), y.data_ptr<float>(), float(alpha), out.data_ptr<float>(), x.numel());
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor y, float alpha) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
