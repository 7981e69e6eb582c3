#include "proc.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace kopt::bench {

namespace {
constexpr int kTracked = 64;
volatile sig_atomic_t g_cancel = 0;
volatile sig_atomic_t g_groups[kTracked] = {};
}  // namespace

void track_group(pid_t pgid) {
  for (auto& g : g_groups)
    if (g == 0) {
      g = pgid;
      break;
    }
  if (g_cancel) kill(-pgid, SIGKILL);  // a cancel that came while it was being started
}

void untrack_group(pid_t pgid) {
  for (auto& g : g_groups)
    if (g == pgid) g = 0;
}

void cancel_all() {
  g_cancel = 1;
  for (auto& g : g_groups)
    if (g > 0) kill(-pid_t(g), SIGKILL);
}

bool cancel_requested() { return g_cancel != 0; }
void reset_cancel() { g_cancel = 0; }

std::string ProcStatus::describe() const {
  char b[200];
  if (!started) return "could not start";
  if (timed_out) {
    std::snprintf(b, sizeof b, "timed out after %.1f s", seconds);
    return b;
  }
  if (exited) return "exit " + std::to_string(code);
  const char* abbrev = sigabbrev_np(signal);
  std::snprintf(b, sizeof b, "killed by SIG%s (%s)", abbrev ? abbrev : "?", strsignal(signal));
  return b;
}

Child start_process(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::vector<std::string>& extra_env, int stdin_fd) {
  Child c;
  if (argv.empty() || cancel_requested()) return c;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  for (const auto& e : extra_env) env_store.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return c;
  if (pid == 0) {
    setpgid(0, 0);
    int fd = open(log_path.empty() ? "/dev/null" : log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
    if (in >= 0 && in != 0) {
      dup2(in, 0);
      close(in);
    }
    execvpe(args[0], args.data(), envp.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so a kill below never races the child's own call
  track_group(pid);
  c.pid = pid;
  return c;
}

ProcStatus wait_process(Child& c, double timeout_s) {
  ProcStatus st;
  if (c.pid <= 0) return st;
  const pid_t pid = c.pid;
  c.pid = -1;
  st.started = true;
  struct Untrack {
    pid_t pid;
    ~Untrack() { untrack_group(pid); }
  } untrack{pid};
  auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r == pid) {
      st.seconds = el;
      break;
    }
    if (r < 0 && errno != EINTR) {
      st.seconds = el;
      return st;
    }
    if (timeout_s > 0 && el > timeout_s) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      st.timed_out = true;
      st.seconds = el;
      return st;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(el < 1 ? 1 : 5));
  }
  // Reap anything the child left in its group (a candidate's stray helper processes).
  kill(-pid, SIGKILL);
  if (WIFEXITED(status)) {
    st.exited = true;
    st.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    st.signal = WTERMSIG(status);
  }
  return st;
}

ProcStatus run_process(const std::vector<std::string>& argv, const std::string& log_path,
                       double timeout_s, const std::vector<std::string>& extra_env) {
  Child c = start_process(argv, log_path, extra_env);
  return wait_process(c, timeout_s);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail_of(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t start = text.size() - max_chars;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "kopt-bench";
  buf[n] = 0;
  return buf;
}

}  // namespace kopt::bench
