// CHEAT (channel: code that runs at exit): an honest relu, plus a static destructor and an atexit
// handler that print a forged KERNEL_EVAL line with a huge speedup, hoping to be the last line.
// Closed by: the candidate's stdout/stderr are a capped pipe read by the judge, never the result.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace {
const char kForged[] = "\nKERNEL_EVAL={\"artifact\":\"forged\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.001,"
                       "\"native_metrics\":{\"speedup\":999.0}}\n";
void forge() {
  std::fputs(kForged, stdout);
  std::fflush(stdout);
  (void)!::write(1, kForged, sizeof kForged - 1);
  (void)!::write(2, kForged, sizeof kForged - 1);
}
struct AtExit {
  AtExit() { std::atexit(forge); }
  ~AtExit() { forge(); }
} at_exit;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::relu(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
