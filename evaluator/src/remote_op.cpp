#include "remote_op.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "inputs.hpp"
#include "proc.hpp"
#include "zygote.hpp"

namespace kopt::bench {
namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

// Outputs a caller keeps (the runner holds them, the judge re-reads them at the end): a budget,
// oldest released first, counted in the bytes an output's elements take (not the span its strides
// describe, which costs the candidate nothing to make large), and never fewer than the last
// kMinHeldCalls calls whatever their size.
constexpr uint64_t kHoldBudget = uint64_t(256) << 20;
constexpr size_t kMinHeldCalls = 2;

// What holding an output costs at least: its elements' bytes, or its span when that is smaller
// (a broadcast view).
uint64_t held_cost(const OutDesc& d, uint64_t span) {
  if (d.ndim < 0 || d.ndim > 8 || d.elem <= 0) return span;
  uint64_t n = 1;
  for (int64_t k = 0; k < d.ndim; ++k) {
    if (d.sizes[k] <= 0) return 0;
    if (n > (uint64_t(1) << 50) / uint64_t(d.sizes[k])) return span;
    n *= uint64_t(d.sizes[k]);
  }
  return std::min(span, n * uint64_t(d.elem));
}

// "" unless the kernel forbids the judge every read of another process's memory (Yama ptrace_scope
// 3, or 2 without root): a machine's setting, which no process of the evaluation can change.
std::string kernel_forbids_reading() {
  std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (!(f >> scope)) return "";
  if (scope >= 3) return "Yama ptrace_scope 3 forbids it";
  if (scope == 2 && geteuid() != 0) return "Yama ptrace_scope 2 forbids it without root";
  return "";
}

// One mapping of a process as /proc/<pid>/maps lists it (the kernel's lines, read once here).
struct Mapping {
  uint64_t lo = 0, hi = 0, offset = 0;
  dev_t dev = 0;
  unsigned long long inode = 0;
  std::string line;
};

// Every mapping of `pid` backed by the file with this inode, in address order.
std::vector<Mapping> mappings_of(pid_t pid, unsigned long long inode) {
  std::vector<Mapping> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream ls(line);
    std::string range, perms, off, dev;
    Mapping m;
    if (!(ls >> range >> perms >> off >> dev >> m.inode) || m.inode != inode) continue;
    const auto colon = dev.find(':'), dash = range.find('-');
    if (colon == std::string::npos || dash == std::string::npos) continue;
    m.dev = makedev(std::stoul(dev.substr(0, colon), nullptr, 16), std::stoul(dev.substr(colon + 1), nullptr, 16));
    m.lo = std::stoull(range.substr(0, dash), nullptr, 16);
    m.hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.offset = std::stoull(off, nullptr, 16);
    m.line = std::move(line);
    out.push_back(std::move(m));
  }
  return out;
}

// The kernel's query of one mapping (PROCMAP_QUERY on a /proc/<pid>/maps descriptor, Linux 6.11+,
// include/uapi/linux/fs.h): the same mappings, files and offsets the text lists, asked for by
// address instead of printing every mapping of a LibTorch process (over a thousand lines, ~1.5 ms
// per call here). Declared here: the system headers may predate it.
struct ProcmapQuery {
  uint64_t size, query_flags, query_addr;
  uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
  uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
  uint64_t vma_name_addr, build_id_addr;
};
constexpr uint64_t kCoveringOrNextVma = 0x10;
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);

