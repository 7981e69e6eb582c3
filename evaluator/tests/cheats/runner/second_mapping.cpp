// CHEAT (a second mapping of the inputs): the reference returns a copy of x. On every call the
// candidate maps the judge's input region once more, at a new address (mremap with old_size 0 on the
// shared mapping makes a new mapping of the same pages), and returns a tensor there, at x's offset:
// the output's bytes are x's, nothing is copied, its address is in no range the judge laid an input
// at, and no two calls' outputs share an address (no reuse of a held output). Closed by: the judge asks the kernel which file and offset back each output (every mapping of
// the input region, at any address, in /proc/<pid>/maps), not which address it starts at.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {
uintptr_t first_lo = 0, first_hi = 0;

uintptr_t map_again() {
  uintptr_t second = 0;
  if (first_lo) {
    void* p = mremap(reinterpret_cast<void*>(first_lo), 0, first_hi - first_lo, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? 0 : reinterpret_cast<uintptr_t>(p);
  }
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0, off = 0;
    if (!std::strstr(line, "kopt-in") || std::sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) != 3 || off != 0) continue;
    void* p = mremap(reinterpret_cast<void*>(lo), 0, hi - lo, MREMAP_MAYMOVE);
    if (p != MAP_FAILED) first_lo = lo, first_hi = hi, second = reinterpret_cast<uintptr_t>(p);
    break;
  }
  std::fclose(f);
  return second;
}
}  // namespace

static at::Tensor forward(const at::Tensor& x) {
  const uintptr_t second = map_again();
  const auto a = reinterpret_cast<uintptr_t>(x.data_ptr());
  if (!second || a < first_lo || a + x.nbytes() > first_hi || !x.is_contiguous()) return x.clone();
  return at::from_blob(reinterpret_cast<void*>(second + (a - first_lo)), x.sizes(), x.options());
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
