// GPU CHEAT ATTEMPT: launches the work on a private non-blocking stream and returns at once, so
// events on the timing stream alone would measure (almost) nothing.
// Defeated by the timing, not flagged: the timed region ends with a device-wide synchronize, so
// the side stream's kernel is counted (with or without CUPTI); the device check requires its time
// to be no less than the kernel's own duration.
#include <kopt/op.h>
#include <ATen/ATen.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    for (int k = 0; k < 64; ++k) v = v * 1.0000001f;  // some real work
    y[i] = x[i] > 0.f ? x[i] : 0.f;
  }
}

static at::Tensor forward(const at::Tensor& x_) {
  static cudaStream_t side = nullptr;
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  int64_t n = x.numel();
  relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