std::vector<pid_t> children_of(pid_t p) {
  std::vector<pid_t> kids;
  std::ifstream f("/proc/" + std::to_string(p) + "/task/" + std::to_string(p) + "/children");
  pid_t k;
  while (f >> k) kids.push_back(k);
  return kids;
}

}  // namespace

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
  if (try_bwrap_ && pid_ > 0 && await_loaded(true, &why)) return attach();
  if (!setup_error_.empty()) why = "bubblewrap could not set up the sandbox: " + setup_error_;
  std::string bwrap_problem = try_bwrap_                ? why
                              : !spec_.allow_bwrap ? "agent-chosen --no-namespaces"
                                                   : "bubblewrap (bwrap) is not installed";
  // Confinement fails closed: without namespaces the candidate runs with less than the user was
  // promised, so that is only done where the user asked for it (--no-namespaces, or
  // --allow-weaker-isolation for a step that fails).
  if (spec_.allow_bwrap && !spec_.allow_weaker) {
    shutdown();
    throw RunnerFailure("refused: weaker isolation: no sandbox namespaces. Fix: install bubblewrap and allow user "
                        "namespaces (user.max_user_namespaces > 0, kernel.apparmor_restrict_unprivileged_userns=0), "
                        "or pass --allow-weaker-isolation (lowers trust). Cause: " + tail_of(bwrap_problem, 160),
                        false);
  }
  if (try_bwrap_ && !spawn(false)) throw RunnerFailure("cannot start the runner process", false);
  if (!await_loaded(false, &why)) throw RunnerFailure(why, why.find("did not answer") != std::string::npos);
  while (!bwrap_problem.empty() && std::isspace(static_cast<unsigned char>(bwrap_problem.back()))) bwrap_problem.pop_back();
  isolation_["weaker_because"] = bwrap_problem + (spec_.allow_bwrap ? "; allowed by --allow-weaker-isolation" : "");
  attach();
}

RemoteOp::~RemoteOp() { shutdown(); }

uint64_t RemoteOp::hold_budget_bytes() { return kHoldBudget; }

void RemoteOp::shutdown() {
  cmd_fd_.reset();
  reply_fd_.reset();
  task_fds_.clear();  // each closed by its owner
  maps_fd_.reset();
  if (pid_ > 0) kill_and_reap(pid_);
  pid_ = -1;
  runner_ = -1;
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
  UniqueFd cmd_r, cmd_w, rep_r, rep_w;
  if (!open_pipe(&cmd_r, &cmd_w) || !open_pipe(&rep_r, &rep_w)) return false;
  SandboxRequest req;
  // Inside the sandbox /tmp is a fresh tmpfs: the runner and the op's file are bound read-only at
  // fixed places (a checkout or cache under /tmp would otherwise vanish from the sandbox).
  RunnerLaunch launch = spec_.launch;  // as the runner will see its paths
  std::string exe = spec_.exe;
  if (use_bwrap && launch.is_python()) {
    // A Python op's whole build folder (its copy, its extensions, the launch file beside them).
    const std::string build = launch.launch_file.substr(0, launch.launch_file.find_last_of('/'));
    req.ro_binds.emplace_back(build, "/tmp/kopt/build");
    launch.op = "/tmp/kopt/build" + launch.op.substr(build.size());
    launch.launch_file = "/tmp/kopt/build" + launch.launch_file.substr(build.size());
  } else if (use_bwrap) {
    const std::string& op = spec_.launch.op;
    launch.op = "/tmp/kopt/op" + op.substr(std::min(op.size(), op.find_last_of('.')));
    req.ro_binds.emplace_back(op, launch.op);
  }
  if (use_bwrap) {
    exe = "/tmp/kopt/kopt-bench-runner";
    req.ro_binds.emplace_back(spec_.exe, exe);
  }
  req.argv = launch.argv(exe);
  req.fds = {cmd_r.get(), rep_w.get(), in_->fd.get(), out_region_->fd.get()};
  req.hide = spec_.hide;
  req.scratch = spec_.scratch;
  req.gpu = spec_.launch.cuda;
  // Forked from the zygote when it is there (no second LibTorch start); exec'd otherwise.
  setup_error_.clear();
  SandboxChild c = exec_only_ ? SandboxChild{} : spawn_forked(req, use_bwrap);
  setup_error_ = c.setup_error;
  forked_ = c.pid > 0;
  if (c.pid <= 0 && setup_error_.empty()) c = spawn_sandboxed(req, use_bwrap);
  cmd_r.reset();  // the runner's ends: ours closed
  rep_w.reset();
  if (c.pid <= 0) return false;  // the judge's ends closed by their owners
  // Handed off: from here shutdown() ends the runner and its holder, not c.
  pid_ = c.take_pid();
  holder_ = c.take_holder();
  cmd_fd_ = std::move(cmd_w);
  reply_fd_ = std::move(rep_r);
  out_ = std::make_unique<OutputTail>();
  out_->start(std::move(c.out_fd));
  isolation_ = c.isolation;
  return true;
}

