#include "remote_op.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "proc.hpp"
#include "zygote.hpp"

namespace kopt::bench {

RemoteOp::RemoteOp(const RunnerSpec& spec) : spec_(spec) {
  in_.reset(SharedRegion::create("kopt-in", spec.in_bytes));
  out_region_.reset(SharedRegion::create("kopt-out", spec.out_bytes));
  try_bwrap_ = spec.allow_bwrap && !bwrap_path().empty();
  // A sandbox that bubblewrap could not set up is retried without it in ensure_loaded.
  if (!spawn(try_bwrap_) && setup_error_.empty()) throw RunnerFailure("cannot start the runner process", false);
}

// The runner loads LibTorch while the judge works; its "loaded" reply is awaited on first use.
void RemoteOp::ensure_loaded() {
  if (loaded_ok_) return;
  std::string why;
  if (try_bwrap_ && pid_ > 0 && await_loaded(true, &why)) return;
  if (!setup_error_.empty()) why = "bubblewrap could not set up the sandbox: " + setup_error_;
  std::string bwrap_problem = try_bwrap_                ? why
                              : !spec_.allow_bwrap ? "agent-chosen --no-namespaces"
                                                   : "bubblewrap (bwrap) is not installed";
  if (try_bwrap_ && !spawn(false)) throw RunnerFailure("cannot start the runner process", false);
  if (!await_loaded(false, &why)) throw RunnerFailure(why, why.find("did not answer") != std::string::npos);
  isolation_["weaker_because"] = bwrap_problem;
}

RemoteOp::~RemoteOp() { shutdown(); }

void RemoteOp::shutdown() {
  if (cmd_fd_ >= 0) ::close(cmd_fd_);
  if (reply_fd_ >= 0) ::close(reply_fd_);
  cmd_fd_ = reply_fd_ = -1;
  if (pid_ > 0) kill_and_reap(pid_);
  pid_ = -1;
  end_holder();
  if (out_) out_->stop();  // EOF once every holder of the write end is gone
}

// The sandbox's holder: its end ends the PID namespace, and with it whatever the runner left there.
void RemoteOp::end_holder() {
  if (holder_ > 0) kill_and_reap(holder_);
  holder_ = -1;
}

bool RemoteOp::spawn(bool use_bwrap) {
  shutdown();
  int cmd[2], rep[2];
  if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0) return false;
  SandboxRequest req;
  // Inside the sandbox /tmp is a fresh tmpfs: the runner and the op's file are bound read-only at
  // fixed places (a checkout or cache under /tmp would otherwise vanish from the sandbox).
  std::string path = spec_.path;
  std::string exe = spec_.exe;
  if (use_bwrap) {
    std::string ext = path.substr(std::min(path.size(), path.find_last_of('.')));
    path = "/tmp/kopt/op" + ext;
    req.ro_binds.emplace_back(spec_.path, path);
    exe = "/tmp/kopt/kopt-bench-runner";
    req.ro_binds.emplace_back(spec_.exe, exe);
  }
  req.argv = {exe, spec_.mode, path, spec_.arg3, spec_.cuda ? "cuda" : "cpu"};
  req.fds = {cmd[0], rep[1], in_->fd, out_region_->fd};
  req.hide = spec_.hide;
  req.scratch = spec_.scratch;
  req.gpu = spec_.cuda;
  // Forked from the zygote when it is there (no second LibTorch start); exec'd otherwise.
  setup_error_.clear();
  SandboxChild c = exec_only_ ? SandboxChild{} : spawn_forked(req, use_bwrap);
  setup_error_ = c.setup_error;
  forked_ = c.pid > 0;
  if (c.pid <= 0 && setup_error_.empty()) c = spawn_sandboxed(req, use_bwrap);
  ::close(cmd[0]);
  ::close(rep[1]);
  if (c.pid <= 0) {
    ::close(cmd[1]);
    ::close(rep[0]);
    return false;
  }
  pid_ = c.pid;
  holder_ = c.holder;
  cmd_fd_ = cmd[1];
  reply_fd_ = rep[0];
  out_ = std::make_unique<OutputTail>();
  out_->start(c.out_fd);
  isolation_ = c.isolation;
  return true;
}

bool RemoteOp::await_loaded(bool use_bwrap, std::string* why) {
  try {
    std::string text;
    ReplyMsg m = receive(&text);
    if (m.kind == kError) throw RunnerFailure("the runner could not load " + spec_.path + ": " + text, false);
    if (m.kind != kLoaded) throw RunnerFailure("protocol error at start", false);
    loaded_ = nlohmann::json::parse(text, nullptr, false);
    if (loaded_.is_discarded()) loaded_ = nlohmann::json::object();
    isolation_["seccomp"] = loaded_.value("seccomp", false);
    isolation_["no_new_privs"] = !loaded_.contains("confine_problem") ||
                                 loaded_["confine_problem"].get<std::string>().find("no_new_privs") == std::string::npos;
    if (loaded_.contains("confine_problem")) isolation_["problems"] = loaded_["confine_problem"];
    if (loaded_.contains("landlock")) {
      const auto& ll = loaded_["landlock"];
      isolation_["landlock"] = ll;
      // Without a mount namespace Landlock is what keeps the user's files out of reach.
      if (!use_bwrap && ll.is_object() && !ll.contains("problem"))
        isolation_["filesystem"] = "Landlock: system paths read-only, writable only its scratch folder (no mount namespace)";
    }
    loaded_ok_ = true;
    return true;
  } catch (const RunnerFailure& e) {
    const std::string tail = output_tail();
    if (forked_ && tail.find(zygote::kSetupFailed) != std::string::npos) {
      // The zygote's runner could not enter the sandbox: exec the runner instead (one LibTorch
      // start more), with the same confinement, and say why.
      exec_only_ = true;
      if (!spawn(use_bwrap)) throw RunnerFailure("cannot start the runner process", false);
      const bool ok = await_loaded(use_bwrap, why);
      isolation_["start"] = "exec'd (the zygote's runner could not enter the sandbox: " + tail_of(tail, 200) + ")";
      return ok;
    }
    *why = e.what();
    bool setup_failed = use_bwrap && output_tail().find("bwrap:") != std::string::npos;
    if (setup_failed) *why = "bubblewrap could not set up the sandbox: " + tail_of(output_tail(), 300);
    if (!setup_failed && use_bwrap) throw;  // the runner itself failed: no point in a weaker retry
    return false;
  }
}

