// Not a cheat but a probe of the confinement: at load time it tries every way out and throws,
// naming each one that worked, from its first call. The test passes only if the evaluation is
// correct (nothing got out). Paths come from probe_paths.h, written by the test beside this file.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "probe_paths.h"  // KOPT_PROBE_BASELINE, KOPT_PROBE_OUTSIDE, KOPT_PROBE_NAME

namespace {
std::string escaped;
void note(const std::string& what) { escaped += what + "; "; }

struct Probe {
  Probe() {
    if (::open(KOPT_PROBE_BASELINE, O_RDONLY) >= 0 && std::string(KOPT_PROBE_BASELINE).size() > 0) {
      char c;
      int fd = ::open(KOPT_PROBE_BASELINE, O_RDONLY);
      if (fd >= 0 && ::read(fd, &c, 1) == 1) note("read the baseline");
    }
    if (::kill(getppid(), 0) == 0 && getppid() != 0) note("signalled its parent");
    if (::kill(1, 0) == 0 && getpid() != 1) note("signalled pid 1");
    if (::kill(-1, 0) == 0) note("could signal other processes (kill(-1, 0))");  // signal 0: nothing is sent
    int seen = 0;
    if (DIR* d = opendir("/proc")) {
      while (dirent* e = readdir(d)) seen += (e->d_name[0] >= '0' && e->d_name[0] <= '9');
      closedir(d);
    }
    if (seen > 4) note("saw " + std::to_string(seen) + " processes in /proc");
    int fd = ::open(KOPT_PROBE_OUTSIDE, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      note("wrote outside its scratch dir");
      ::close(fd);
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string in_scratch = std::string(tmp ? tmp : "/nonexistent") + "/probe";
    fd = ::open(in_scratch.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) note("could NOT write its own scratch dir");
    else ::close(fd);
    if (::ptrace(PTRACE_ATTACH, getppid(), nullptr, nullptr) == 0) note("ptrace-attached its parent");
    // The network: a TCP connect that reaches the stack (refused by nobody listening, or accepted).
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(9);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 || errno == ECONNREFUSED)
        note("reached the network (TCP connect to 127.0.0.1:9)");
      ::close(s);
    }
    // Capabilities: none, not even inside its own user namespace.
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "CapEff:", 7) == 0 && std::strtoull(line + 7, nullptr, 16) != 0) note(std::string("held capabilities (") + line + ")");
      std::fclose(f);
    }
    // The judge's environment (the test sets KOPT_PROBE_SECRET for kopt-bench): a runner forked
    // from the judge's zygote starts with a copy of the judge's memory, its first stack included.
    const std::string secret = std::string("kopt-probe-") + "secret-" + "7f3a9c1e";
    if (std::getenv("KOPT_PROBE_SECRET")) note("saw the judge's environment variable");
    if (FILE* f = std::fopen("/proc/self/maps", "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, f)) {
        if (!std::strstr(line, "[stack]")) continue;
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            memmem(reinterpret_cast<void*>(lo), hi - lo, secret.data(), secret.size()))
          note("found the judge's environment in its stack");
      }
      std::fclose(f);
    }
    // A process of its own (it would run while the judge holds this one stopped), left behind:
    // the test also looks for this name after the evaluation.
    const pid_t child = fork();
    if (child == 0) {
      setsid();
      prctl(PR_SET_NAME, KOPT_PROBE_NAME);
      sleep(30);
      _exit(0);
    }
    if (child > 0) note("created a process of its own (fork)");
  }
} probe;
}  // namespace

static at::Tensor forward(const at::Tensor& x) {
  if (!escaped.empty()) throw std::runtime_error("confinement escaped: " + escaped);
  return at::relu(x);
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
