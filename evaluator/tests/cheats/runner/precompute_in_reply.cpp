// CHEAT (work outside the judge's clock, through a hooked write): rewrites the runner's GOT entry
// for write(2); before the runner writes any reply, the hook looks for inputs it has not answered
// yet in the input region and computes their answers. Where a runner prepared the inputs in a step
// of its own, the judge waited for that step's reply, unclocked, while the answer was computed.
// Closed by: the runner has no such step (the judge lays the inputs out itself, while the runner is
// stopped), so at every reply the inputs of the next call are not there yet; the work happens
// inside the call's window.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <unistd.h>

#include "got_hook.h"
#include "stash.h"

namespace {
ssize_t (*real_write)(int, const void*, size_t) = nullptr;
ssize_t hooked_write(int fd, const void* b, size_t n) {
  if (fd == 4) kopt_precompute_all();
  return real_write(fd, b, n);
}
struct Install {
  Install() { real_write = reinterpret_cast<decltype(real_write)>(kopt_hook_got("", "write", reinterpret_cast<void*>(&hooked_write))); }
} install;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return kopt_square_answer(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