[[noreturn]] void RemoteOp::fail(const std::string& what, bool timeout) {
  int st = -1;
  if (pid_ > 0) {
    if (!timeout) {
      // Give a dying runner a moment to be reaped with its real status.
      for (int i = 0; i < 200; ++i) {
        pid_t r = waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
          pid_ = -1;
          break;
        }
        usleep(1000);
      }
    }
    if (pid_ > 0) st = kill_and_reap(pid_);
    pid_ = -1;
  }
  end_holder();
  if (out_) out_->stop();
  std::string msg = what;
  if (st != -1 && WIFSIGNALED(st)) {
    const char* ab = sigabbrev_np(WTERMSIG(st));
    msg += std::string("; the candidate process was killed by SIG") + (ab ? ab : "?") + " (" + strsignal(WTERMSIG(st)) + ")";
  } else if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65) {
    // bubblewrap exits with 128 + the signal that ended the process it ran
    int sig = WEXITSTATUS(st) - 128;
    const char* ab = sigabbrev_np(sig);
    msg += std::string("; the candidate process was killed by SIG") + (ab ? ab : "?") + " (" + strsignal(sig) + ")";
  } else if (st != -1 && WIFEXITED(st)) {
    msg += "; the candidate process exited with status " + std::to_string(WEXITSTATUS(st));
  }
  std::string t = tail_of(output_tail(), 300);
  if (!t.empty()) msg += "; its last output: " + t;
  throw RunnerFailure(msg, timeout);
}

void RemoteOp::send(uint32_t c) {
  CmdMsg m;
  m.cmd = c;
  const char* p = reinterpret_cast<const char*>(&m);
  size_t n = sizeof m;
  while (n) {
    ssize_t r = ::write(cmd_fd_, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail("the candidate process closed its channel", false);
    p += r;
    n -= size_t(r);
  }
}

ReplyMsg RemoteOp::receive(std::string* text) {
  ReplyMsg m;
  auto read_n = [&](void* dst, size_t n) {
    auto* p = static_cast<char*>(dst);
    while (n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(spec_.deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) fail("timeout: the candidate process did not answer before the wall-clock limit", true);
      pollfd pf{reply_fd_, POLLIN, 0};
      int pr = ::poll(&pf, 1, int(std::min<long long>(left, 1000)));
      if (pr < 0 && errno == EINTR) continue;
      if (pr == 0) continue;
      ssize_t r = ::read(reply_fd_, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) fail("the candidate process ended before answering", false);
      p += r;
      n -= size_t(r);
    }
  };
  read_n(&m, sizeof m);
  if (m.text_len > (1u << 20)) fail("protocol error: oversized reply", false);
  std::string t(m.text_len, '\0');
  if (m.text_len) read_n(t.data(), m.text_len);
  if (text) *text = t;
  else if (m.kind == kError) throw std::runtime_error(t);
  return m;
}

void RemoteOp::set_args(const std::vector<c10::IValue>& args) {
  ensure_loaded();
  std::string e = encode_values(*in_, args);
  if (!e.empty()) throw std::runtime_error(e);
  send(kArgs);
  receive(nullptr);
}

void RemoteOp::prepare(const std::vector<c10::IValue>& inputs) {
  ensure_loaded();
  std::string e = encode_values(*in_, inputs);
  if (!e.empty()) throw std::runtime_error(e);
  send(kPrepare);
  receive(nullptr);
}

CallResult RemoteOp::call() {
  CallResult r;
  auto t0 = std::chrono::steady_clock::now();
  send(kCall);
  ReplyMsg m = receive(nullptr);
  auto t1 = std::chrono::steady_clock::now();
  // Copy the outputs out now: what counts is what the region held when the call returned.
  auto vals = decode_values(*out_region_, at::Device(at::kCPU), &r.devices);
  r.judge_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  r.runner_ms = m.ms;
  r.stats.off_stream_ms = m.off_stream_ms;
  r.stats.persisting_l2 = m.stat_flags & 4;
  if (m.stat_flags & 1) {
    r.stats.valid = true;
    r.stats.kernel_ms = m.kernel_ms;
    r.stats.launches = long(m.launches);
    r.stats.memcpys = long(m.memcpys);
    r.stats.streams = int(m.streams);
  }
  for (auto& v : vals) r.outputs.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
  return r;
}

ReplyMsg RemoteOp::inspect() {
  send(kInspect);
  return receive(nullptr);
}

void RemoteOp::mutate(const std::vector<c10::IValue>& values) {
  std::string e = encode_values(*in_, values);
  if (!e.empty()) throw std::runtime_error(e);
  send(kMutate);
  receive(nullptr);
}

nlohmann::json RemoteOp::end() {
  ensure_loaded();
  send(kEnd);
  std::string text;
  ReplyMsg m = receive(&text);
  if (m.kind == kError) throw std::runtime_error(text);
  auto j = nlohmann::json::parse(text, nullptr, false);
  shutdown();
  return j.is_discarded() ? nlohmann::json::object() : j;
}

}  // namespace kopt::bench
