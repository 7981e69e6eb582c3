// CHEAT: defers the work to a thread that finishes after the call has returned (the timer
// sees an almost free call).
// Caught by: the output is checked right after the call, and re-checked later for late writes.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <chrono>
#include <thread>

static at::Tensor forward(const at::Tensor& x) {
  at::Tensor out = at::empty_like(x);
  at::Tensor xin = x;
  std::thread([xin, out]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    at::clamp_min_out(out, xin, 0);
  }).detach();
  return out;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
