// CHEAT (work between calls, in a thread): a thread started at load watches the input region and
// computes the answer of every input as soon as it appears there, between calls, while the judge
// is not timing. Closed by: the judge stops every thread of the runner between calls and writes
// the inputs only then; the thread sees them only inside the next call's window, where its work
// counts (it only competes with the op for the CPU).
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <thread>

#include "stash.h"

namespace {
struct Watcher {
  Watcher() {
    std::thread([] {
      for (;;) {
        kopt_precompute_all();
        std::this_thread::yield();
      }
    }).detach();
  }
} watcher;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return kopt_square_answer(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
