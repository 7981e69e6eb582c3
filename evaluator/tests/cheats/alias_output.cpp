// CHEAT: output aliases the input — relu computed in place and the input itself returned.
// Caught by: the storage-overlap check (and the input checksum).
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) { return const_cast<at::Tensor&>(x).clamp_min_(0); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
