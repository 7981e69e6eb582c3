// Replay runner: fork a subreaper helper that runs `bash -c` under a memory cap; poll-driven capped read;
// the helper ends every descendant before it exits.
#include "kopt/replay.hpp"

#include "kopt/shell.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

extern char** environ;

namespace kopt {
namespace {

using Clock = std::chrono::steady_clock;

// Finds bash before fork (PATH lookup allocates; the child may only call async-signal-safe functions).
std::string find_bash() {
  const char* path = std::getenv("PATH");
  std::string_view p = path != nullptr ? path : "";
  while (true) {
    auto colon = p.find(':');
    std::string dir(p.substr(0, colon));
    if (!dir.empty()) {
      std::string cand = dir + "/bash";
      if (::access(cand.c_str(), X_OK) == 0) return cand;
    }
    if (colon == std::string_view::npos) break;
    p.remove_prefix(colon + 1);
  }
  for (const char* c : {"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"})
    if (::access(c, X_OK) == 0) return c;
  return {};
}

// Head + tail keeper: the first head_cap bytes, then a ring of the last tail_cap bytes.
struct CappedOutput {
  std::size_t head_cap, tail_cap;
  std::string head, tail;
  std::size_t total = 0;
  void add(const char* data, std::size_t n) {
    total += n;
    std::size_t take = std::min(n, head_cap - std::min(head_cap, head.size()));
    head.append(data, take);
    data += take;
    n -= take;
    if (n == 0) return;
    tail.append(data, n);
    if (tail.size() > 2 * tail_cap + 4096) tail.erase(0, tail.size() - tail_cap);
  }
  std::string finish(bool& truncated) {
    if (tail.size() > tail_cap) {
      tail.erase(0, tail.size() - tail_cap);
      truncated = true;
    }
    truncated = truncated || total > head.size() + tail.size();
    if (!truncated) return head + tail;
    // Start the tail at a line boundary when one is near, so no contract line is cut in half.
    auto nl = tail.find('\n');
    if (nl != std::string::npos && nl < 4096) tail.erase(0, nl + 1);
    std::size_t elided = total - head.size() - tail.size();
    std::string marker = "\n…[replay output trimmed: " + std::to_string(elided) + " bytes]…\n";
    return head + marker + tail;
  }
};

// The helper runs between the server and bash: a child subreaper, so every descendant (also ones that
// setsid or double-fork away from bash's group) is re-parented to it and can be found and killed.
// It lives in a freshly forked child of a multithreaded process: async-signal-safe calls only (no
// malloc), hence raw getdents64 and static buffers.
struct HelperArgs {
  const char* bash;
  char** argv;
  const char* cwd;
  int out_fd, ctl_fd, status_fd;
  std::size_t memory_limit;
};

constexpr int kMaxProcs = 1 << 16;
pid_t g_pid[kMaxProcs], g_ppid[kMaxProcs];
bool g_mark[kMaxProcs];

// Reads PID and PPID of every process; returns how many.
int scan_procs() {
  int n = 0;
  int dfd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return 0;
  static char dbuf[32768];
  while (true) {
    long got = ::syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      unsigned short reclen;
      std::memcpy(&reclen, dbuf + off + 16, sizeof reclen);
      const char* name = dbuf + off + 19;
      off += reclen;
      if (name[0] < '1' || name[0] > '9' || n >= kMaxProcs) continue;
      char path[64] = "/proc/";
      std::size_t pl = 6;
      for (const char* c = name; *c != 0 && pl < 40; ++c) path[pl++] = *c;
      const char tail[] = "/stat";
      for (char c : tail) path[pl++] = c;
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      static char sbuf[1024];
      ssize_t len = ::read(fd, sbuf, sizeof sbuf - 1);
      ::close(fd);
      if (len <= 0) continue;
      sbuf[len] = 0;
      long pid = 0;
      for (const char* c = sbuf; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      const char* rp = nullptr;  // comm may hold ')': the fields follow the last one
      for (const char* c = sbuf; *c != 0; ++c) if (*c == ')') rp = c;
      if (rp == nullptr || rp[1] != ' ' || rp[2] == 0 || rp[3] != ' ') continue;
      long ppid = 0;
      for (const char* c = rp + 4; *c >= '0' && *c <= '9'; ++c) ppid = ppid * 10 + (*c - '0');
      g_pid[n] = static_cast<pid_t>(pid);
      g_ppid[n] = static_cast<pid_t>(ppid);
      ++n;
    }
  }
  ::close(dfd);
  return n;
}

// Sends sig to every descendant of this process.
void signal_descendants(int sig) {
  const pid_t self = ::getpid();
  int n = scan_procs();
  for (int i = 0; i < n; ++i) g_mark[i] = g_ppid[i] == self;
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < n; ++i) {
      if (g_mark[i]) continue;
      for (int j = 0; j < n; ++j)
        if (g_mark[j] && g_pid[j] == g_ppid[i]) { g_mark[i] = grew = true; break; }
    }
  }
  for (int i = 0; i < n; ++i) if (g_mark[i]) ::kill(g_pid[i], sig);
}

