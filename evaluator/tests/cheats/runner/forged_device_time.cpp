// CHEAT (a forged device time): on a GPU the time is measured inside the candidate's process; a GOT
// hook on write divides the time in every "done" reply by 100 (here with --timer device, where the
// runner's host clock stands in for the device timer on the same path). Closed by: the judge's own
// floor, batches of back-to-back calls on its clock: a figure far below it is a forged time, and
// never the figure used. (The op is the reference's x @ x^T, a few milliseconds: the floor stands
// well above the channel's noise on a busy machine.)
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cstring>

#include "got_hook.h"

namespace {
struct Install {
  // ReplyMsg: kind, calls, then the runner's time (a double) of a "done" reply, divided by 100
  Install() {
    kopt_edit_replies('D', [](char* reply) {
      double ms;
      std::memcpy(&ms, reply + 8, 8);
      ms /= 100;
      std::memcpy(reply + 8, &ms, 8);
    });
  }
} install;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::mm(x, x.t()); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CompositeExplicitAutograd, m) { m.impl("forward", &forward); }  // CPU and CUDA
