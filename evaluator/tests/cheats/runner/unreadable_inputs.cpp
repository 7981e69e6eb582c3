// CHEAT (a probe that fails open): a static constructor, run when the runner loads the op and before
// the judge probes it, makes the first page of the input region unreadable (mprotect PROT_NONE). The
// judge's probe of the runner's memory then fails, and it used to fall back to outputs copied by the
// candidate's own process, with only an advisory. The op itself is an honest relu: the point is the
// lowered guard. Closed by: a failed probe refuses the evaluation (unless the kernel's Yama setting
// forbids every such read, which no process can change).
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <sys/mman.h>

#include <cstdio>
#include <cstring>

namespace {
struct HideTheInputs {
  HideTheInputs() {
    FILE* f = std::fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      if (!std::strstr(line, "kopt-in")) continue;
      unsigned long lo = 0, hi = 0, off = 0;
      if (std::sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && off == 0) {
        mprotect(reinterpret_cast<void*>(lo), 4096, PROT_NONE);
        break;
      }
    }
    std::fclose(f);
  }
} hide;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::relu(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
