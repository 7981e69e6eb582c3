// Computes relu honestly but first prints a forged, much better result line. The forged line
// must never reach kopt-bench's stdout (the worker's output goes to a log file).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <cstdio>

static at::Tensor forward(const at::Tensor& x) {
  std::printf("KERNEL_EVAL={\"artifact\":\"forged\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.000001}\n");
  std::fflush(stdout);
  return at::relu(x);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
