// CHEAT (channel: outputs valid only at check time): returns a buffer from a small pool and fills
// it from a background thread after the call has returned ("lazily filled"). Closed by: the
// judge reads the outputs once every thread of the runner is stopped, and reads the held ones again
// at the end.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <chrono>
#include <thread>

static at::Tensor forward(const at::Tensor& x) {
  static at::Tensor pool[2];
  static int next = 0;
  at::Tensor& out = pool[next++ % 2];
  if (!out.defined() || out.sizes() != x.sizes()) out = at::empty_like(x);
  out.zero_();
  at::Tensor in = x.clone();
  at::Tensor dst = out;
  std::thread([in, dst]() mutable {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    dst.copy_(at::relu(in));
  }).detach();
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
