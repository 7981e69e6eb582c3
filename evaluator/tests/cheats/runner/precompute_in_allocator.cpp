// CHEAT (work outside the judge's clock, through a hooked allocator): rewrites LibTorch's GOT entry
// for posix_memalign (c10's CPU allocator). Whenever the runner allocates a tensor (as it did to
// copy the inputs in, before the call), the hook computes the answers of inputs it finds in the
// input region. Closed by: the runner allocates nothing for the inputs (it maps the judge's bytes
// inside the call's window) and is stopped between calls: an allocation happens only inside a window.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cstdlib>

#include "got_hook.h"
#include "stash.h"

namespace {
int (*real_memalign)(void**, size_t, size_t) = nullptr;
int hooked_memalign(void** p, size_t align, size_t n) {
  const int r = real_memalign(p, align, n);
  if (!kopt_stash::inside) kopt_precompute_all();
  return r;
}
struct Install {
  Install() {
    real_memalign = reinterpret_cast<decltype(real_memalign)>(
        kopt_hook_got("libc10.so", "posix_memalign", reinterpret_cast<void*>(&hooked_memalign)));
  }
} install;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return kopt_square_answer(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
