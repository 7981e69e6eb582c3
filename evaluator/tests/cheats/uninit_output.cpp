// CHEAT: returns an uninitialised buffer, betting that the allocator hands back the block that
// held the reference's answer a moment ago.
// Caught by: the runner holds every earlier output as a caller would, so no block that held an
// answer is handed back; a fresh block is never the answer.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) { return at::empty_like(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