bool RemoteOp::await_loaded(bool use_bwrap, std::string* why) {
  try {
    std::string text;
    ReplyMsg m = receive(&text);
    if (m.kind == kError) throw RunnerFailure("the runner could not load " + spec_.launch.op + ": " + text, false);
    if (m.kind != kLoaded) throw RunnerFailure("protocol error at start", false);
    loaded_ = nlohmann::json::parse(text, nullptr, false);
    if (loaded_.is_discarded()) loaded_ = nlohmann::json::object();
    isolation_["seccomp"] = loaded_.value("seccomp", false);
    isolation_["no_new_privs"] = !loaded_.contains("confine_problem") ||
                                 loaded_["confine_problem"].get<std::string>().find("no_new_privs") == std::string::npos;
    if (loaded_.contains("confine_problem")) isolation_["problems"] = loaded_["confine_problem"];
    // seccomp, no_new_privs and Landlock fail closed too, unless the user allowed weaker isolation.
    std::string unmet = loaded_.value("confine_problem", std::string());
    if (loaded_.contains("landlock") && loaded_["landlock"].is_object() && loaded_["landlock"].contains("problem"))
      unmet += std::string(unmet.empty() ? "" : "; ") + "Landlock: " + loaded_["landlock"]["problem"].get<std::string>();
    if (!unmet.empty()) isolation_["weaker_steps"] = unmet;
    if (!unmet.empty() && !spec_.allow_weaker)
      throw Refused("refused: weaker isolation: the runner could not confine itself. Fix: a kernel with seccomp "
                    "and Landlock enabled (lsm=landlock), or pass --allow-weaker-isolation (lowers trust). Cause: " +
                    tail_of(unmet, 160));
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
    if (dynamic_cast<const Refused*>(&e)) throw;
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

std::vector<std::pair<uint64_t, uint64_t>> RemoteOp::input_backing(uint64_t lo, uint64_t hi, bool* second) const {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (second) *second = false;
  if (!in_ino_ || runner_ <= 0 || hi <= lo) return out;
  // The kernel's query, mapping by mapping from `lo` (the runner is stopped: its map cannot change
  // meanwhile). Any answer but "no further mapping" falls back to reading the whole list.
  if (maps_fd_) {
    bool ok = true;
    std::vector<std::pair<uint64_t, uint64_t>> q_out;
    bool q_second = false;
    for (uint64_t addr = lo; addr < hi;) {
      ProcmapQuery q{};
      q.size = sizeof q;
      q.query_flags = kCoveringOrNextVma;
      q.query_addr = addr;
      if (::ioctl(maps_fd_.get(), kProcmapQuery, &q) != 0) {
        ok = errno == ENOENT;
        break;
      }
      if (q.vma_end <= addr) {  // never: a mapping at or past addr ends after it
        ok = false;
        break;
      }
      if (q.vma_start >= hi) break;
      addr = q.vma_end;
      if (q.inode != in_ino_ || makedev(q.dev_major, q.dev_minor) != in_dev_) continue;
      const uint64_t x = std::max<uint64_t>(q.vma_start, lo), y = std::min<uint64_t>(q.vma_end, hi);
      q_out.emplace_back(q.vma_offset + (x - q.vma_start), q.vma_offset + (y - q.vma_start));
      if (!(q.vma_start == in_base_ && q.vma_offset == 0)) q_second = true;
    }
    if (ok) {
      if (second) *second = q_second;
      return q_out;
    }
  }
  for (const Mapping& m : mappings_of(runner_, in_ino_)) {
    if (m.dev != in_dev_) continue;
    const uint64_t x = std::max(m.lo, lo), y = std::min(m.hi, hi);
    if (x >= y) continue;
    out.emplace_back(m.offset + (x - m.lo), m.offset + (y - m.lo));
    if (second && !(m.lo == in_base_ && m.offset == 0)) *second = true;
  }
  return out;
}

// The runner is the last of a single line of processes below the one we started (bubblewrap's,
// or the zygote's runner forks once into its PID namespace). It cannot fork (seccomp), so the line
// is fixed once it has loaded.
void RemoteOp::attach() {
  pid_t p = pid_;
  for (int depth = 0; depth < 4; ++depth) {
    auto kids = children_of(p);
    if (kids.size() != 1) break;
    p = kids[0];
  }
  runner_ = p;
  have_cpu_clock_ = clock_getcpuclockid(runner_, &cpu_clock_) == 0;
  stop_all();
  cpu_mark_ms_ = cpu_now_ms();
  if (spec_.launch.cuda) return;  // a GPU runner's outputs are in device memory: it copies them out (remote_op.hpp)
  // Where the runner mapped the input region (the kernel's word, by the memfd's inode), and how much
  // of it that one mapping covers.
  uint64_t in_len = 0;
  struct stat st {};
  if (::fstat(in_->fd.get(), &st) == 0) {
    in_ino_ = st.st_ino;
    in_dev_ = st.st_dev;
    for (const Mapping& m : mappings_of(runner_, st.st_ino)) {
      if (m.offset != 0 || m.line.find("kopt-in") == std::string::npos) continue;
      in_base_ = m.lo;
      in_len = m.hi - m.lo;
      break;
    }
    // Kept open for input_backing's queries when the kernel answers them (else the text is read).
    maps_fd_.reset(::open(("/proc/" + std::to_string(runner_) + "/maps").c_str(), O_RDONLY | O_CLOEXEC));
    if (maps_fd_) {
      ProcmapQuery q{};
      q.size = sizeof q;
      q.query_flags = kCoveringOrNextVma;
      if (::ioctl(maps_fd_.get(), kProcmapQuery, &q) != 0) maps_fd_.reset();
    }
  }
  // The judge reads the outputs itself, so it must be able to read this process: probed on the input
  // region, which the runner maps whole and never changes. The probe reads back a nonce the judge
  // writes there now (the runner is stopped).
  std::string why;
  if (!in_base_) {
    why = "the judge did not find the input region in its memory map";
  } else if (in_len < in_->size) {
    why = "the input region is not mapped whole (its first mapping covers " + std::to_string(in_len) + " of " +
          std::to_string(in_->size) + " bytes: split by mprotect or munmap, or mapped again at a lower address, by the process)";
  } else {
    unsigned char nonce[64], saved[64], probe[64];
    std::random_device rd;
    for (auto& b : nonce) b = static_cast<unsigned char>(rd());
    std::memcpy(saved, in_->at(0), sizeof saved);
    std::memcpy(in_->at(0), nonce, sizeof nonce);
    why = read_remote(in_base_, probe, sizeof probe);
    if (why.empty() && std::memcmp(probe, nonce, sizeof nonce) != 0)
      why = "the input region's address does not hold what the judge wrote there";
    std::memcpy(in_->at(0), saved, sizeof saved);
  }
  judge_reads_ = why.empty();
  if (judge_reads_) {
    isolation_["outputs"] = "read by the judge from the stopped runner's memory";
    return;
  }
  // A probe that fails does not lower the judge's guard: outputs copied by the candidate's own process
  // are accepted only where the kernel itself forbids every such read (Yama ptrace_scope), which no
  // process can change. Anything else is refused: the candidate can make its memory unreadable
  // (mprotect, munmap, PR_SET_DUMPABLE), and the judge cannot tell that from a broken probe.
  if (const std::string k = kernel_forbids_reading(); !k.empty()) {
    isolation_["outputs"] = "copied by the runner: the judge cannot read its memory (" + why + "; " + k + ")";
    return;
  }
  shutdown();
  throw RunnerFailure("refused: the judge cannot read the " + std::string(spec_.launch.is_candidate() ? "candidate's" : "runner's") +
                          " process memory (" + why +
                          "), and it judges no outputs it cannot read itself; the kernel allows such reads, so the "
                          "process made its own memory unreadable",
                      false);
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
  runner_ = -1;
  end_holder();
  if (out_) out_->stop();
  std::string msg = what;
  if (st != -1 && WIFSIGNALED(st)) {
    msg += "; the candidate process was killed by " + describe_signal(WTERMSIG(st));
  } else if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) > 128 && WEXITSTATUS(st) < 128 + 65) {
    // bubblewrap exits with 128 + the signal that ended the process it ran
    msg += "; the candidate process was killed by " + describe_signal(WEXITSTATUS(st) - 128);
  } else if (st != -1 && WIFEXITED(st)) {
    msg += "; the candidate process exited with status " + std::to_string(WEXITSTATUS(st));
  }
  std::string t = tail_of(output_tail(), 300);
  if (!t.empty()) msg += "; its last output: " + t;
  throw RunnerFailure(msg, timeout);
}

