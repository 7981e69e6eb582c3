// CHEAT (eliding the output copy the reference pays for): writes its answer straight into the
// judge's output region (where a runner copied outputs to) and returns a tensor it never wrote; a
// GOT hook on memcpy skips the runner's copy into that region, so the region keeps the answer.
// Closed by: the judge reads the tensor the op returned, out of the runner's memory, itself; no
// copy is made inside the window, by either side.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cstdio>
#include <cstring>

#include "got_hook.h"

namespace {
char* out_base = nullptr;
size_t out_size = 0;
void* (*real_memcpy)(void*, const void*, size_t) = nullptr;
void* hooked_memcpy(void* d, const void* s, size_t n) {
  char* c = static_cast<char*>(d);
  if (out_base && c >= out_base && c < out_base + out_size) return d;
  return real_memcpy(d, s, n);
}
void find_out_region() {
  FILE* f = std::fopen("/proc/self/maps", "r");
  char line[512];
  while (f && std::fgets(line, sizeof line, f))
    if (std::strstr(line, "kopt-out")) {
      unsigned long lo = 0, hi = 0;
      if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2) out_base = reinterpret_cast<char*>(lo), out_size = hi - lo;
      break;
    }
  if (f) std::fclose(f);
}
struct Install {
  Install() {
    find_out_region();
    real_memcpy = reinterpret_cast<decltype(real_memcpy)>(kopt_hook_got("", "memcpy", reinterpret_cast<void*>(&hooked_memcpy)));
  }
} install;
}  // namespace

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  if (out_base) {
    // Where a runner's copy of output 0 landed: after the region's 64 KiB table.
    float* dst = reinterpret_cast<float*>(out_base + 64 * 1024);
    const float* src = x.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;
  }
  return at::empty_like(x);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
