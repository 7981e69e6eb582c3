// GPU CHEAT: pins its input in L2 with a persisting access-policy window, so the evaluator's
// L2 flush does not evict it and every timed call runs from cache.
// Caught by: the persisting-L2 limit / stream window checked after each timed call (and reset).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstring>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  cudaStream_t s = at::cuda::getCurrentCUDAStream();
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, x.nbytes());
  cudaStreamAttrValue attr;
  std::memset(&attr, 0, sizeof attr);
  attr.accessPolicyWindow.base_ptr = x.data_ptr();
  attr.accessPolicyWindow.num_bytes = x.nbytes();
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr);
  int64_t n = x.numel();
  relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
