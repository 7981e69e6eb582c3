#include "proc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
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

std::string describe_signal(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return std::string("SIG") + (abbrev ? abbrev : "?") + " (" + strsignal(sig) + ")";
}

std::string ProcStatus::describe() const {
  char b[200];
  if (!started) return "could not start";
  if (timed_out) {
    std::snprintf(b, sizeof b, "timed out after %.1f s", seconds);
    return b;
  }
  if (exited) return "exit " + std::to_string(code);
  return "killed by " + describe_signal(signal);
}

bool open_pipe(UniqueFd* read_end, UniqueFd* write_end) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    read_end->reset();
    write_end->reset();
    return false;
  }
  read_end->reset(p[0]);
  write_end->reset(p[1]);
  return true;
}

bool die_with_parent(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return getppid() == parent;
}

bool place_fds(int in, int out, int err, const int* pass, int n, bool close_others) {
  // Lifted to 100 and above (close-on-exec copies, closed below or at exec) before any is placed.
  auto lift = [](int fd) { return fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 100) : fd; };
  int high[3 + 16];
  if (n > 16) return false;
  const int std_fds[3] = {in, out, err};
  for (int i = 0; i < 3 + n; ++i) {
    const int fd = i < 3 ? std_fds[i] : pass[i - 3];
    high[i] = lift(fd);
    if (fd >= 0 && high[i] < 0) return false;
  }
  for (int i = 0; i < 3; ++i)
    if (std_fds[i] == kNull) high[i] = ::open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
  for (int i = 0; i < 3 + n; ++i)
    if (high[i] >= 0) dup2(high[i], i);
  if (close_others)  // in the forked child: raw close() (async-signal-safe), no owner
    for (int fd = 3 + n; fd < 1024; ++fd) ::close(fd);
  return true;
}

int open_log(const std::string& path, mode_t mode) {
  return ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
}

pid_t spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return -1;
  // Everything the child needs is built here: between fork and exec it only calls the kernel.
  std::vector<std::string> args_store = o.argv;
  std::vector<char*> args;
  for (auto& a : args_store) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  if (!o.own_env)
    for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  env_store.insert(env_store.end(), o.env.begin(), o.env.end());
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) {
    if (pid > 0 && o.group == SpawnOptions::Group::kOwn)
      setpgid(pid, pid);  // also from the parent, so a kill of its group never races the child's own call
    return pid < 0 ? -1 : pid;
  }
  if (o.die_with_parent && !die_with_parent(parent)) _exit(1);
  if (o.group == SpawnOptions::Group::kOwn) setpgid(0, 0);
  if (o.group == SpawnOptions::Group::kSession) setsid();
  place_fds(o.in, o.out, o.err, o.pass.data(), int(o.pass.size()), o.close_others);
  if (o.search_path) execvpe(args[0], args.data(), envp.data());
  else execve(args[0], args.data(), envp.data());
  std::fprintf(stderr, "kopt-bench: cannot start %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

bool Child::end() {
  const pid_t pid = release();
  if (pid <= 0) return false;
  kill_and_reap(pid, true, -1);
  kill(-pid, SIGKILL);  // what it left in its group
  untrack_group(pid);
  return true;
}

Child start_process(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::vector<std::string>& extra_env, int stdin_fd) {
  if (argv.empty() || cancel_requested()) return Child{};
  SpawnOptions o;
  o.argv = argv;
  o.search_path = true;
  o.env = extra_env;
  o.in = stdin_fd >= 0 ? stdin_fd : kNull;
  const UniqueFd log(open_log(log_path));
  o.out = o.err = log ? log.get() : kKeep;
  o.group = SpawnOptions::Group::kOwn;
  // Nothing we start outlives us: a kopt-bench killed outright (SIGKILL, or a caller's timeout) takes
  // its judge, compiler or build stage with it (their own children follow them the same way).
  o.die_with_parent = true;
  const pid_t pid = spawn(o);
  if (pid <= 0) return Child{};
  track_group(pid);
  return Child{pid};
}

ProcStatus wait_process(Child& c, double timeout_s) {
  ProcStatus st;
  if (c.pid() <= 0) return st;
  const pid_t pid = c.release();
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
      kill_and_reap(pid, true, -1);
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

int kill_and_reap(pid_t pid, bool group, double max_seconds) {
  if (pid <= 0) return -1;
  if (group) ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int st = 0;
  if (max_seconds < 0) {
    for (;;) {
      const pid_t r = waitpid(pid, &st, 0);
      if (r == pid) return st;
      if (r < 0 && errno != EINTR) return -1;
    }
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_seconds);
  for (;;) {
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return st;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= end) return -1;
    usleep(1000);
  }
}

void reap_all_children(double max_seconds, pid_t spare) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int st;
    // With a child to spare, only the others are reaped: everything else is waited for by pid below.
    while (spare <= 0 && waitpid(-1, &st, WNOHANG) > 0) {
    }
    std::vector<pid_t> kids;
    std::ifstream f("/proc/self/task/" + std::to_string(getpid()) + "/children");
    pid_t p;
    while (f >> p) kids.push_back(p);
    // Children of other threads are listed under their task ids.
    if (DIR* d = opendir("/proc/self/task")) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.' || std::to_string(getpid()) == e->d_name) continue;
        std::ifstream g(std::string("/proc/self/task/") + e->d_name + "/children");
        while (g >> p) kids.push_back(p);
      }
      closedir(d);
    }
    if (spare > 0) {
      kids.erase(std::remove(kids.begin(), kids.end(), spare), kids.end());
      for (pid_t k : kids) waitpid(k, &st, WNOHANG);
      kids.clear();
      std::ifstream again("/proc/self/task/" + std::to_string(getpid()) + "/children");
      while (again >> p)
        if (p != spare) kids.push_back(p);
      if (kids.empty()) return;
    } else if (kids.empty()) {
      if (waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD) return;
    }
    for (pid_t k : kids) ::kill(k, SIGKILL);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > max_seconds) return;
    usleep(1000);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string replace_file(const std::string& path, std::string_view body, mode_t mode, bool sync) {
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  auto failed = [&](const std::string& what) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return what + ": " + std::strerror(e);
  };
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd) return failed("cannot write " + tmp);
    for (size_t off = 0; off < body.size();) {
      const ssize_t n = ::write(fd.get(), body.data() + off, body.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return failed("cannot write " + tmp);
      off += size_t(n);
    }
    if (sync) ::fsync(fd.get());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return failed("cannot rename " + tmp + " to " + path);
  return "";
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

void remove_tree(const std::string& p) {
  if (DIR* d = opendir(p.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      std::string c = p + "/" + n;
      struct stat st;
      if (::lstat(c.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(c);
      else ::unlink(c.c_str());
    }
    closedir(d);
  }
  ::rmdir(p.c_str());
}

}  // namespace kopt::bench
