// GPU CHEAT: launches no kernel — computes on the host and copies the answer back (a host-side
// cache would look the same to the events).
// Caught by: CUPTI launch accounting (no kernel during the timed calls).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <vector>

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  std::vector<float> h(x.numel());
  cudaMemcpy(h.data(), x.data_ptr<float>(), h.size() * 4, cudaMemcpyDeviceToHost);
  for (auto& v : h) v = v > 0.f ? v : 0.f;
  at::Tensor y = at::empty_like(x);
  cudaMemcpy(y.data_ptr<float>(), h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
