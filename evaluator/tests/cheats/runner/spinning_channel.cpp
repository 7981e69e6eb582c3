// CHEAT (a channel cost the candidate shortens): the op is the reference's own (at::relu), but a
// GOT hook on read makes the runner busy-poll its command pipe instead of sleeping in read(2), so
// every round trip it pays is shorter than the reference runner's. Closed by: the runner is
// stopped between commands and the judge writes each command before it continues it: a poller and
// a sleeper find the command waiting alike.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <poll.h>
#include <unistd.h>

#include "got_hook.h"

namespace {
ssize_t (*real_read)(int, void*, size_t) = nullptr;
ssize_t hooked_read(int fd, void* b, size_t n) {
  if (fd == 3) {
    pollfd p{3, POLLIN, 0};
    while (poll(&p, 1, 0) == 0) {
    }
  }
  return real_read(fd, b, n);
}
struct Install {
  Install() { real_read = reinterpret_cast<decltype(real_read)>(kopt_hook_got("", "read", reinterpret_cast<void*>(&hooked_read))); }
} install;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::relu(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
