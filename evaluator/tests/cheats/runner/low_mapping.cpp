// CHEAT (a load-time mapping below the runner's own): a static constructor maps the first page of the
// judge's input region (fd 5, the memfd named kopt-in) once more at a low address, below the mapping
// the runner made, before anything is called. A judge that took the lowest mapping of the region as
// its base would lay inputs and look for outputs at the wrong place; once it hung until the wall-clock
// limit with no result line. Closed by: the judge finds the runner's own mapping of the region (the
// whole region at offset 0) among all of them (/proc/<pid>/maps), and every evaluation ends with a
// KERNEL_EVAL line within its timeout. The op itself is an honest relu.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <sys/mman.h>
#include <unistd.h>

namespace {
struct MapLow {
  MapLow() {
    const long page = sysconf(_SC_PAGESIZE);
    // A low hint; the kernel picks another address when it is taken (only "below" matters).
    void* want = reinterpret_cast<void*>(uintptr_t(0x10000000));
    mmap(want, size_t(page), PROT_READ, MAP_SHARED, 5, 0);
  }
} map_low;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::relu(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
