// The judge's handle on one runner process. The runner is the candidate's process: every byte of
// it is the candidate's to rewrite, so the judge takes nothing from it on trust.
//   - Stopped between commands. After each reply the judge stops the runner (SIGSTOP) and waits
//     until every one of its threads is stopped; a command starts with SIGCONT. So
//     nothing of it runs outside the judge's window (a thread watching the inputs, a hooked
//     allocator or read, a channel that spins): the inputs are written while it is stopped, and
//     each window, "continued" to "stopped again", is the judge's: its clock to the reply, plus
//     every CPU cycle the runner spent after the reply until it was stopped. It cannot start a
//     process of its own (seccomp), so its threads are all there is.
//   - CPU time counted from outside: the runner's process CPU clock, read by the judge at both ends
//     of every window (and between them: nothing should run there).
//   - Outputs read by the judge, out of the stopped runner's memory (process_vm_readv), at the
//     addresses the runner gives; an address is a claim the judge checks against the inputs it
//     laid out and the outputs the runner still holds. Where the judge cannot read them (device
//     memory, or a kernel whose Yama setting forbids every such read), the runner copies them into
//     the judge's region; any other failure of the judge's probe (attach) refuses the evaluation.
//   - Outputs held as a caller would hold them: the runner keeps every output until the judge
//     releases it (a bounded budget, oldest first); the judge keeps a checksum of each and reads
//     them all again at the end (verify_held): memory recycled, written later, or shared with an
//     input changes under it.
// A runner that dies, hangs past the deadline or breaks the protocol ends in RunnerFailure; nothing
// of it survives this object.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <chrono>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel.hpp"
#include "runner_launch.hpp"
#include "sandbox.hpp"
#include "timer.hpp"

namespace kopt::bench {

struct RunnerFailure : std::runtime_error {
  bool timeout = false;
  RunnerFailure(const std::string& m, bool t) : std::runtime_error(m), timeout(t) {}
};
// A runner that loaded but could not be confined as promised: refused, never retried weaker.
struct Refused : RunnerFailure {
  explicit Refused(const std::string& m) : RunnerFailure(m, false) {}
};

struct RunnerSpec {
  std::string exe;                  // kopt-bench-runner beside the judge
  RunnerLaunch launch;              // what it runs, as the runner reads it (runner_launch.hpp)
  size_t in_bytes = 0, out_bytes = 0;
  std::vector<std::string> hide;
  std::string scratch;
  bool allow_bwrap = true;
  bool allow_weaker = false;  // --allow-weaker-isolation: a confinement step that fails is said, not refused
  std::chrono::steady_clock::time_point deadline;
};

// The outputs of one call, as the judge read them.
struct CallOutputs {
  uint64_t id = 0;                   // the call's number (outputs held until released)
  std::vector<at::Tensor> tensors;   // contiguous CPU copies the judge made
  std::vector<uint64_t> lo, hi;      // where each lay in the runner's memory (the runner's claim)
  std::vector<int64_t> reuses;       // per output: the held call whose output memory it overlaps, or -1
  std::vector<c10::DeviceType> devices;  // where each output lived in the runner (its description)
  std::string problem;               // an output the judge could not read, and why ("" none)
};

struct CallResult {
  double judge_ms = 0;   // the judge's window: continued -> reply, + the runner's CPU time from the reply until stopped
  double runner_ms = 0;  // the runner's own timer over the calls (device time on GPU; a claim)
  double cpu_ms = 0;     // CPU time of all the runner's threads in that window (from outside)
  double stop_ms = 0;    // wall time from the reply to every thread stopped (information)
  KernelStats stats;
  std::vector<CallOutputs> calls;  // one per call of the command
};

class RemoteOp {
 public:
  explicit RemoteOp(const RunnerSpec& spec);  // started (loading in the background), or RunnerFailure
  void ensure_loaded();                        // waits for the runner's "loaded" reply, stops it
  ~RemoteOp();
  RemoteOp(const RemoteOp&) = delete;
  RemoteOp& operator=(const RemoteOp&) = delete;

  const nlohmann::json& loaded() {
    ensure_loaded();
    return loaded_;
  }
  const nlohmann::json& isolation() const { return isolation_; }

