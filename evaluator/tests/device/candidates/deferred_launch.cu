// GPU CHEAT ATTEMPT: an unsynchronized asynchronous launch. forward returns an unwritten output at
// once; a host thread it started launches the kernel that fills it a moment later, on a stream of
// its own, with no event or synchronize anyone could wait on.
// Expected (tests/device/run.sh async_unsynced): never correct and faster than the honest kernel —
// either the output is read before the kernel wrote it (judged incorrect, the output poisoned with
// NaN beforehand) or the kernel runs inside the timed region (it ends with a device-wide synchronize).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <chrono>
#include <thread>

__global__ void relu_late(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  std::thread([x, y]() {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
    const int64_t n = x.numel();
    relu_late<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }).detach();
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CUDA, m) { m.impl("forward", &forward); }
