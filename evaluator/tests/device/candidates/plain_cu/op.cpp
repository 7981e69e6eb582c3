// Honest GPU candidate, op half: registers forward and calls the plain-CUDA launcher on the
// current stream.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include "relu.h"

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  relu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), at::cuda::getCurrentCUDAStream().stream());
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
