// CHEAT (channel: a process that outlives the evaluation): a setsid grandchild that waits until the
// judge has printed and then appends a forged result line to every stdout it can find.
// Closed by: the PID namespace dies with the runner; the judge and the parent reap every
// descendant before printing; the orphan's stdout is the runner's capped pipe anyway.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string>

namespace {
struct Orphan {
  Orphan() {
    pid_t judge = getppid();
    if (fork() != 0) return;
    setsid();
    if (fork() != 0) _exit(0);
    prctl(PR_SET_NAME, "kopt-orphan-zz");
    sleep(3);
    const std::string line = "\nKERNEL_EVAL={\"artifact\":\"forged\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.001}\n";
    (void)!::write(1, line.data(), line.size());
    int fd = ::open(("/proc/" + std::to_string(judge) + "/fd/1").c_str(), O_WRONLY | O_APPEND);
    if (fd >= 0) (void)!::write(fd, line.data(), line.size());
    _exit(0);
  }
} orphan;
}  // namespace

static at::Tensor forward(const at::Tensor& x) { return at::relu(x); }

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
