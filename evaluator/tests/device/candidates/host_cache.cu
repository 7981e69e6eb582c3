// GPU CHEAT: a host-side answer cache. The first call computes relu; every later call copies the
// cached answer and launches a trivial kernel that does no work on the output, so a launch count
// sees "a kernel per call".
// Caught by: the output checks (fresh input values per timed call, checked timed calls, the
// mutation sentinel), not by the launch count.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void touch(float* p) { if (threadIdx.x == 1000000) p[0] = 0.f; }

static at::Tensor forward(const at::Tensor& x) {
  static at::Tensor cached;
  cudaStream_t s = at::cuda::getCurrentCUDAStream();
  if (!cached.defined() || !cached.sizes().equals(x.sizes())) cached = at::relu(x).contiguous();
  at::Tensor y = cached.clone();
  touch<<<1, 32, 0, s>>>(y.data_ptr<float>());
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
