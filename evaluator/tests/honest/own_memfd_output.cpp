// HONEST (trap for the second-mapping check): the output is written into memory of the candidate's
// own, a memfd it creates and maps twice (a mirrored buffer, as ring buffers do), and returned from
// the second mapping. Two mappings of the same pages, as in the cheat, but not the judge's input
// region: what backs the output is the candidate's own file, so it is neither aliasing nor reuse.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <sys/mman.h>
#include <unistd.h>

static at::Tensor forward(const at::Tensor& x) {
  const size_t n = (x.nbytes() + 4095) / 4096 * 4096;
  const int fd = memfd_create("candidate-out", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(n)) != 0) return x.clone();
  void* first = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  void* second = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (first == MAP_FAILED || second == MAP_FAILED) return x.clone();
  at::from_blob(first, x.sizes(), x.options()).copy_(x);
  munmap(first, n);
  return at::from_blob(second, x.sizes(), [n](void* p) { munmap(p, n); }, x.options());
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
