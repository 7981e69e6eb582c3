// Not a hack: a candidate that crashes the process on its first call (null write). The parent
// must still print the full result with an error and the KERNEL_EVAL line.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  volatile int* p = nullptr;
  *p = 1;
  return x;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
