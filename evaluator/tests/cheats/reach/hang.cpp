// CHEAT (channel: hanging the evaluation): stops itself on the first call, so a judge without a
// wall-clock limit would never print. Closed by: the judge's deadline ends it in `timeout`.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <signal.h>
#include <unistd.h>

static at::Tensor forward(const at::Tensor& x) {
  ::kill(getpid(), SIGSTOP);
  for (;;) pause();
  return x;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