  // The input region: the judge writes blocks here while the runner is stopped.
  SharedRegion& inputs() { return *in_; }
  // Where region offset `off` is in the runner's address space; 0 when not known (a GPU runner's
  // inputs are its own device copies).
  uint64_t runner_address(size_t off) const { return in_base_ ? in_base_ + off : 0; }
  // What backs the runner's memory [lo, hi) of the input region: the region's offset ranges that
  // any mapping of it covers there (the first one, or a second the process made by mremap or mmap
  // of the same pages, at any address), from the kernel's /proc/<pid>/maps (file and offset, not
  // the address; asked mapping by mapping with PROCMAP_QUERY where the kernel has it, else read whole). `second` is set when a covering mapping is not the one the runner was given.
  std::vector<std::pair<uint64_t, uint64_t>> input_backing(uint64_t lo, uint64_t hi, bool* second = nullptr) const;

  void set_args(const std::vector<c10::IValue>& args);  // decoded (copied) by the runner
  // `count` calls back to back on the input blocks at offset + k * stride, synchronized once.
  // no_op: everything but the op (the channel's own cost).
  CallResult call(size_t offset, size_t count = 1, size_t stride = 0, bool no_op = false);
  double nop();  // one empty round trip, judge's clock (ms)
  // Reads every held output again: "" or what changed since it was returned. skip(call id, output)
  // excludes outputs that may legitimately follow an input (the reference returns a view of one).
  std::string verify_held(const std::function<bool(size_t output)>& skip);
  nlohmann::json end();  // the runner's last report; it exits

  // CPU time (ms) the runner used while the judge held it stopped (should be ~0), and in windows.
  double cpu_outside_ms() const { return cpu_outside_ms_; }
  double cpu_inside_ms() const { return cpu_inside_ms_; }
  bool judge_reads_outputs() const { return judge_reads_; }
  // Once the hold budget released outputs: the fewest calls whose outputs were still held when
  // the next call's were checked against them (0: never released, everything was held).
  size_t fewest_held_calls() const { return fewest_held_ == SIZE_MAX ? 0 : fewest_held_; }
  static uint64_t hold_budget_bytes();
  std::string output_tail() const { return out_ ? out_->tail() : ""; }
  uint64_t output_bytes() const { return out_ ? out_->total() : 0; }

 private:
  bool spawn(bool use_bwrap);
  bool await_loaded(bool use_bwrap, std::string* why);
  void attach();  // after "loaded": finds the runner process, stops it, maps what the judge reads
  ReplyMsg cycle(CmdMsg c, std::string* text, double* judge_ms, double* cpu_ms, double* stop_ms = nullptr);
  void send(const CmdMsg& c);
  ReplyMsg receive(std::string* text);
  void stop_all();  // SIGSTOP and wait until every thread is stopped (deadline)
  double cpu_now_ms() const;
  std::string read_remote(uint64_t ptr, void* dst, size_t n) const;
  void read_outputs(const std::string& text, size_t out_stride, bool copied, CallResult* r);
  [[noreturn]] void fail(const std::string& what, bool timeout);
  void shutdown();
  void end_holder();

  RunnerSpec spec_;
  std::unique_ptr<SharedRegion> in_, out_region_;
  std::unique_ptr<OutputTail> out_;
  pid_t pid_ = -1, holder_ = -1;
  pid_t runner_ = -1;               // the runner process itself (pid_ may be its launcher)
  clockid_t cpu_clock_{};
  bool have_cpu_clock_ = false;
  std::map<pid_t, UniqueFd> task_fds_;  // /proc/<runner>/task/<tid>/stat, kept open
  uint64_t in_base_ = 0;            // the input region in the runner's address space
  uint64_t in_ino_ = 0, in_dev_ = 0;  // the input region's file (memfd), as /proc/<pid>/maps names it
  UniqueFd maps_fd_;                // /proc/<runner>/maps, kept open where the kernel answers PROCMAP_QUERY
  bool judge_reads_ = false;        // outputs read by the judge (else copied by the runner)
  double cpu_mark_ms_ = 0, cpu_outside_ms_ = 0, cpu_inside_ms_ = 0;
  std::string setup_error_;  // bubblewrap failed to start a forked runner's sandbox
  UniqueFd cmd_fd_, reply_fd_;
  nlohmann::json loaded_, isolation_;
  bool try_bwrap_ = false, loaded_ok_ = false;
  bool forked_ = false;     // the running runner came from the zygote
  bool exec_only_ = false;  // the zygote's runner failed to enter the sandbox: exec from now on
  // Held outputs: per call, the judge's checksums of what it read.
  struct Held {
    uint64_t id;
    std::vector<uint64_t> lo, hi, sums;
    uint64_t bytes;
  };
  std::deque<Held> held_;
  uint64_t held_bytes_ = 0, next_call_ = 0, release_before_ = 0;
  size_t fewest_held_ = SIZE_MAX;
};

}  // namespace kopt::bench
