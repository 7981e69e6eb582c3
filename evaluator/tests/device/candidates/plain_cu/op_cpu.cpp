// Honest candidate for a machine without a GPU (tests/cuda-build.sh): the plain-CUDA kernel file
// relu.cu goes through kopt-bench's own nvcc step (the build's nvcc flags, sm_90) and is linked,
// loaded and registered with CUDA's runtime in the confined runner; forward computes relu on the
// CPU and never launches the kernel (nothing could run it here).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include "relu.h"

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return y;
}
// The kernel's launcher is referenced, so the object built by nvcc is part of this library.
[[maybe_unused]] static void (*const kLauncher)(const float*, float*, long long, void*) = &relu_launch;

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
