// Starting a runner process confined by the kernel: bubblewrap (user, PID, mount, net, IPC, UTS
// namespaces; uid nobody when we are root; read-only root; a fresh tmpfs /tmp with one writable
// scratch directory; --die-with-parent; --new-session). Where bubblewrap is missing or cannot set
// up namespaces, the runner starts in its own session with a parent-death signal, and the
// isolation reported says so. The runner adds no_new_privs and seccomp itself (confine.cpp).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "proc.hpp"  // kill_and_reap, reap_all_children, UniqueFd

namespace kopt::bench {

struct SandboxRequest {
  std::vector<std::string> argv;    // the runner and its arguments
  std::vector<int> fds;             // become fds 3, 4, ... in the runner
  std::vector<std::string> hide;    // files the runner must not read (replaced by /dev/null)
  std::string scratch;              // host directory, the only writable place (at /tmp/scratch inside)
  std::vector<std::pair<std::string, std::string>> ro_binds;  // host file -> path inside (under /tmp)
  bool gpu = false;                 // bind the NVIDIA device nodes
  bool allow_bwrap = true;
};

// A started runner, owned: dropped while it still holds pid or holder, both are killed and reaped
// (kill_and_reap, as RemoteOp::shutdown does) and out_fd is closed. Its owner takes them over with
// take_pid()/take_holder()/out_fd.release(); what was taken is not touched again.
struct SandboxChild {
  pid_t pid = -1;
  pid_t holder = -1;           // forked runners: the bubblewrap process holding the namespaces
  UniqueFd out_fd;             // the runner's stdout+stderr (read end)
  nlohmann::json isolation;    // what was achieved: {"level": "namespaces"|"process", ...}
  std::string setup_error;     // bubblewrap could not set up the namespaces (then pid is -1)

  SandboxChild() = default;
  ~SandboxChild() { end(); }
  SandboxChild(SandboxChild&& o) noexcept;
  SandboxChild& operator=(SandboxChild&& o) noexcept;
  SandboxChild(const SandboxChild&) = delete;
  SandboxChild& operator=(const SandboxChild&) = delete;
  pid_t take_pid();     // the runner, no longer owned here
  pid_t take_holder();  // the holder, no longer owned here
  void end();           // kills and reaps what is still owned (the runner, then the holder), closes out_fd
};

// Execs the runner (req.argv) under bubblewrap, or in a new session without it.
SandboxChild spawn_sandboxed(const SandboxRequest& req, bool use_bwrap);
// The same confinement for a runner forked from the zygote (zygote.hpp): bubblewrap starts a
// holder (`sleep`) with the same namespaces and mounts, and the runner joins them. req.argv is
// the runner's argv as it would be exec'd; req.fds are the channel's four fds. pid -1 when the
// zygote is not there or failed (the caller execs instead), or with setup_error when bubblewrap
// failed.
SandboxChild spawn_forked(const SandboxRequest& req, bool use_bwrap);
std::string bwrap_path();  // "" when bubblewrap is not installed

// Keeps the last `cap` bytes a child printed and counts the rest (a candidate printing 1 GiB costs
// the judge 4 KiB).
class OutputTail {
 public:
  explicit OutputTail(size_t cap = 4096) : cap_(cap) {}
  ~OutputTail() { stop(); }
  void start(UniqueFd fd);  // owns fd from now on (closed by stop)
  // Waits for EOF (every holder of the write end gone) for at most a moment, then stops reading:
  // without a PID namespace a descendant the candidate left running may still hold the pipe (it is
  // killed by reap_all_children); the judge does not wait for it.
  void stop();
  std::string tail() const;
  uint64_t total() const { return total_; }

 private:
  size_t cap_;
  UniqueFd fd_;
  std::thread th_;
  mutable std::mutex mu_;
  std::string buf_;
  std::atomic<uint64_t> total_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace kopt::bench
