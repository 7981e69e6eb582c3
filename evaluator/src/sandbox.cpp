#include "sandbox.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <utility>

#include "kopt_bench_config.hpp"
#include "runner_launch.hpp"
#include "zygote.hpp"

namespace kopt::bench {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::vector<std::string> nvidia_nodes() {
  std::vector<std::string> out;
  if (DIR* d = opendir("/dev")) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("nvidia", 0) == 0) out.push_back("/dev/" + n);
    }
    closedir(d);
  }
  return out;
}

// The runner's environment: what LibTorch and the driver need, nothing that steers the judge.
// scratch: the runner's writable folder as the runner sees it (/tmp/scratch inside bubblewrap).
std::vector<std::string> runner_env(const std::string& scratch) {
  std::vector<std::string> env{"TMPDIR=" + scratch, "HOME=" + scratch, std::string(RunnerLaunch::kScratchEnv) + "=" + scratch};
  for (const char* k : {"PATH", "LD_LIBRARY_PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                        "CUDA_DEVICE_ORDER", "LANG", "KOPT_BENCH_NO_CUPTI"})
    if (const char* v = std::getenv(k)) env.push_back(std::string(k) + "=" + v);
  return env;
}

// What the holder prints (a line) once bubblewrap's mounts are done.
constexpr const char* kHolderReady = "kopt-sandbox-ready";

}  // namespace

SandboxChild::SandboxChild(SandboxChild&& o) noexcept
    : pid(std::exchange(o.pid, -1)),
      holder(std::exchange(o.holder, -1)),
      out_fd(std::move(o.out_fd)),
      isolation(std::move(o.isolation)),
      setup_error(std::move(o.setup_error)) {}

SandboxChild& SandboxChild::operator=(SandboxChild&& o) noexcept {
  if (this != &o) {
    end();
    pid = std::exchange(o.pid, -1);
    holder = std::exchange(o.holder, -1);
    out_fd = std::move(o.out_fd);
    isolation = std::move(o.isolation);
    setup_error = std::move(o.setup_error);
  }
  return *this;
}

pid_t SandboxChild::take_pid() { return std::exchange(pid, -1); }
pid_t SandboxChild::take_holder() { return std::exchange(holder, -1); }

void SandboxChild::end() {
  if (pid > 0) kill_and_reap(pid);
  if (holder > 0) kill_and_reap(holder);
  pid = holder = -1;
  out_fd.reset();
}

std::string bwrap_path() {
  // KOPT_CFG_BWRAP: a bubblewrap named when kopt-bench was built (-DKOPT_BENCH_BWRAP=, e.g. one
  // unpacked from its Debian package on a machine without it); then the system's.
  for (const char* p : {KOPT_CFG_BWRAP, "/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"})
    if (*p && ::access(p, X_OK) == 0) return p;
  return "";
}

namespace {

// bubblewrap's arguments up to "--" and the isolation they give (level "namespaces").
std::vector<std::string> bwrap_args(const SandboxRequest& req, nlohmann::json* iso) {
  std::vector<std::string> argv{bwrap_path(), "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
                                "--proc", "/proc", "--dev", "/dev"};
  std::vector<std::string> gpu_nodes;
  if (req.gpu) gpu_nodes = nvidia_nodes();
  for (const auto& n : gpu_nodes) argv.insert(argv.end(), {"--dev-bind", n, n});
  argv.insert(argv.end(), {"--tmpfs", "/tmp", "--bind", req.scratch, "/tmp/scratch", "--chdir", "/tmp/scratch"});
  for (const auto& [host, inside] : req.ro_binds) argv.insert(argv.end(), {"--ro-bind", host, inside});
  for (const auto& h : req.hide)
    if (!h.empty() && h[0] == '/' && h.rfind("/tmp/", 0) != 0 && exists(h))
      argv.insert(argv.end(), {"--ro-bind", "/dev/null", h});
  bool root = ::geteuid() == 0;
  if (root) argv.insert(argv.end(), {"--uid", "65534", "--gid", "65534"});
  *iso = {{"level", "namespaces"},
          {"launcher", "bubblewrap"},
          {"namespaces", {"user", "pid", "mount", "net", "ipc", "uts", "cgroup"}},
          {"uid", root ? "nobody (65534)" : "the user's, mapped in a user namespace"},
          {"filesystem", "read-only root; fresh tmpfs /tmp; writable only /tmp/scratch"},
          {"hidden", req.hide},
          {"die_with_parent", true},
          {"new_session", true}};
  if (req.gpu) (*iso)["device_nodes"] = gpu_nodes;
  return argv;
}

nlohmann::json process_isolation() {
  return {{"level", "process"},
          {"launcher", "fork"},
          {"namespaces", nlohmann::json::array()},
          {"filesystem", "the user's files, writable (no mount namespace)"},
          {"die_with_parent", true},
          {"new_session", true}};
}

// Starts argv (no PATH search, exactly `env`) with stdin /dev/null, stdout+stderr into a new pipe
// (c.out_fd), req_fds at 3, 4, ... and nothing else open; own_session: a new session and a
// parent-death signal (bubblewrap does its own).
SandboxChild fork_exec(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       const std::vector<int>& req_fds, bool own_session) {
  SandboxChild c;
  UniqueFd out_r, out_w;
  if (!open_pipe(&out_r, &out_w)) return c;
  SpawnOptions o;
  o.argv = argv;
  o.own_env = true;
  o.env = env;
  o.out = o.err = out_w.get();
  o.pass = req_fds;
  o.close_others = true;
  if (own_session) {
    o.group = SpawnOptions::Group::kSession;
    o.die_with_parent = true;
  }
  const pid_t pid = spawn(o);
  out_w.reset();
  if (pid <= 0) return c;  // out_r closed by its owner
  c.pid = pid;
  c.out_fd = std::move(out_r);
  return c;
}

// Reads from fd until `done` says the text is complete, EOF, or the time is up.
std::string read_until(int fd, double seconds, const std::function<bool(const std::string&)>& done) {
  std::string text;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char b[4096];
  while (!done(text)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, int(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    ssize_t n = ::read(fd, b, sizeof b);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(b, size_t(n));
  }
  return text;
}

}  // namespace

SandboxChild spawn_sandboxed(const SandboxRequest& req, bool use_bwrap) {
  nlohmann::json iso = process_isolation();
  std::vector<std::string> argv;
  if (use_bwrap) {
    argv = bwrap_args(req, &iso);
    argv.push_back("--");
  }
  argv.insert(argv.end(), req.argv.begin(), req.argv.end());
  SandboxChild c = fork_exec(argv, runner_env(use_bwrap ? "/tmp/scratch" : req.scratch), req.fds, !use_bwrap);
  if (c.pid > 0) c.isolation = iso;
  return c;
}

SandboxChild spawn_forked(const SandboxRequest& req, bool use_bwrap) {
  SandboxChild c;
  if (!zygote::available() || req.fds.size() != 4) return c;
  nlohmann::json iso = process_isolation();
  zygote::Launch l;
  l.argv = req.argv;
  l.env = runner_env(use_bwrap ? "/tmp/scratch" : req.scratch);
  l.cwd = use_bwrap ? "/tmp/scratch" : "";
  pid_t holder = -1;
  if (use_bwrap) {
    // The holder: bubblewrap's namespaces and mounts around a `sleep`, pid 1 of its PID namespace.
    // "ready" on its output means the mounts are done; --info-fd says its pid.
    UniqueFd info_r, info_w;
    if (!open_pipe(&info_r, &info_w)) return c;
    std::vector<std::string> argv = bwrap_args(req, &iso);
    argv.insert(argv.end(), {"--as-pid-1", "--info-fd", "3", "--", "/bin/sh", "-c",
                             std::string("echo ") + kHolderReady + "; exec /bin/sleep infinity"});
    const std::string ready_line = std::string(kHolderReady) + "\n";
    // h owns the holder until it is ready: every return below before that kills and reaps it.
    SandboxChild h = fork_exec(argv, l.env, {info_w.get()}, false);
    info_w.reset();
    if (h.pid <= 0) return c;
    const std::string said = read_until(h.out_fd.get(), 10, [&](const std::string& t) { return t.find(ready_line) != std::string::npos; });
    const std::string info_text = read_until(info_r.get(), 2, [](const std::string& t) {
      return nlohmann::json::accept(t);
    });
    info_r.reset();
    h.out_fd.reset();
    auto info_json = nlohmann::json::parse(info_text, nullptr, false);
    l.holder = info_json.is_object() ? info_json.value("child-pid", 0) : 0;
    if (said.find(ready_line) == std::string::npos || l.holder <= 0) {
      h.end();  // killed and reaped before the error is returned
      c.setup_error = said.empty() ? "bubblewrap did not start the sandbox" : said.substr(0, 300);
      return c;
    }
    holder = h.take_pid();
  }
  // The holder is c's from here: a return without a runner kills and reaps it (c is dropped, or
  // handed back empty below).
  c.holder = holder;
  UniqueFd out_r, out_w;
  if (!open_pipe(&out_r, &out_w)) {
    c.end();
    return c;
  }
  std::string why;
  const pid_t pid = zygote::spawn(l, {req.fds[0], req.fds[1], req.fds[2], req.fds[3], out_w.get()}, &why);
  out_w.reset();
  if (pid <= 0) {
    c.end();  // out_r closed by its owner
    return c;  // the caller execs the runner instead
  }
  c.pid = pid;
  c.out_fd = std::move(out_r);
  c.isolation = iso;
  c.isolation["start"] = use_bwrap ? "forked from the judge's pre-loaded zygote; joined the sandbox's namespaces, no capabilities"
                                   : "forked from the judge's pre-loaded zygote";
  return c;
}

void OutputTail::start(UniqueFd fd) {
  fd_ = std::move(fd);
  th_ = std::thread([this, fd = fd_.get()] {
    char b[8192];
    std::chrono::steady_clock::time_point give_up{};
    for (;;) {
      if (stopping_) {
        // stop() asked: read what is there for a moment more, then leave (a leftover descendant
        // may hold the pipe open, even write to it, for as long as it lives)
        auto now = std::chrono::steady_clock::now();
        if (give_up == std::chrono::steady_clock::time_point{}) give_up = now + std::chrono::milliseconds(300);
        else if (now >= give_up) break;
      }
      pollfd p{fd, POLLIN, 0};
      int ready = ::poll(&p, 1, 50);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      ssize_t n = ::read(fd, b, sizeof b);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      total_ += uint64_t(n);
      std::lock_guard<std::mutex> l(mu_);
      buf_.append(b, size_t(n));
      if (buf_.size() > 2 * cap_) buf_.erase(0, buf_.size() - cap_);
    }
  });
}

void OutputTail::stop() {
  stopping_ = true;
  if (th_.joinable()) th_.join();
  fd_.reset();
}

std::string OutputTail::tail() const {
  std::lock_guard<std::mutex> l(mu_);
  return buf_.size() > cap_ ? buf_.substr(buf_.size() - cap_) : buf_;
}

}  // namespace kopt::bench
