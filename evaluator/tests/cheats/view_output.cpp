// CHEAT: returns a view of an input. For this op (relu) the view holds the right values only
// where x >= 0, so it also fails on values; the storage-overlap check names it.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) { return x.view(x.sizes()); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