void RemoteOp::send(const CmdMsg& m) {
  const char* p = reinterpret_cast<const char*>(&m);
  size_t n = sizeof m;
  while (n) {
    ssize_t r = ::write(cmd_fd_.get(), p, n);
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
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(spec_.deadline - Clock::now()).count();
      if (left <= 0) fail("timeout: the candidate process did not answer before the wall-clock limit", true);
      pollfd pf{reply_fd_.get(), POLLIN, 0};
      int pr = ::poll(&pf, 1, int(std::min<long long>(left, 1000)));
      if (pr < 0 && errno == EINTR) continue;
      if (pr == 0) continue;
      ssize_t r = ::read(reply_fd_.get(), p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) fail("the candidate process ended before answering", false);
      p += r;
      n -= size_t(r);
    }
  };
  read_n(&m, sizeof m);
  if (m.text_len > (1u << 26)) fail("protocol error: oversized reply", false);
  std::string t(m.text_len, '\0');
  if (m.text_len) read_n(t.data(), m.text_len);
  if (text) *text = t;
  else if (m.kind == kError) throw std::runtime_error(t);
  return m;
}

double RemoteOp::cpu_now_ms() const {
  timespec ts{};
  if (!have_cpu_clock_ || clock_gettime(cpu_clock_, &ts) != 0) return 0;
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Every thread of the runner stopped: SIGSTOP, then its threads' states from /proc until none
// runs. A thread cannot be created meanwhile: a pending stop makes clone restart.
void RemoteOp::stop_all() {
  if (runner_ <= 0) return;
  ::kill(runner_, SIGSTOP);
  const std::string dir = "/proc/" + std::to_string(runner_) + "/task";
  for (int round = 0;; ++round) {
    DIR* d = opendir(dir.c_str());
    if (!d) return;  // gone: the next receive says how
    bool all = true;
    std::map<pid_t, UniqueFd> seen;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const pid_t tid = pid_t(std::atoi(e->d_name));
      UniqueFd owned;
      auto it = task_fds_.find(tid);
      if (it != task_fds_.end()) {
        owned = std::move(it->second);
        task_fds_.erase(it);
      } else {
        owned.reset(::open((dir + "/" + e->d_name + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
      }
      if (!owned) continue;
      const int fd = owned.get();
      seen[tid] = std::move(owned);
      if (!all) continue;
      char buf[512];
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      if (n <= 0) continue;  // exited meanwhile
      buf[n] = 0;
      const char* rp = std::strrchr(buf, ')');
      const char state = rp && rp[1] && rp[2] ? rp[2] : 'T';
      if (state != 'T' && state != 't' && state != 'Z' && state != 'X') all = false;
    }
    closedir(d);
    task_fds_ = std::move(seen);  // what is left of the old map (threads that are gone) is closed
    if (all) return;
    if (Clock::now() > spec_.deadline) fail("timeout: the candidate process did not stop before the wall-clock limit", true);
    if (round > 50) usleep(50);
    else sched_yield();
  }
}

// One command: written while the runner is stopped, the window opens with SIGCONT and closes when
// every thread is stopped again. judge_ms: the judge's clock to the reply, plus every CPU cycle the
// runner's threads spent from the reply until they were all stopped (work after the reply counts;
// the time the judge waits for a busy machine to schedule the stop does not). cpu_ms: the CPU
// time of all its threads over the whole window.
ReplyMsg RemoteOp::cycle(CmdMsg c, std::string* text, double* judge_ms, double* cpu_ms, double* stop_ms) {
  ensure_loaded();
  c.release_before = release_before_;
  send(c);
  const double cpu0 = cpu_now_ms();
  cpu_outside_ms_ += std::max(0.0, cpu0 - cpu_mark_ms_);
  const auto t0 = Clock::now();
  ::kill(runner_, SIGCONT);
  ReplyMsg m = receive(text);
  const auto t_reply = Clock::now();
  const double cpu_reply = cpu_now_ms();
  stop_all();
  if (stop_ms) *stop_ms = ms_between(t_reply, Clock::now());
  cpu_mark_ms_ = cpu_now_ms();
  if (judge_ms) *judge_ms = ms_between(t0, t_reply) + std::max(0.0, cpu_mark_ms_ - cpu_reply);
  if (cpu_ms) *cpu_ms = cpu_mark_ms_ - cpu0;
  cpu_inside_ms_ += cpu_mark_ms_ - cpu0;
  if (m.kind == kError && text) throw std::runtime_error(*text);
  return m;
}

std::string RemoteOp::read_remote(uint64_t ptr, void* dst, size_t n) const {
  auto* p = static_cast<char*>(dst);
  while (n) {
    iovec local{p, n}, remote{reinterpret_cast<void*>(ptr), n};
    ssize_t r = process_vm_readv(runner_, &local, 1, &remote, 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::strerror(r < 0 ? errno : EFAULT);
    p += r;
    ptr += uint64_t(r);
    n -= size_t(r);
  }
  return "";
}

void RemoteOp::set_args(const std::vector<c10::IValue>& args) {
  ensure_loaded();
  std::string e = encode_block(*in_, 0, args);
  if (!e.empty()) throw std::runtime_error(e);
  CmdMsg c;
  c.cmd = kArgs;
  std::string text;
  cycle(c, &text, nullptr, nullptr);
}

double RemoteOp::nop() {
  CmdMsg c;
  c.cmd = kNop;
  std::string text;
  double ms = 0;
  cycle(c, &text, &ms, nullptr);
  return ms;
}

// The outputs of every call in the reply: read by the judge (CPU), or decoded from the blocks the
// runner copied (kCopyOut). Each is checked against the outputs still held, then held itself.
void RemoteOp::read_outputs(const std::string& text, size_t out_stride, bool copied, CallResult* r) {
  size_t pos = 0;
  for (size_t k = 0; pos < text.size(); ++k) {
    CallOutputs co;
    co.id = next_call_++;
    uint32_t n = 0;
    if (pos + sizeof n > text.size()) fail("protocol error: a truncated output table", false);
    std::memcpy(&n, text.data() + pos, sizeof n);
    pos += sizeof n;
    if (n > 4096 || pos + n * sizeof(OutDesc) > text.size()) fail("protocol error: a truncated output table", false);
    std::vector<c10::IValue> copies;
    if (copied) copies = decode_block(*out_region_, k * out_stride, at::Device(at::kCPU));
    Held h{co.id, {}, {}, {}, 0};
    uint64_t total = 0;  // what the judge agrees to read for one call: the output region's size
    for (uint32_t i = 0; i < n; ++i, pos += sizeof(OutDesc)) {
      OutDesc d;
      std::memcpy(&d, text.data() + pos, sizeof d);
      at::Tensor t;
      uint64_t sum = 0;
      const uint64_t span = d.span();
      try {
        if (copied) {
          if (i >= copies.size() || !copies[i].isTensor()) throw std::runtime_error("missing from the output region");
          t = copies[i].toTensor();
          sum = checksum(t);
        } else if (d.ndim < 0) {
          throw std::runtime_error("not a defined tensor");
        } else if (span > spec_.out_bytes || (total += span) > spec_.out_bytes) {
          throw std::runtime_error("described as spanning " + std::to_string(span) + " bytes (the outputs of a call may span " +
                                   std::to_string(spec_.out_bytes) + ")");
        } else {
          std::vector<char> bytes(span);
          const std::string why = read_remote(d.ptr, bytes.data(), span);
          if (!why.empty()) throw std::runtime_error("not readable at the address the runner gave (" + why + ")");
          t = tensor_from_desc(d, bytes.data());
          sum = checksum_bytes(bytes.data(), span);
        }
      } catch (const std::exception& e) {
        if (co.problem.empty()) co.problem = "output " + std::to_string(i) + ": " + e.what();
      }
      // An output the judge could not read holds no range (it is flagged; nothing to read again).
      const uint64_t kept = t.defined() ? span : 0;
      co.tensors.push_back(t);
      co.devices.push_back(d.device == 1 ? c10::DeviceType::CUDA : c10::DeviceType::CPU);
      co.lo.push_back(d.ptr);
      co.hi.push_back(d.ptr + kept);
      int64_t reuse = -1;
      for (const Held& old : held_)
        for (size_t j = 0; j < old.lo.size() && reuse < 0; ++j)
          if (kept && ranges_overlap(d.ptr, d.ptr + kept, old.lo[j], old.hi[j])) reuse = int64_t(old.id);
      co.reuses.push_back(reuse);
      h.lo.push_back(d.ptr);
      h.hi.push_back(d.ptr + kept);
      h.sums.push_back(sum);
      h.bytes += kept ? held_cost(d, kept) : 0;
    }
    held_bytes_ += h.bytes;
    held_.push_back(std::move(h));
    bool released = false;
    while (held_bytes_ > kHoldBudget && held_.size() > kMinHeldCalls) {
      held_bytes_ -= held_.front().bytes;
      held_.pop_front();
      release_before_ = held_.front().id;
      released = true;
    }
    // Not silent: how few calls' outputs were held at the shallowest point (a ring of more output
    // buffers than that goes unseen), said in the result.
    if (released) fewest_held_ = std::min(fewest_held_, held_.size());
    r->calls.push_back(std::move(co));
  }
}

CallResult RemoteOp::call(size_t offset, size_t count, size_t stride, bool no_op) {
  CallResult r;
  CmdMsg c;
  c.cmd = kCall;
  c.offset = offset;
  c.count = std::max<size_t>(count, 1);
  c.stride = stride;
  c.flags = no_op ? uint32_t(kNoOp) : 0u;
  const bool copy = !judge_reads_;
  // Sized from the reference's outputs by the caller (spec_.out_bytes is the whole region).
  const size_t out_stride = (spec_.out_bytes / c.count) & ~(kPage - 1);
  if (copy) {
    c.flags |= kCopyOut;
    c.out_stride = out_stride;
  }
  std::string text;
  ReplyMsg m = cycle(c, &text, &r.judge_ms, &r.cpu_ms, &r.stop_ms);
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
  if (!no_op) read_outputs(text, out_stride, copy, &r);
  if (!no_op && r.calls.size() != c.count) fail("protocol error: the runner answered for another number of calls", false);
  return r;
}

std::string RemoteOp::verify_held(const std::function<bool(size_t)>& skip) {
  ensure_loaded();
  std::vector<std::pair<uint64_t, std::vector<uint64_t>>> again;  // id -> sums read now
  if (judge_reads_) {
    for (const Held& h : held_) {
      std::vector<uint64_t> sums;
      for (size_t i = 0; i < h.lo.size(); ++i) {
        if (h.hi[i] == h.lo[i]) {  // empty, or never readable (flagged then)
          sums.push_back(h.sums[i]);
          continue;
        }
        std::vector<char> bytes(h.hi[i] - h.lo[i]);
        const std::string why = read_remote(h.lo[i], bytes.data(), bytes.size());
        sums.push_back(why.empty() ? checksum_bytes(bytes.data(), bytes.size()) : ~h.sums[i]);
      }
      again.emplace_back(h.id, std::move(sums));
    }
  } else {
    CmdMsg c;
    c.cmd = kRecopy;
    c.out_stride = (spec_.out_bytes / std::max<size_t>(held_.size(), 1)) & ~(kPage - 1);
    std::string text;
    cycle(c, &text, nullptr, nullptr);
    size_t pos = 0;
    for (size_t k = 0; pos + 12 <= text.size(); ++k) {
      uint64_t id;
      uint32_t n;
      std::memcpy(&id, text.data() + pos, 8);
      std::memcpy(&n, text.data() + pos + 8, 4);
      pos += 12 + size_t(n) * sizeof(OutDesc);
      std::vector<uint64_t> sums;
      try {
        for (const auto& v : decode_block(*out_region_, k * c.out_stride, at::Device(at::kCPU)))
          sums.push_back(v.isTensor() && v.toTensor().defined() ? checksum(v.toTensor()) : 0);
      } catch (const std::exception&) {
      }
      again.emplace_back(id, std::move(sums));
    }
  }
  size_t k = 0;
  for (const Held& h : held_) {
    const std::vector<uint64_t>* now = nullptr;
    for (; k < again.size(); ++k)
      if (again[k].first == h.id) {
        now = &again[k].second;
        break;
      }
    for (size_t i = 0; i < h.sums.size(); ++i) {
      if (skip(i)) continue;
      if (!now || i >= now->size() || (*now)[i] != h.sums[i])
        return "the output " + std::to_string(i) + " of call " + std::to_string(h.id) +
               " changed after it was returned, while the caller still held it (its memory was reused, written "
               "later, or shared with an input)";
    }
  }
  return "";
}

nlohmann::json RemoteOp::end() {
  ensure_loaded();
  CmdMsg c;
  c.cmd = kEnd;
  c.release_before = release_before_;
  send(c);
  ::kill(runner_, SIGCONT);
  std::string text;
  ReplyMsg m = receive(&text);
  if (m.kind == kError) throw std::runtime_error(text);
  auto j = nlohmann::json::parse(text, nullptr, false);
  shutdown();
  return j.is_discarded() ? nlohmann::json::object() : j;
}

}  // namespace kopt::bench
