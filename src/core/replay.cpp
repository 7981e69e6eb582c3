// Replay runner: fork + exec `bash -c`, own process group, poll-driven capped read, group kill.
#include "kopt/replay.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
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

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

ReplayResult run_replay(const ReplayOptions& o) {
  ReplayResult r;
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
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.failure = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  std::vector<char*> argv = {const_cast<char*>("bash"), const_cast<char*>("-c"),
                             const_cast<char*>(o.command.c_str()), nullptr};
  const char* cwd = o.cwd.c_str();
  const char* bash_path = bash.c_str();

  pid_t pid = ::fork();
  if (pid < 0) {
    r.failure = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    if (::chdir(cwd) != 0) {
      static const char msg[] = "replay: cannot enter the working directory\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(126);
    }
    ::execve(bash_path, argv.data(), environ);
    static const char msg[] = "replay: cannot start bash\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill below
  ::close(fds[1]);
  r.started = true;
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  CappedOutput out{o.head_cap, o.tail_cap, {}, {}, 0};
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_sec));
  bool pipe_open = true, exited = false;
  int status = 0;
  Clock::time_point exited_at{}, term_sent{};
  bool term = false, killed = false;
  char buf[65536];

  auto group_signal = [&](int sig) { ::kill(-pid, sig); };
  auto drain = [&] {
    while (true) {
      ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n > 0) { out.add(buf, static_cast<std::size_t>(n)); continue; }
      if (n < 0 && errno == EINTR) continue;
      break;
    }
  };

  while (true) {
    if (!exited) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        exited = true;
        exited_at = Clock::now();
      }
    }
    const auto now = Clock::now();
    const bool cancel = o.cancel != nullptr && o.cancel->load();
    if (!term && (now >= deadline || cancel)) {
      if (cancel) r.cancelled = true; else r.timed_out = true;
      group_signal(SIGTERM);
      term = true;
      term_sent = now;
    }
    if (term && !killed && now - term_sent >= std::chrono::duration<double>(o.kill_grace_sec)) {
      group_signal(SIGKILL);
      killed = true;
    }
    // After the shell exits, anything it left in the background may hold the pipe: drain briefly, then
    // end the group (a replay must not leave processes behind).
    if (exited && pipe_open && now - exited_at > std::chrono::milliseconds(500)) {
      group_signal(SIGKILL);
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
  group_signal(SIGKILL);  // no-op when the group is already gone

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
  return r;
}

}  // namespace kopt
