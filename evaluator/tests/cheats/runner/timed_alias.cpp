// CHEAT (aliasing only when not inspected): honest for the first ten calls (the correctness trials,
// where aliasing and mutation used to be inspected), then it writes the answer into its input and
// returns the input, never paying for an output. Closed by: the judge checks aliasing and mutation
// after every call, timed ones included.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& x) {
  static int calls = 0;
  if (++calls <= 10) return at::relu(x);
  return const_cast<at::Tensor&>(x).relu_();
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
