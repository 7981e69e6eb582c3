// The judge's handle on one runner process: starts it confined, hands it inputs, times each call
// from the judge's own clock, and reads its outputs out of the judge's shared region. A runner that
// dies, hangs past the deadline or breaks the protocol ends in RunnerFailure; nothing of it
// survives this object.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel.hpp"
#include "sandbox.hpp"
#include "timer.hpp"

namespace kopt::bench {

struct RunnerFailure : std::runtime_error {
  bool timeout = false;
  RunnerFailure(const std::string& m, bool t) : std::runtime_error(m), timeout(t) {}
};

struct RunnerSpec {
  std::string exe;                  // kopt-bench-runner beside the judge
  std::string mode, path, arg3;     // see runner_main.cpp
  bool cuda = false;
  size_t in_bytes = 0, out_bytes = 0;
  std::vector<std::string> hide;
  std::string scratch;
  bool allow_bwrap = true;
  std::chrono::steady_clock::time_point deadline;
};

struct CallResult {
  double judge_ms = 0;   // the judge's clock: command sent -> outputs in the region
  double runner_ms = 0;  // the runner's own timer (device time on GPU)
  KernelStats stats;
  std::vector<at::Tensor> outputs;  // CPU copies taken when the reply arrived
  std::vector<c10::DeviceType> devices;  // where each output lived in the runner
};

class RemoteOp {
 public:
  explicit RemoteOp(const RunnerSpec& spec);  // started (loading in the background), or RunnerFailure
  void ensure_loaded();                        // waits for the runner's "loaded" reply
  ~RemoteOp();
  RemoteOp(const RemoteOp&) = delete;
  RemoteOp& operator=(const RemoteOp&) = delete;

  const nlohmann::json& loaded() {
    ensure_loaded();
    return loaded_;
  }
  const nlohmann::json& isolation() const { return isolation_; }
  void set_args(const std::vector<c10::IValue>& args);
  void prepare(const std::vector<c10::IValue>& inputs);
  CallResult call();
  ReplyMsg inspect();
  void mutate(const std::vector<c10::IValue>& values);
  nlohmann::json end();       // the runner's last report; it exits
  std::string output_tail() const { return out_ ? out_->tail() : ""; }
  uint64_t output_bytes() const { return out_ ? out_->total() : 0; }

 private:
  bool spawn(bool use_bwrap);
  bool await_loaded(bool use_bwrap, std::string* why);
  void send(uint32_t cmd);
  ReplyMsg receive(std::string* text);
  [[noreturn]] void fail(const std::string& what, bool timeout);
  void shutdown();
  void end_holder();

  RunnerSpec spec_;
  std::unique_ptr<SharedRegion> in_, out_region_;
  std::unique_ptr<OutputTail> out_;
  pid_t pid_ = -1, holder_ = -1;
  std::string setup_error_;  // bubblewrap failed to start a forked runner's sandbox
  int cmd_fd_ = -1, reply_fd_ = -1;
  nlohmann::json loaded_, isolation_;
  bool try_bwrap_ = false, loaded_ok_ = false;
  bool forked_ = false;     // the running runner came from the zygote
  bool exec_only_ = false;  // the zygote's runner failed to enter the sandbox: exec from now on
};

}  // namespace kopt::bench