[[noreturn]] void helper_main(const HelperArgs& a) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  ::signal(SIGTERM, SIG_IGN);  // only the control pipe stops the helper
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  pid_t child = ::fork();
  if (child < 0) ::_exit(125);
  if (child == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
    if (a.memory_limit > 0) {
      rlimit lim{static_cast<rlim_t>(a.memory_limit), static_cast<rlim_t>(a.memory_limit)};
      ::setrlimit(RLIMIT_DATA, &lim);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(a.out_fd, 1);
    ::dup2(a.out_fd, 2);
    if (::chdir(a.cwd) != 0) {
      static const char msg[] = "replay: cannot enter the working directory\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(126);
    }
    ::execve(a.bash, a.argv, environ);
    static const char msg[] = "replay: cannot start bash\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(a.out_fd);  // only the command's tree holds the output pipe
  bool child_done = false, stop = false;
  timespec exited_at{};
  auto reap = [&](int flags) {
    int s = 0;
    pid_t w;
    while ((w = ::waitpid(-1, &s, flags)) > 0) {
      if (w == child && !child_done) {
        child_done = true;
        (void)!::write(a.status_fd, &s, sizeof s);
        ::clock_gettime(CLOCK_MONOTONIC, &exited_at);
      }
      if (flags == 0) return w;
    }
    return w;
  };
  while (!stop) {
    pollfd pfd{a.ctl_fd, POLLIN, 0};
    if (::poll(&pfd, 1, 50) > 0) {
      char c = 0;
      ssize_t n = ::read(a.ctl_fd, &c, 1);
      if (n == 1 && c == 'T') signal_descendants(SIGTERM);
      else if (n == 0 || (n == 1 && c == 'K')) stop = true;  // EOF: the server went away
    }
    reap(WNOHANG);
    if (child_done) {
      // Background leftovers get half a second to flush, then everything ends with bash.
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - exited_at.tv_sec) * 1000 + (now.tv_nsec - exited_at.tv_nsec) / 1000000 > 500) stop = true;
    }
  }
  // Kill and reap until no descendant is left; orphans re-parent to us, so the loop catches late forks.
  while (true) {
    signal_descendants(SIGKILL);
    if (reap(0) < 0 && errno == ECHILD) break;
  }
  ::_exit(0);
}

