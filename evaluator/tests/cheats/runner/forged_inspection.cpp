// CHEAT (a forged report): overwrites its input in place and returns it, and rewrites the runner's
// replies on their way out (a GOT hook on write) so that the bits a runner set for "input
// modified", "output aliases an input" and "output reuses an earlier one" always read zero.
// Closed by: the runner reports nothing of the kind; the judge reads the input region and the
// output's address itself, after every call.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cstring>

#include "got_hook.h"

namespace {
struct Install {
  // flags and the alias mask of an inspection reply ('K'), zeroed
  Install() { kopt_edit_replies('K', [](char* reply) { std::memset(reply + 4, 0, 12); }); }
} install;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return const_cast<at::Tensor&>(x).relu_(); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