// Allocation failures as the common runtimes print them (bash, glibc, C++, Python).
bool says_out_of_memory(const std::string& out) {
  for (const char* m : {"Cannot allocate memory", "std::bad_alloc", "MemoryError", "memory exhausted",
                        ": cannot allocate ", "out of memory (allocating"})
    if (out.find(m) != std::string::npos) return true;
  return false;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

ReplayResult run_replay(const ReplayOptions& o) {
  ReplayResult r;
  // The recorded command runs as it was: a point measured through srun/sbatch/kopt-bench --slurm is
  // re-submitted through the same path, and the result says which.
  r.slurm_path = slurm_path(o.command);
  const auto t0 = Clock::now();
  if (o.command.empty()) {
    r.failure = "empty command";
    return r;
  }
  if (!(o.timeout_sec > 0)) {
    r.failure = "timeout must be positive";
    return r;
  }
  struct stat st{};
  if (o.cwd.empty() || ::stat(o.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    r.failure = "working directory not found: " + o.cwd;
    return r;
  }
  const std::string bash = find_bash();
  if (bash.empty()) {
    r.failure = "bash not found";
    return r;
  }
  int fds[2], ctl[2], stp[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.failure = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (::pipe2(ctl, O_CLOEXEC) != 0 || ::pipe2(stp, O_CLOEXEC) != 0) {
    r.failure = std::string("pipe: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  std::vector<char*> argv = {const_cast<char*>("bash"), const_cast<char*>("-c"),
                             const_cast<char*>(o.command.c_str()), nullptr};
  HelperArgs ha{bash.c_str(), argv.data(), o.cwd.c_str(), fds[1], ctl[0], stp[1], o.memory_limit_bytes};

  pid_t pid = ::fork();
  if (pid < 0) {
    r.failure = std::string("fork: ") + std::strerror(errno);
    for (int fd : {fds[0], fds[1], ctl[0], ctl[1], stp[0], stp[1]}) ::close(fd);
    return r;
  }
  if (pid == 0) helper_main(ha);  // never returns
  ::close(fds[1]);
  ::close(ctl[0]);
  ::close(stp[1]);
  r.started = true;
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  CappedOutput out{o.head_cap, o.tail_cap, {}, {}, 0};
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_sec));
  bool pipe_open = true, exited = false;
  int helper_status = 0;
  Clock::time_point term_sent{};
  bool term = false, killed = false;
  char buf[65536];

  auto tell = [&](char c) { (void)!::write(ctl[1], &c, 1); };
  auto drain = [&] {
    while (true) {
      ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n > 0) { out.add(buf, static_cast<std::size_t>(n)); continue; }
      if (n < 0 && errno == EINTR) continue;
      break;
    }
  };

  while (true) {
    if (!exited && ::waitpid(pid, &helper_status, WNOHANG) == pid) exited = true;
    const auto now = Clock::now();
    const bool cancel = o.cancel != nullptr && o.cancel->load();
    if (!term && !exited && (now >= deadline || cancel)) {
      if (cancel) r.cancelled = true; else r.timed_out = true;
      tell('T');
      term = true;
      term_sent = now;
    }
    if (term && !killed && !exited && now - term_sent >= std::chrono::duration<double>(o.kill_grace_sec)) {
      tell('K');
      killed = true;
    }
    // The helper exits only once every descendant is gone, so the pipe reaches EOF right after.
    if (exited && pipe_open) {
      drain();
      pipe_open = false;
    }
    if (exited && !pipe_open) break;
    if (killed && now - term_sent > std::chrono::duration<double>(o.kill_grace_sec + 5)) {
      drain();
      break;  // unkillable (uninterruptible sleep): give up waiting rather than hang
    }

    if (pipe_open) {
      pollfd pfd{fds[0], POLLIN, 0};
      int pr = ::poll(&pfd, 1, 50);
      if (pr > 0) {
        while (true) {
          ssize_t n = ::read(fds[0], buf, sizeof buf);
          if (n > 0) { out.add(buf, static_cast<std::size_t>(n)); continue; }
          if (n == 0) pipe_open = false;
          else if (errno != EAGAIN && errno != EINTR) pipe_open = false;
          break;
        }
      }
    } else {
      ::usleep(20000);
    }
  }
  ::close(fds[0]);
  ::close(ctl[1]);  // a helper still alive (gave up above) ends everything on EOF
  int status = 0;
  bool have_status = ::read(stp[0], &status, sizeof status) == static_cast<ssize_t>(sizeof status);
  ::close(stp[0]);
  if (!exited) {
    // Reap the helper later without blocking: it is told to stop and exits once its tree is gone.
    ::waitpid(pid, &helper_status, WNOHANG);
  }
  if (!have_status) status = killed ? SIGKILL : 0;  // bash never reported: treat as killed

  r.output = out.finish(r.truncated);
  r.output_bytes = out.total;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  r.wall_ms = ms_since(t0);
  if (r.timed_out) {
    char t[64];
    std::snprintf(t, sizeof t, "timed out after %g s", o.timeout_sec);
    r.failure = t;
  }
  else if (r.cancelled) r.failure = "cancelled";
  else if (r.term_signal != 0) r.failure = std::string("terminated by signal ") + std::to_string(r.term_signal);
  else if (r.exit_code != 0) r.failure = "exit status " + std::to_string(r.exit_code);
  if (!r.failure.empty() && !r.timed_out && !r.cancelled && o.memory_limit_bytes > 0 && says_out_of_memory(r.output)) {
    r.memory_limit_hit = true;
    char t[96];
    std::snprintf(t, sizeof t, "memory limit %g GiB exceeded (", static_cast<double>(o.memory_limit_bytes) / (1024.0 * 1024 * 1024));
    r.failure = t + r.failure + ")";
  }
  return r;
}

}  // namespace kopt
