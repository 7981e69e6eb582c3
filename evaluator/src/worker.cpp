// The judge (kopt-bench-worker): one evaluation as a sequence of named stages (Phase), each a
// function of Evaluation. It never loads candidate code. What decides the verdict is computed
// here: the inputs (laid out by the judge in its own memory), the reference's outputs and its own
// effect on its inputs, the candidate's outputs (read by the judge out of the stopped runner), the
// checks of every call, and the time (the judge's clock; on a GPU the runner's device time, bounded
// below by the judge's own floor). The runner's replies are claims (remote_op.hpp).
#include "worker.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "bandwidth_probe.hpp"
#include "baseline.hpp"
#include "callable.hpp"
#include "compare.hpp"
#include "guards.hpp"
#include "inputs.hpp"
#include "integrity.hpp"
#include "load.hpp"
#include "options.hpp"
#include "proc.hpp"
#include "python_op.hpp"
#include "remote_op.hpp"
#include "report.hpp"
#include "spec.hpp"
#include "stats.hpp"
#include "timer.hpp"

#ifdef KOPT_WITH_CUDA
#include "cuda_call.hpp"
#endif

namespace kopt::bench {
namespace {

using nlohmann::json;
using IVals = std::vector<c10::IValue>;
using Clock = std::chrono::steady_clock;

// The timing protocol, in the baseline key's timer field: a reference timed another way is
// re-measured. p2: the runner stopped between calls, outputs read and held by the judge.
constexpr const char* kProtocol = "/p2";

void write_json_atomic(const std::string& path, const json& j) {
  replace_file(path, j.dump(-1, ' ', false, json::error_handler_t::replace), 0644);
}

std::string clean_error(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return e.what();
}

std::string shape_str(const at::Tensor& t) {
  std::ostringstream o;
  o << t.sizes();
  return o.str();
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  }
  return "unknown cpu";
}

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

// "x (arange), y (const), alpha (scalar)"
std::string fixed_inputs_text(const InputSpec& spec) {
  std::string out;
  for (const auto& d : spec.inputs) {
    const char* kind = "degenerate distribution";
    if (d.is_scalar) kind = "scalar";
    else if (d.dist.kind == DistKind::Const) kind = "const";
    else if (d.dist.kind == DistKind::Arange) kind = "arange";
    else if (d.dist.kind == DistKind::File) kind = "file";
    out += (out.empty() ? "" : ", ") + d.name + " (" + kind + ")";
  }
  return out.empty() ? "no inputs" : out;
}

// "the reference was timed while other processes used 1.3 of 2 CPUs"
std::string under_load(const std::string& what, const Load& l) {
  char b[200];
  std::snprintf(b, sizeof b, "%s while other processes used %.2g of %d CPUs (/proc/stat over the %.1f s window)",
                what.c_str(), l.other_cpus, l.cpus, l.window_s);
  return b;
}

// The reference in the judge's process: the op, and its float64 copy for the oracle rule.
struct Reference {
  Callable main;
  std::optional<torch::jit::Module> oracle_module;
  bool is_script = false;

  Outputs call(const IVals& in) { return main.call(in, "reference"); }
  // The same computation in float64; nullopt when the reference cannot run in float64.
  std::optional<Outputs> call_oracle(const IVals& in64) {
    try {
      if (is_script) {
        if (!oracle_module) return std::nullopt;
        return to_outputs({oracle_module->forward(in64)}, "reference");
      }
      return main.call(in64, "reference");
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
};

// What the reference does on one input set: its outputs and its inputs after the call.
struct RefRun {
  Outputs out;
  IVals after;
};

// Where one input set lies: its block's offset and each value's data offset in the region.
struct Placed {
  size_t offset = 0;
  std::vector<size_t> where;
};

struct Timed {
  std::vector<double> samples;
  StopReason reason = StopReason::MaxTrials;
  KernelStats stats_sum;
  long stats_trials = 0;
  size_t calls = 0;
  double cpu_ms = 0;
  std::vector<double> stop_ms;  // per call: from the runner's reply to every thread stopped
};


// The stages of an evaluation, in order; their names key native_metrics.stage_ms and the errors.
enum class Phase {
  Setup,
  ProbingMachine,
  StartingCandidate,
  LoadingReference,
  RunningReference,
  TimingReference,
  LoadingCandidate,
  CorrectnessTrials,
  TimingCandidate,
  MutationSentinel,
  CheckingProcessState,
};
const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Setup: return "setup";
    case Phase::ProbingMachine: return "probing the machine";
    case Phase::StartingCandidate: return "starting the candidate";
    case Phase::LoadingReference: return "loading the reference";
    case Phase::RunningReference: return "running the reference";
    case Phase::TimingReference: return "timing the reference";
    case Phase::LoadingCandidate: return "loading the candidate";
    case Phase::CorrectnessTrials: return "correctness trials";
    case Phase::TimingCandidate: return "timing the candidate";
    case Phase::MutationSentinel: return "mutation sentinel";
    case Phase::CheckingProcessState: return "checking process state";
  }
  return "?";
}
// A failure in these stages is the evaluator's (the reference, the spec, the machine), not the candidate's.
bool judge_side(Phase p) {
  return p == Phase::Setup || p == Phase::LoadingReference || p == Phase::RunningReference || p == Phase::TimingReference;
}

// Slots of the input region: 0 and 1 alternate for warm-up and timed calls (the sentinel rewrites
// the last one in place); from 2, one per correctness trial (every one at another address) and one
// per call of a floor batch.
constexpr size_t kTimedSlots = 2;
constexpr size_t kMaxBatch = 32;
constexpr size_t kFloorBatches = 5;
constexpr size_t kFreshSamples = 10, kFreshWarmup = 3;  // the drift check's share ("briefly")

class Evaluation {
 public:
  explicit Evaluation(const std::string& job_path);
  [[noreturn]] void run();

 private:
  // ---- the stages ----
  void setup();
  void start_candidate();
  void load_reference();
  void run_reference();
  void time_reference();
  void load_candidate();
  void correctness_trials();
  void time_candidate();
  void mutation_sentinel();
  void check_process_state();
  void conclude();

  // ---- pieces the stages share ----
  void enter(Phase next);
  [[noreturn]] void finish(int code);
  [[noreturn]] void fail(const std::exception& e, bool runner_failure, bool timeout);
  RunnerSpec spec_for(RunnerLaunch launch) const;
  RunnerSpec ref_runner_spec() const;
  RunnerSpec cand_runner_spec() const;
  bool python_candidate() const { return job_.at("cand").contains("python"); }
  std::vector<std::string> frozen_reasons(std::optional<BaselineRecord>* stored);
  IVals draw(Stream s, uint64_t i) { return draw_inputs(spec_, seeds_(s, i), precision_, dev_); }
  LazyOracle oracle_for(const IVals& in);
  RefRun ref_call(const IVals& in);
  void off_distribution_trials();
  std::string off_distribution_problem(const IVals& in, const std::vector<bool>& declared_nf, LazyOracle& oracle,
                                       RefRun* out);
  size_t slot_offset(size_t s) const { return args_bytes_ + s * slot_bytes_; }
  Placed place(RemoteOp& op, size_t slot, const IVals& in);
  std::map<size_t, at::Tensor> check_call(RemoteOp& op, const CallOutputs& co, const Placed& p, const IVals& in);
  void check_effect(const std::map<size_t, at::Tensor>& mutated, const RefRun& rr, const std::string& when);
  void time_loop(RemoteOp& op, bool is_candidate, Timed* out, RemoteOp* fresh = nullptr);
  std::optional<std::pair<double, double>> floor_batch(RemoteOp& op, bool no_op, bool check, uint64_t round);
  json device_floor(RemoteOp& cand, RemoteOp* ref, double runner_ms);
  double channel_ms(RemoteOp& op);
  std::string diagnose_order(const IVals& in, const Outputs& ref_out, LazyOracle& oracle);
  void hack(const std::string& h) { hacks_.push_back(h); }
  std::string input_name(size_t j) const {
    return j < spec_.inputs.size() ? " ('" + spec_.inputs[j].name + "')" : std::string();
  }

  // ---- the job ----
  json job_;
  Options opt_;
  Result res_;
  json baseline_out_, isolation_;
  Clock::time_point deadline_;
  Phase phase_ = Phase::Setup;
  json stage_ms_ = json::object();
  Clock::time_point t_phase_ = Clock::now();

  // ---- setup ----
  InputSpec spec_;
  SeedSchedule seeds_;
  std::string precision_;
  bool use_cuda_ = false;
  bool device_timing_ = false;  // the runner's device timer (a GPU, or its CPU stand-in) + the judge's floor
  at::Device dev_{at::kCPU};
  std::map<std::string, std::string> key_;
  Tolerance tol_;

  // ---- runners and the input layout ----
  std::string runner_exe_, scratch_;
  size_t in_bytes_ = 0, out_bytes_ = 0, args_bytes_ = 0, slot_bytes_ = 0;
  bool ref_timing_needed_ = true;
  std::unique_ptr<RemoteOp> cand_, fresh_ref_;

  // ---- the reference ----
  Reference ref_;
  IVals params_;
  std::vector<std::string> named_order_;  // the module's named_parameters() order, for the order diagnosis
  std::vector<uint64_t> ref_alias_;       // per output: the inputs (bit j) the reference's output shares storage with
  std::vector<uint64_t> ref_out_alias_;   // per output: the other outputs (bit k) the reference's output shares storage with
  std::vector<bool> ref_mut_;             // per input: the reference writes it in place
  std::vector<IVals> corr_in_;
  std::vector<RefRun> corr_ref_;
  std::vector<LazyOracle> corr_oracle_;
  std::vector<std::string> corr_dist_;  // per correctness trial: "" the declared distribution, else its regime
  json dists_ = json::array(), dists_skipped_ = json::array();
  IVals reused_in_;
  RefRun reused_ref_;
  LazyOracle reused_oracle_;

  // ---- timing ----
  std::optional<double> ref_ms_;
  std::optional<std::pair<double, double>> ref_ci_;  // ref_ms_'s 95 % interval (stats.hpp), when reached
  std::optional<BaselineRecord> frozen_;
  std::optional<MachineLimits> limits_;  // the machine's probed bandwidth and compute peak (issue 49)
  std::string timer_name_;
  std::vector<double> fresh_samples_;
  // The reference's side of the floor (device timing): its device time, its floor, the channel.
  std::optional<double> ref_device_ms_;
  std::unique_ptr<RemoteOp> ref_runner_;  // device timing: the reference's runner, kept for the floor
  double ref_cpu_ms_ = 0;                 // the reference runner's CPU time in its timed windows
  size_t ref_cpu_calls_ = 0;
  size_t batch_ = 8, max_batch_ = kMaxBatch, corr_slots_ = 1;
  size_t used_hi_ = 0;  // the input region's bytes written so far (poisoned before the held outputs are read again)
  json channel_ = json::object();
  size_t last_timed_slot_ = 0;

  // ---- the verdict ----
  std::vector<std::string> hacks_;
  bool correct_ = true;
};

Evaluation::Evaluation(const std::string& job_path) {
  std::ifstream f(job_path);
  job_ = json::parse(f);
  opt_ = Options::from_json(job_.at("options"));
  res_.artifact = opt_.artifact;
  res_.compiled = true;
  deadline_ = Clock::now() + std::chrono::milliseconds(long(std::max(1.0, opt_.timeout_s - 2.0) * 1000));
}

void Evaluation::enter(Phase next) {
  const auto now = Clock::now();
  const std::string name = phase_name(phase_);
  stage_ms_[name] = round_to(stage_ms_.value(name, 0.0) + std::chrono::duration<double, std::milli>(now - t_phase_).count(), 0.1);
  t_phase_ = now;
  phase_ = next;
}

void Evaluation::finish(int code) {
  enter(phase_);
  reap_all_children(2.0);
  res_.extra_metrics["stage_ms"] = stage_ms_;
  json out = res_.to_json();
  if (!baseline_out_.is_null()) out["baseline_record"] = baseline_out_;
  write_json_atomic(job_.at("result_path"), out);
  // Done: every child is reaped and the result is on disk. Leaving without destructors saves
  // the ~0.2 s LibTorch and the reference spend freeing memory the exit frees anyway.
  std::fflush(nullptr);
  std::_Exit(code);
}

void Evaluation::run() {
  // Runners we start (and anything they start) become our children even when orphaned: we reap
  // them all before the result is written.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  try {
    at::NoGradGuard no_grad;
    setup();
    start_candidate();
    load_reference();
    run_reference();
    if (!opt_.no_timing) time_reference();
    load_candidate();
    correctness_trials();
    if (correct_ && !opt_.no_timing) {
      time_candidate();
      mutation_sentinel();
    }
    check_process_state();
    conclude();
  } catch (const SpecError& e) {
    res_.correct = false;
    res_.evaluator_failed = true;
    res_.error = std::string("bad input spec: ") + e.what();
    finish(2);
  } catch (const RunnerFailure& e) {
    fail(e, true, e.timeout);
  } catch (const std::exception& e) {
    fail(e, false, false);
  }
  finish(1);
}

void Evaluation::fail(const std::exception& e, bool runner_failure, bool timeout) {
  res_.correct = false;
  if (!isolation_.is_null()) res_.extra_metrics["isolation"] = isolation_;
  const std::string phase = phase_name(phase_);
  if (timeout) {
    res_.extra_metrics["timeout"] = true;
    res_.error = "timeout while " + phase + ": " + e.what();
    finish(1);
  }
  const bool ref_side = runner_failure ? phase_ == Phase::TimingReference : judge_side(phase_);
  res_.evaluator_failed = ref_side;
  res_.error = (ref_side ? "while " : "runtime error while ") + phase + ": " + (runner_failure ? e.what() : clean_error(e));
  finish(ref_side ? 2 : 1);
}

// ---------------------------------------------------------------- setup
void Evaluation::setup() {
  spec_ = load_spec(opt_.inputs);
  // Every trial's seed on its own (spec.hpp): from OS randomness, or keyed with the judge's key
  // when the user pins one.
  if (opt_.seed) {
    std::string key = judge_key(opt_.cache_dir, nullptr);
    if (key.empty()) {
      key = std::to_string(SeedSchedule::random()(Stream::Select, 0));
      res_.notes.push_back("the judge's key could not be stored: the pinned seed gives other inputs on the next run");
    }
    seeds_ = SeedSchedule::pinned(*opt_.seed, key);
    spec_.seed = *opt_.seed;
  } else {
    seeds_ = SeedSchedule::random();
  }
  precision_ = !opt_.precision.empty() ? opt_.precision : spec_.precision.value_or("float32");

#ifdef KOPT_WITH_CUDA
  const std::string no_device = cuda_no_device_reason();
  if (opt_.device == "cuda" && !no_device.empty()) throw std::runtime_error("--device cuda: " + no_device);
#ifdef KOPT_TORCH_CUDA
  use_cuda_ = opt_.device != "cpu" && no_device.empty();
#else
  // The toolkit-only build (KOPT_BENCH_CUDA=TOOLKIT): its LibTorch cannot hold CUDA tensors.
  if (opt_.device == "cuda")
    throw std::runtime_error("--device cuda: this kopt-bench's LibTorch has no CUDA (a KOPT_BENCH_CUDA=TOOLKIT build)");
#endif
#else
  if (opt_.device == "cuda") throw std::runtime_error("--device cuda but this kopt-bench was built without CUDA");
#endif
  device_timing_ = use_cuda_ || opt_.timer == "device";
  dev_ = use_cuda_ ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  res_.backend = use_cuda_ ? "cuda" : "cpu";
  // The device is decided here, once. A Python build stage ran before the judge, on the device kopt-bench's
  // parent expected (it links no CUDA, so it can only guess); a build made for another device is refused,
  // never run on this one (a Triton kernel warmed on no GPU would have to compile under seccomp).
  for (const char* side : {"cand", "ref"}) {
    const json& j = job_.at(side);
    if (!j.contains("launch") || !j.at("launch").is_string()) continue;
    const json launch = json::parse(read_file(j.at("launch").get<std::string>()), nullptr, false);
    if (!launch.is_object()) continue;  // unreadable: the runner that loads it says why
    const std::string built = launch.value("device", "cpu");
    if (built != res_.backend)
      throw std::runtime_error(std::string("the Python build stage prepared the ") + (side == std::string("cand") ? "solution" : "reference") +
                               " on " + built + ", but the judge runs on " + res_.backend +
                               (use_cuda_ ? "" : " (no usable CUDA device for this kopt-bench)") + ": pass --device " +
                               res_.backend + " so both use one device");
  }
  key_ = job_.at("baseline_key").get<std::map<std::string, std::string>>();
  key_["precision"] = precision_;
  key_["seed"] = opt_.seed ? std::to_string(*opt_.seed) : "per-run";
#ifdef KOPT_WITH_CUDA
  if (use_cuda_) {
    cudaDeviceProp prop{};
    KOPT_CUDA_CALL(cudaGetDeviceProperties(&prop, 0));
    char uuid[64] = {0};
    for (int i = 0; i < 16; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)prop.uuid.bytes[i]);
    int drv = 0;
    KOPT_CUDA_CALL(cudaDriverGetVersion(&drv));
    key_["device_name"] = prop.name;
    key_["device_uuid"] = uuid;
    key_["driver"] = std::to_string(drv);
  }
#endif
  if (!use_cuda_) {
    key_["device_name"] = cpu_model() + " x" + std::to_string(at::get_num_threads()) + " threads";
    key_["device_uuid"] = "";
    key_["driver"] = "";
  }
  key_["backend"] = res_.backend;
  // On a GPU the runner's timer is known once it has loaded (cupti or cuda_event).
  timer_name_ = use_cuda_ ? "cuda_event" : device_timing_ ? "device-standin" : "host";

  const bool low_prec = precision_ != "float32";
  tol_.atol = opt_.atol.value_or(low_prec ? 1e-2 : 1e-4);
  tol_.rtol = opt_.rtol.value_or(low_prec ? 1e-2 : 1e-4);
  tol_.auto_mode = opt_.tolerance == "auto" && !low_prec;
  tol_.l2_floor = low_prec ? 1e-2 : 1e-5;
  tol_.integer_exact = !spec_.integer_outputs_tolerance;
  // Distance to the limit (issue 49): this machine's limits, read from the cache or probed once; a stage of its own.
  if (!opt_.no_timing) {
    enter(Phase::ProbingMachine);
    limits_ = judge_machine_limits(opt_.cache_dir, use_cuda_);
  }
}

// ---------------------------------------------------------------- runners
RunnerSpec Evaluation::spec_for(RunnerLaunch launch) const {
  RunnerSpec s;
  s.exe = runner_exe_;
  launch.cuda = use_cuda_;
  s.launch = std::move(launch);
  s.in_bytes = in_bytes_;
  s.out_bytes = out_bytes_;
  s.hide = job_.value("hide", std::vector<std::string>{});
  s.scratch = scratch_;
  s.allow_bwrap = opt_.namespaces;
  s.allow_weaker = opt_.allow_weaker_isolation;
  s.deadline = deadline_;
  return s;
}

// The candidate's runner: a compiled op, or a Python solution with its build stage's launch file.
RunnerSpec Evaluation::cand_runner_spec() const {
  const json& c = job_.at("cand");
  RunnerLaunch l;
  if (c.contains("python")) {
    l.mode = RunnerLaunch::Mode::Python;
    l.op = c.at("python");
    l.launch_file = c.at("launch");
  } else {
    l.mode = RunnerLaunch::Mode::Candidate;
    l.op = c.at("so");
    l.ns = c.at("ns");
  }
  return spec_for(l);
}

// The reference's timing runner; a TorchScript reference runs in the spec's mode (training mode
// for BatchNorm problems as KernelBench defines them), as in the judge.
RunnerSpec Evaluation::ref_runner_spec() const {
  const json& rj = job_.at("ref");
  RunnerLaunch l;
  if (rj.at("kind") == "python") {
    l.mode = RunnerLaunch::Mode::RefPython;
    l.op = rj.at("python");
    l.launch_file = rj.at("launch");
  } else if (rj.at("kind") == "torchscript") {
    l.mode = RunnerLaunch::Mode::RefScript;
    l.op = rj.at("path");
    l.precision = precision_;
    l.train = spec_.mode.value_or("eval") == "train";
  } else {
    l.mode = RunnerLaunch::Mode::RefOp;
    l.op = rj.at("so");
    l.ns = rj.at("ns");
  }
  return spec_for(l);
}

// Why the stored baseline cannot be used now (empty: it can); *stored receives it when there is one.
std::vector<std::string> Evaluation::frozen_reasons(std::optional<BaselineRecord>* stored) {
  if (!job_.contains("baseline") || job_["baseline"].is_null() || opt_.refresh_baseline) return {"-"};
  BaselineRecord b = BaselineRecord::from_json(job_["baseline"]);
  auto k = key_;
  const std::string was = b.key.count("timer") ? b.key.at("timer") : "";
  // On a GPU the runner's timer name is known only once it has loaded: the stored one, if it was
  // measured under this protocol.
  const bool same_protocol = was.size() >= std::strlen(kProtocol) && was.compare(was.size() - std::strlen(kProtocol), std::string::npos, kProtocol) == 0;
  k["timer"] = use_cuda_ && same_protocol ? was : timer_name_ + kProtocol;
  *stored = b;
  return invalidation_reasons(b, k);
}

void Evaluation::start_candidate() {
  enter(Phase::StartingCandidate);
  const std::string exe = self_exe();
  runner_exe_ = exe.substr(0, exe.find_last_of('/') + 1) + "kopt-bench-runner";
  scratch_ = job_.at("scratch").get<std::string>();
  // The input region: the parameters' block, then slots of one input set each (spec.inputs at 8
  // bytes an element, an upper bound). A memfd is sparse: pages cost only when written.
  size_t set_bytes = kTableBytes;
  for (const auto& d : spec_.inputs) {
    size_t n = 8;
    for (auto s : d.shape) n *= size_t(std::max<int64_t>(s, 1));
    set_bytes += n + 64;
  }
  slot_bytes_ = page_align(set_bytes);
  args_bytes_ = page_align(size_t(256) << 20);  // parameters: up to 256 MiB (sparse)
  // Distinct slots for the correctness trials and a floor batch, within 512 MiB of inputs.
  const size_t fit = std::max<size_t>(3, (size_t(512) << 20) / slot_bytes_);
  corr_slots_ = std::min<size_t>(size_t(opt_.num_correct_trials) + 16, fit);
  max_batch_ = std::min(kMaxBatch, std::max<size_t>(4, fit));
  const size_t slots = kTimedSlots + std::max(corr_slots_, max_batch_);
  in_bytes_ = args_bytes_ + slots * slot_bytes_;
  out_bytes_ = std::max(16 * set_bytes * kMaxBatch, size_t(1) << 30);
  // Only when the reference needs no timing now: a candidate's load-time threads must never run
  // beside the reference's timed calls.
  std::optional<BaselineRecord> stored;
  ref_timing_needed_ = !opt_.no_timing && !frozen_reasons(&stored).empty();
  if (!ref_timing_needed_)
    cand_ = std::make_unique<RemoteOp>(cand_runner_spec());
}

// ---------------------------------------------------------------- the reference
void Evaluation::load_reference() {
  enter(Phase::LoadingReference);
  const json& rj = job_.at("ref");
  if (rj.at("kind") == "torchscript") {
    ref_.is_script = true;
    // The mode the export recorded (KernelBench runs modules as constructed: training mode).
    ref_.main = Callable::script(rj.at("path").get<std::string>(), dev_, spec_.mode.value_or("eval") == "train", "float32");
    try {  // the fp64 oracle (compare.hpp: the oracle rule in auto mode, the magnitude rule always)
      torch::jit::Module m = ref_.main.module->clone();
      m.to(at::kDouble);
      ref_.oracle_module = m;
    } catch (const std::exception&) {
    }
    if (precision_ != "float32") ref_.main.module->to(scalar_type_of(precision_));
  } else if (rj.at("kind") == "python") {
    // A problem that neither scripts nor traces: its Model, as its build stage made it, in this
    // process (the reference is trusted as a TorchScript one is); no fp64 oracle, no parameters to pass.
    try {
      const std::string launch_path = rj.at("launch").get<std::string>();
      nlohmann::json launch = resolve_launch(read_file(launch_path), launch_path);
      launch["precision"] = "float32";
      ref_.main = Callable::python(rj.at("python").get<std::string>(), launch.dump(), dev_);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("the reference (run as Python): ") + e.what());
    }
    if (!python_candidate() && !spec_.params.empty())
      throw std::runtime_error("the reference runs as Python (it neither scripts nor traces), so its parameters cannot be "
                               "passed to a C++ op: write the candidate as a Python solution (class ModelNew), or make "
                               "the problem exportable");
  } else {
    try {
      ref_.main = Callable::library(rj.at("so"), rj.at("ns"));
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("the reference: ") + e.what());
    }
  }
  if (!spec_.params.empty() && rj.at("kind") != "python") {
    if (!ref_.is_script) throw std::runtime_error("spec.params names reference parameters, but the reference is not a TorchScript module");
    std::map<std::string, at::Tensor> named;
    for (const auto& p : ref_.main.module->named_parameters()) {
      named[p.name] = p.value;
      named_order_.push_back(p.name);
    }
    for (const auto& p : ref_.main.module->named_buffers()) named.emplace(p.name, p.value);
    for (const auto& n : spec_.params) {
      auto it = named.find(n);
      if (it == named.end()) throw std::runtime_error("spec.params: the reference has no parameter '" + n + "'");
      params_.emplace_back(it->second.detach());
    }
  }
  // Drift check: with a frozen baseline in use, the reference is re-timed briefly around the
  // candidate's timed calls. Its runner starts now, beside the candidate's.
  if (!ref_timing_needed_ && !opt_.no_timing) fresh_ref_ = std::make_unique<RemoteOp>(ref_runner_spec());
}

LazyOracle Evaluation::oracle_for(const IVals& in) {
  LazyOracle l;
  l.fn = [this, in]() { return ref_.call_oracle(to_double(in)); };
  // For the magnitude rule's reliability where the reference cannot run in float64: only float32
  // and float64 inputs can carry a 2^-16 perturbation (it would round away in 16-bit types).
  bool perturbable = false;
  for (const auto& v : in)
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().is_floating_point()) {
      const auto st = v.toTensor().scalar_type();
      if (st != at::kFloat && st != at::kDouble) return l;
      perturbable = true;
    }
  if (!perturbable) return l;
  l.perturbed_fn = [this, in]() -> std::optional<std::vector<Outputs>> {
    try {
      std::vector<Outputs> runs;
      auto gen = at::make_generator<at::CPUGeneratorImpl>(0x6b6f7074);
      for (int k = 0; k < 3; ++k) {
        IVals p = clone_inputs(in);
        for (auto& v : p)
          if (v.isTensor() && v.toTensor().defined() && v.toTensor().is_floating_point()) {
            const at::Tensor t = v.toTensor();
            at::Tensor u = at::empty(t.sizes(), at::TensorOptions().dtype(at::kDouble)).uniform_(-1.0, 1.0, gen);
            v = (t.to(at::kDouble).cpu() * (u * (1.0 / 65536) + 1.0)).to(t.device(), t.scalar_type());
          }
        runs.push_back(ref_.call(p));
      }
      return runs;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  return l;
}

// The reference on a copy of `in`; its own aliasing (an output that is a view of an input) and its
// own writes to its inputs are what a candidate is allowed, no more.
RefRun Evaluation::ref_call(const IVals& in) {
  RefRun r;
  r.after = clone_inputs(in);
  r.out = ref_.call(r.after);
  if (ref_alias_.size() < r.out.size()) ref_alias_.resize(r.out.size(), 0);
  for (size_t i = 0; i < r.out.size(); ++i)
    for (size_t j = 0; j < r.after.size() && j < 64; ++j)
      if (r.after[j].isTensor() && shares_storage(r.out[i], r.after[j].toTensor())) ref_alias_[i] |= uint64_t(1) << j;
  if (ref_out_alias_.size() < r.out.size()) ref_out_alias_.resize(r.out.size(), 0);
  for (size_t i = 0; i < r.out.size() && i < 64; ++i)
    for (size_t k = 0; k < r.out.size() && k < 64; ++k)
      if (k != i && shares_storage(r.out[i], r.out[k])) ref_out_alias_[i] |= uint64_t(1) << k;
  if (ref_mut_.size() < in.size()) ref_mut_.resize(in.size(), false);
  for (size_t j = 0; j < in.size(); ++j)
    if (in[j].isTensor() && in[j].toTensor().defined() && checksum(in[j].toTensor()) != checksum(r.after[j].toTensor()))
      ref_mut_[j] = true;
  return r;
}

void Evaluation::run_reference() {
  enter(Phase::RunningReference);
  for (int t = 0; t < opt_.num_correct_trials; ++t) {
    corr_in_.push_back(draw(Stream::Correctness, uint64_t(t)));
    corr_ref_.push_back(ref_call(corr_in_.back()));
    corr_oracle_.push_back(oracle_for(corr_in_.back()));
  }
  corr_dist_.assign(corr_in_.size(), "");
  dists_.push_back("declared (" + std::to_string(opt_.num_correct_trials) + " trials)");
  off_distribution_trials();
  reused_in_ = draw(Stream::Timing, 0);  // the one input set of --no-fresh-inputs
  reused_ref_ = ref_call(reused_in_);
  reused_oracle_ = oracle_for(reused_in_);
}

// Whether the reference handles an off-distribution trial (inputs.hpp: regimes): "" when it does,
// with its run in `out`; else why not. It must not raise, and its outputs may be non-finite only
// where they already were on the declared distribution and where the fp64 oracle is non-finite too
// (an overflow of the reference's own is not a contract a candidate must meet).
std::string Evaluation::off_distribution_problem(const IVals& in, const std::vector<bool>& declared_nf, LazyOracle& oracle,
                                                 RefRun* out) {
  try {
    *out = ref_call(in);
  } catch (const std::exception& e) {
    return "the reference raises an error there (" + clean_error(e).substr(0, 160) + ")";
  }
  auto nf = nonfinite_outputs(out->out);
  for (size_t i = 0; i < nf.size(); ++i) {
    if (!nf[i]) continue;
    const std::string not_finite = "output " + std::to_string(i) + " of the reference is not finite there";
    if (i >= declared_nf.size() || !declared_nf[i]) return not_finite;
    const auto& o = oracle.get();
    if (!o || i >= o->size() || (*o)[i].sizes() != out->out[i].sizes()) continue;
    at::Tensor r_nf = at::logical_not(at::isfinite(out->out[i].detach().to(at::kCPU)));
    at::Tensor o_nf = at::logical_not(at::isfinite((*o)[i].detach().to(at::kCPU)));
    if (at::logical_and(r_nf, at::logical_not(o_nf)).any().item<bool>()) return not_finite + " where the fp64 reference is";
  }
  return "";
}

// Correctness off the declared distribution: more trials, in regimes chosen per run from the
// trial seeds (inputs.hpp), each kept only where the reference still handles it.
void Evaluation::off_distribution_trials() {
  if (opt_.off_distribution_trials <= 0 || !any_input_varies(spec_)) return;
  std::vector<bool> declared_nf;
  for (const auto& r : corr_ref_) {
    auto nf = nonfinite_outputs(r.out);
    declared_nf.resize(std::max(declared_nf.size(), nf.size()), false);
    for (size_t i = 0; i < nf.size(); ++i) declared_nf[i] = declared_nf[i] || nf[i];
  }
  const uint64_t regime_seed = seeds_(Stream::OffDistribution, 1000);
  for (int k = 0; k < opt_.off_distribution_trials; ++k)
    for (bool mild : {false, true}) {
      Regime g = pick_regime(regime_seed, size_t(k), mild);
      IVals in = draw_inputs(spec_, seeds_(Stream::OffDistribution, 2000 + 2 * uint64_t(k) + mild), precision_, dev_, g);
      RefRun r;
      LazyOracle lo = oracle_for(in);
      std::string why = off_distribution_problem(in, declared_nf, lo, &r);
      if (!why.empty()) {
        dists_skipped_.push_back(g.describe() + ": " + why);
        continue;
      }
      corr_in_.push_back(std::move(in));
      corr_ref_.push_back(std::move(r));
      corr_oracle_.push_back(std::move(lo));
      corr_dist_.push_back(g.describe());
      dists_.push_back(g.describe());
      break;
    }
}

// ---------------------------------------------------------------- the input layout and the checks
Placed Evaluation::place(RemoteOp& op, size_t slot, const IVals& in) {
  Placed p;
  p.offset = slot_offset(slot);
  const std::string e = encode_block(op.inputs(), p.offset, in, &p.where);
  if (!e.empty()) throw std::runtime_error(e);
  used_hi_ = std::max(used_hi_, p.offset + block_bytes(in));
  return p;
}

// What the judge checks after every call of the candidate, timed ones included, from what it
// reads itself: outputs it could not read, outputs in memory the caller still holds, outputs in
// an input's memory (unless the reference's output shares that input), inputs written in place.
// Returns the inputs written (their bytes now), for check_effect.
std::map<size_t, at::Tensor> Evaluation::check_call(RemoteOp& op, const CallOutputs& co, const Placed& p, const IVals& in) {
  if (!co.problem.empty()) hack("the judge could not read the candidate's " + co.problem);
  // An output the reference itself returns as a view of an input lives in the input's memory:
  // neither aliasing nor reuse (the judge lays the inputs out in two alternating slots).
  const auto ref_views = [&](size_t i) { return i < ref_alias_.size() && ref_alias_[i] != 0; };
  for (size_t i = 0; i < co.reuses.size(); ++i)
    if (co.reuses[i] >= 0 && !ref_views(i))
      hack("an output returns the buffer of an earlier call's output that the caller still holds (stale output reuse)");
  // An output in an input's memory is judged by what backs it, not by its address: the kernel's
  // map says which file and offset each of its pages is, so a second mapping of the judge's input
  // region (mremap, mmap of the same pages) at an address the judge never laid an input at is
  // still the input's memory.
  for (size_t i = 0; i < co.lo.size(); ++i) {
    bool second = false;
    const auto backing = op.input_backing(co.lo[i], co.hi[i], &second);
    const std::string how = second ? " (through a second mapping of the judge's input region)" : "";
    bool in_an_input = false;
    for (size_t j = 0; j < in.size() && j < 64; ++j) {
      if (!in[j].isTensor() || !in[j].toTensor().defined()) continue;
      const uint64_t a = p.where[j], b = a + in[j].toTensor().nbytes();
      bool hit = false;
      for (const auto& [x, y] : backing) hit = hit || ranges_overlap(x, y, a, b);
      if (!hit) continue;
      in_an_input = true;
      if (!(i < ref_alias_.size() && ((ref_alias_[i] >> j) & 1)))
        hack("output " + std::to_string(i) + " aliases input " + std::to_string(j) + input_name(j) +
             " where the reference's output does not" + how);
    }
    if (!in_an_input && !backing.empty())
      hack("output " + std::to_string(i) + " lies in the judge's input region outside this call's inputs" + how);
  }
  // Two outputs in the same memory, where the reference returns them in separate storage: a caller
  // writing one changes the other (and one buffer is paid for where the reference pays for two).
  // Judged from the address ranges the judge read them at; allowed where the reference's own
  // outputs share storage (it returns y and y.t(), say).
  for (size_t i = 0; i < co.lo.size() && i < 64; ++i)
    for (size_t k = i + 1; k < co.lo.size() && k < 64; ++k) {
      if (co.hi[i] == co.lo[i] || co.hi[k] == co.lo[k] || !ranges_overlap(co.lo[i], co.hi[i], co.lo[k], co.hi[k])) continue;
      if (!(i < ref_out_alias_.size() && ((ref_out_alias_[i] >> k) & 1)))
        hack("output " + std::to_string(k) + " overlaps output " + std::to_string(i) +
             " in memory where the reference returns them in separate storage");
    }
  std::map<size_t, at::Tensor> mutated;
  for (size_t j = 0; j < in.size(); ++j) {
    if (!in[j].isTensor() || !in[j].toTensor().defined()) continue;
    at::Tensor mine = in[j].toTensor().to(at::kCPU).contiguous();
    const char* now = op.inputs().at(p.where[j]);
    if (std::memcmp(now, mine.data_ptr(), mine.nbytes()) == 0) continue;
    at::Tensor after = at::empty_like(mine);
    std::memcpy(after.data_ptr(), now, mine.nbytes());
    mutated[j] = after;
    if (!(j < ref_mut_.size() && ref_mut_[j]))
      hack("the candidate modified input " + std::to_string(j) + input_name(j) + " in place");
  }
  return mutated;
}

// An input the reference writes in place too: the candidate's effect on it must be the reference's.
void Evaluation::check_effect(const std::map<size_t, at::Tensor>& mutated, const RefRun& rr, const std::string& when) {
  for (const auto& [j, after] : mutated) {
    if (!(j < ref_mut_.size() && ref_mut_[j]) || j >= rr.after.size()) continue;
    LazyOracle none;
    Verdict v = judge({after}, {rr.after[j].toTensor()}, none, tol_);
    if (!v.ok)
      hack("the candidate modified input " + std::to_string(j) + input_name(j) + " in place otherwise than the reference does (" +
           when + ": " + v.message + ")");
  }
}

// ---------------------------------------------------------------- timing
double Evaluation::channel_ms(RemoteOp& op) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i) v.push_back(op.nop());
  return summarize(v).median;
}

// One timed loop, the same for both sides: inputs laid out while the runner is stopped, each call
// one window of the judge's clock; every candidate call checked (its outputs against the reference
// on the same inputs, after the loop: the judge works only while the runner is stopped, and the
// reference runs on re-drawn inputs).
void Evaluation::time_loop(RemoteOp& op, bool is_candidate, Timed* out, RemoteOp* fresh) {
  struct Pending {
    size_t trial;
    IVals in;  // the inputs it was called on, kept (the same draw: not drawn again for the check)
    Outputs outs;
    std::vector<c10::DeviceType> devices;
    std::map<size_t, at::Tensor> mutated;
  };
  std::vector<Pending> pending;
  size_t pending_bytes = 0;
  const auto timed_input = [&](size_t trial) {
    return opt_.fresh_inputs ? draw(Stream::Timing, trial + (is_candidate ? 1000000 : 1)) : reused_in_;
  };
  auto check_pending = [&]() {
    for (auto& p : pending) {
      const IVals& in = p.in;
      RefRun rr = opt_.fresh_inputs ? ref_call(in) : reused_ref_;
      LazyOracle lo = opt_.fresh_inputs ? oracle_for(in) : reused_oracle_;
      Verdict v = judge(p.outs, rr.out, lo, tol_, p.devices);
      check_effect(p.mutated, rr, "timed call " + std::to_string(p.trial));
      if (!v.ok) {
        hack("timed call " + std::to_string(p.trial) + " returned a wrong result although the correctness trials passed (" +
             v.message + ")");
        pending.clear();
        return false;
      }
    }
    pending.clear();
    pending_bytes = 0;
    return true;
  };
  const IVals warm = opt_.fresh_inputs ? draw(Stream::Warmup, is_candidate ? 1 : 0) : reused_in_;
  // Drift check: the reference re-timed in two short blocks around the candidate's timed loop
  // (before its warm-up, and right after its last call). Never decides the verdict: a reference
  // runner that fails ends the check only.
  auto fresh_block = [&](size_t n) {
    if (!fresh) return;
    try {
      for (size_t i = 0; i < kFreshWarmup; ++i) {
        place(*fresh, i % kTimedSlots, warm);
        fresh->call(slot_offset(i % kTimedSlots));
      }
      for (size_t k = 0; k < n; ++k) {
        const size_t slot = k % kTimedSlots;
        place(*fresh, slot, opt_.fresh_inputs ? draw(Stream::Timing, 2000000 + fresh_samples_.size()) : reused_in_);
        CallResult fr = fresh->call(slot_offset(slot));
        fresh_samples_.push_back(device_timing_ ? std::min(fr.runner_ms, fr.judge_ms) : fr.judge_ms);
        ref_cpu_ms_ += fr.cpu_ms;
        ++ref_cpu_calls_;
      }
    } catch (const std::exception& e) {
      res_.notes.push_back(std::string("drift check skipped: the reference's re-timing failed (") + e.what() + ")");
      fresh = nullptr;
      fresh_ref_.reset();
    }
  };
  auto one_call = [&](size_t slot, const IVals& in) {
    Placed p = place(op, slot, in);
    CallResult cr = op.call(p.offset);
    out->cpu_ms += cr.cpu_ms;
    out->stop_ms.push_back(cr.stop_ms);
    ++out->calls;
    std::map<size_t, at::Tensor> mutated;
    if (is_candidate) mutated = check_call(op, cr.calls.at(0), p, in);
    return std::make_pair(std::move(cr), std::move(mutated));
  };
  // The fast-op budget (stats.hpp) is the candidate's: the reference is timed once for the frozen
  // baseline that later evaluations reuse, so it keeps the whole rule.
  StopRule rule = opt_.stop;
  if (!is_candidate) rule.budget_s = 0;
  fresh_block(kFreshSamples / 2);
  for (int i = 0; i < opt_.warmup; ++i) one_call(size_t(i) % kTimedSlots, warm);
  const auto t_loop = Clock::now();
  for (size_t trial = 0;; ++trial) {
    const size_t slot = trial % kTimedSlots;
    IVals in = timed_input(trial);
    auto [cr, mutated] = one_call(slot, in);
    // On a GPU the runner's device time (a claim: never above the judge's own window, and bounded
    // below by the judge's floor afterwards); else the judge's window.
    const double ms = device_timing_ ? std::min(cr.runner_ms, cr.judge_ms) : cr.judge_ms;
    if (is_candidate) {
      last_timed_slot_ = slot;
      pending.push_back({trial, std::move(in), std::move(cr.calls.at(0).tensors), std::move(cr.calls.at(0).devices), std::move(mutated)});
      for (const auto& t : pending.back().outs) pending_bytes += t.defined() ? t.nbytes() : 0;
      for (const auto& v : pending.back().in)
        pending_bytes += v.isTensor() && v.toTensor().defined() ? v.toTensor().nbytes() : 0;
      if (pending_bytes > (size_t(256) << 20) && !check_pending()) break;
    }
    // Measured on every GPU trial, CUPTI or not.
    out->stats_sum.persisting_l2 |= cr.stats.persisting_l2;
    out->stats_sum.off_stream_ms = std::max(out->stats_sum.off_stream_ms, cr.stats.off_stream_ms);
    if (cr.stats.valid) {  // CUPTI: information, never a verdict by itself
      out->stats_sum.kernel_ms += cr.stats.kernel_ms;
      out->stats_sum.launches += cr.stats.launches;
      out->stats_sum.memcpys += cr.stats.memcpys;
      out->stats_sum.streams = std::max(out->stats_sum.streams, cr.stats.streams);
      out->stats_sum.valid = true;
      ++out->stats_trials;
    }
    if (trial > 0) out->samples.push_back(ms);  // the first timed trial is dropped
    double el = std::chrono::duration<double>(Clock::now() - t_loop).count();
    if (trial > 0 && should_stop(rule, out->samples, el, &out->reason)) break;
  }
  fresh_block(kFreshSamples - kFreshSamples / 2);
  if (is_candidate) check_pending();
}

// One batch: `batch_` back-to-back calls on fresh inputs, synchronized once, on the judge's clock
// (no_op: the same without the op, the channel's own cost). A candidate's outputs are checked like
// any call's. Returns the window's ms and the runner's own timer over the calls, or nullopt when a
// checked call was wrong (flagged).
std::optional<std::pair<double, double>> Evaluation::floor_batch(RemoteOp& op, bool no_op, bool check, uint64_t round) {
  std::vector<IVals> ins;
  std::vector<Placed> placed;
  for (size_t k = 0; k < batch_; ++k) {
    ins.push_back(draw(Stream::Floor, (check ? 1000000 : 0) + round * kMaxBatch + k));
    placed.push_back(place(op, kTimedSlots + k, ins.back()));
  }
  CallResult cr = op.call(placed[0].offset, batch_, slot_bytes_, no_op);
  if (!check) return std::make_pair(cr.judge_ms, cr.runner_ms);
  for (size_t k = 0; k < batch_; ++k) {
    auto mutated = check_call(op, cr.calls.at(k), placed[k], ins[k]);
    RefRun rr = ref_call(ins[k]);
    LazyOracle lo = oracle_for(ins[k]);
    check_effect(mutated, rr, "a call of the judge's floor batch");
    Verdict v = judge(cr.calls.at(k).tensors, rr.out, lo, tol_, cr.calls.at(k).devices);
    if (!v.ok) {
      hack("a call of the judge's floor batch returned a wrong result although the correctness trials passed (" + v.message + ")");
      return std::nullopt;
    }
  }
  return std::make_pair(cr.judge_ms, cr.runner_ms);
}

// The judge's floor under the runner's device time: rounds of a channel batch and a batch on the
// reference's runner (which runs no candidate code) and a batch on the candidate's, interleaved so
// all three see the same load. A busy machine only adds time, so the fastest of each counts:
//   floor = (fastest candidate batch - fastest channel batch) / calls - overhead,
// the overhead being the reference's own per call beyond its runner's timer: the fastest of a
// reference batch's judge time less that runner's own timer over the very same batch (the op's
// noise cancels), less the channel. Without a reference runner the channel is the candidate's
// own and no overhead is allowed (the floor can only be lower).
json Evaluation::device_floor(RemoteOp& cand, RemoteOp* ref, double runner_ms) {
  const size_t rounds = 5;
  const double n = double(batch_);
  std::vector<double> nops, cands, ref_beyond;
  for (size_t r = 0; r < rounds; ++r) {
    if (ref) {
      try {
        nops.push_back(floor_batch(*ref, true, false, r)->first);
        const auto rb = *floor_batch(*ref, false, false, r);
        ref_beyond.push_back(rb.first - rb.second);
      } catch (const std::exception& e) {
        res_.notes.push_back(std::string("the reference's side of the judge's floor failed (") + e.what() + ")");
        ref = nullptr;
        nops.clear();
        ref_beyond.clear();
      }
    }
    if (!ref) nops.push_back(floor_batch(cand, true, false, r)->first);
    auto c = floor_batch(cand, false, true, r);
    if (!c) return json::object();
    cands.push_back(c->first);
  }
  const Summary c = summarize(cands);
  const double channel = summarize(nops).min;
  const double per_call = std::max(0.0, (c.min - channel) / n);
  const double allowance = ref_beyond.empty() ? 0.0 : std::max(0.0, (summarize(ref_beyond).min - channel) / n);
  const double net = std::max(0.0, per_call - allowance);
  const double band = std::min(0.5, std::max(0.2, c.min > 0 ? (c.median - c.min) / c.min : 0.0));
  json dt = {{"runner_ms", round_to(runner_ms, 1e-6)},
             {"judge_floor_ms", round_to(net, 1e-6)},
             {"batch", {{"calls", batch_}, {"rounds", rounds}, {"ms", round_to(c.min, 1e-4)}, {"channel_ms", round_to(channel, 1e-4)},
                        {"reference_overhead_ms", round_to(allowance, 1e-6)}, {"noise", round_to(band, 1e-3)}}}};
  if (!ref) dt["weaker"] = "the channel measured on the candidate's own runner (no reference runner was available)";
  if (net > 0 && runner_ms < net * (1 - band)) {
    char b[420];
    std::snprintf(b, sizeof b,
                  "the device time reported from the candidate's process, %.4f ms, is below the judge's floor %.4f ms "
                  "(batches of %zu back-to-back calls on its own clock, less the channel and the reference's own "
                  "overhead; noise +-%.0f%%): the floor is the time used",
                  runner_ms, net, batch_, 100 * band);
    res_.advisory.push_back(b);
    if (runner_ms * 10 < net) hack(std::string("forged device time: ") + b);
    res_.runtime_ms = net;
    dt["used"] = "judge floor";
  } else {
    dt["used"] = "runner";
  }
  return dt;
}

void Evaluation::time_reference() {
  enter(Phase::TimingReference);
  std::optional<BaselineRecord> stored;
  std::vector<std::string> reasons = frozen_reasons(&stored);
  if (reasons.empty()) {
    ref_ms_ = stored->ref_runtime_ms;
    if (stored->ci_lo_ms > 0) ref_ci_ = std::make_pair(stored->ci_lo_ms, stored->ci_hi_ms);
    frozen_ = stored;
    timer_name_ = stored->key.at("timer").substr(0, stored->key.at("timer").size() - std::strlen(kProtocol));
    key_["timer"] = stored->key.at("timer");
    res_.ref_source = "frozen baseline (measured " + stored->measured_at + ")";
    const Load then = Load::from_json(stored->load);
    if (then.contended()) {
      res_.extra_metrics["baseline_contended"] = true;
      res_.advisory.push_back(under_load("the frozen baseline was measured", then) +
                              ": it may be slow; the reference re-timed now replaces it when faster beyond the noise");
    }
  } else {
    if (!stored) reasons.clear();
    // The other processes' CPU is sampled from before the reference's runner starts: the timing loop
    // alone can be a few ms, under two ticks of /proc/stat, where any load reads as none (seen: a
    // 0.01 s window reading 0 of 2 CPUs beside two spinning processes). The runner's start is this
    // process tree's own CPU and does not count as load.
    const CpuSample before = cpu_sample(getpid());
    ref_runner_ = std::make_unique<RemoteOp>(ref_runner_spec());
    RemoteOp& rop = *ref_runner_;
    if (use_cuda_) timer_name_ = rop.loaded().value("timer", timer_name_);
    if (rop.loaded().contains("timer_note")) res_.timer_note = rop.loaded()["timer_note"];
    key_["timer"] = timer_name_ + kProtocol;
    channel_["reference"] = round_to(channel_ms(rop), 1e-4);
    Timed rt;
    time_loop(rop, false, &rt);
    const Load load = load_between(before, cpu_sample(getpid()));
    Summary s = summarize(rt.samples);
    if (device_timing_) {
      batch_ = std::clamp(size_t(std::ceil(2.0 / std::max(s.median, 1e-3))), std::min<size_t>(8, max_batch_), max_batch_);
      ref_device_ms_ = s.median;
    }
    ref_ms_ = s.median;
    BaselineRecord rec;
    rec.key = key_;
    rec.ref_runtime_ms = s.median;
    if (s.ci.reaches) {
      ref_ci_ = std::make_pair(s.ci.lo, s.ci.hi);
      rec.ci_lo_ms = s.ci.lo;
      rec.ci_hi_ms = s.ci.hi;
    }
    rec.measured_at = utc_now_iso();
    rec.trials = s.n;
    rec.rel_iqr = s.rel_iqr;
    rec.load = load.to_json();
    if (load.measured) res_.extra_metrics["baseline_load"] = rec.load;
    if (load.contended()) {
      res_.extra_metrics["baseline_contended"] = true;
      res_.advisory.push_back(under_load("the reference was timed", load) +
                              ": the frozen figure is marked so and may be slow; later evaluations re-time the "
                              "reference beside the candidate and use that figure when it is faster beyond the "
                              "noise. On a quiet machine: --refresh-baseline");
    }
    baseline_out_ = rec.to_json();
    write_json_atomic(job_.at("stage_path"), json{{"baseline_record", baseline_out_}});
    ref_cpu_ms_ = rt.cpu_ms;
    ref_cpu_calls_ = rt.calls;
    // Device timing keeps this runner (stopped) for the judge's floor beside the candidate's.
    if (!device_timing_) ref_runner_.reset();
    const std::string problem = job_.value("baseline_problem", "");
    std::string why;
    if (opt_.refresh_baseline) why = "refresh requested";
    else if (!problem.empty()) why = problem;
    else if (reasons.empty()) why = "no frozen baseline yet";
    else {
      why = "baseline key changed: ";
      for (size_t i = 0; i < reasons.size(); ++i) why += (i ? "; " : "") + reasons[i];
    }
    res_.ref_source = "measured now (" + why + ")";
    if (!reasons.empty() || !problem.empty()) res_.notes.push_back("baseline re-measured: " + why);
  }
  res_.ref_runtime_ms = ref_ms_;
  res_.ref_ci = ref_ci_;
}

// ---------------------------------------------------------------- the candidate
void Evaluation::load_candidate() {
  enter(Phase::LoadingCandidate);
  res_.timer = timer_name_;
  if (!cand_) cand_ = std::make_unique<RemoteOp>(cand_runner_spec());
  cand_->ensure_loaded();
  isolation_ = cand_->isolation();
  for (const auto& n : cand_->loaded().value("load_changes", std::vector<std::string>{}))
    hack("loading the candidate changed the dispatch table of " + n);
  // A Python solution holds its own parameters, constructed as the reference's were (same seed,
  // same constructor arguments); a C++ op is passed the reference's.
  if (!params_.empty() && !python_candidate()) cand_->set_args(params_);
}

void Evaluation::correctness_trials() {
  enter(Phase::CorrectnessTrials);
  RemoteOp& cand = *cand_;
  Deviation dev_sum;
  dev_sum.trials = corr_in_.size();
  res_.extra_metrics["input_distributions"] = dists_;
  if (!dists_skipped_.empty()) res_.extra_metrics["input_distributions_skipped"] = dists_skipped_;
  std::string failed_rule, failed_dist;
  bool used_oracle = false, used_relative = false;
  std::string first_failure;
  int failed_at = -1;
  double sum_avg = 0, max_l2 = 0;
  for (size_t t = 0; t < corr_in_.size(); ++t) {
    const std::string trial_name =
        "trial " + std::to_string(t) + (corr_dist_[t].empty() ? "" : " (off the declared distribution: " + corr_dist_[t] + ")");
    // Each trial at another address (slot): an answer keyed on the address misses.
    Placed p = place(cand, kTimedSlots + t % corr_slots_, corr_in_[t]);
    CallResult cr;
    try {
      cr = cand.call(p.offset);
    } catch (const RunnerFailure&) {
      throw;
    } catch (const std::exception& e) {
      // The candidate threw (an ATen error, typically): say so, with the order diagnosis when the
      // parameters' shapes reveal a wrong order.
      const std::string d = params_.size() >= 2 ? diagnose_order(corr_in_[t], corr_ref_[t].out, corr_oracle_[t]) : "";
      throw std::runtime_error(clean_error(e) + (d.empty() ? "" : "; " + d));
    }
    auto mutated = check_call(cand, cr.calls.at(0), p, corr_in_[t]);
    check_effect(mutated, corr_ref_[t], trial_name);
    Verdict v = judge(cr.calls.at(0).tensors, corr_ref_[t].out, corr_oracle_[t], tol_, cr.calls.at(0).devices);
    if (!v.ok && failed_rule.empty()) {
      failed_rule = v.failed_rule;
      failed_dist = corr_dist_[t].empty() ? "declared" : corr_dist_[t];
    }
    if (v.fatal) {  // a wrong contract (count, shape, dtype, device): the ERROR line says it; no deviation
      correct_ = false;
      if (first_failure.empty()) first_failure = trial_name + ": " + v.message;
      if (failed_at < 0) failed_at = int(t);
      dev_sum.trials = t;
      break;
    }
    used_oracle |= v.rule == "oracle";
    used_relative |= v.rule == "relative";
    dev_sum.max_abs = std::max(dev_sum.max_abs, v.max_abs);
    dev_sum.max_rel = std::max(dev_sum.max_rel, v.max_rel);
    max_l2 = std::max(max_l2, v.rel_l2);
    sum_avg += v.avg_abs;
    if (!v.ok) {
      correct_ = false;
      ++dev_sum.failed_trials;
      if (first_failure.empty()) first_failure = trial_name + ": " + v.message;
      if (failed_at < 0) failed_at = int(t);
    }
  }
  dev_sum.avg_abs = dev_sum.trials ? sum_avg / double(dev_sum.trials) : 0;
  res_.extra_metrics["rel_l2_error"] = max_l2;
  {
    std::ostringstream tr;
    char b[64];
    std::snprintf(b, sizeof b, "atol=%.0e rtol=%.0e", tol_.atol, tol_.rtol);
    tr << (tol_.auto_mode ? "auto: fixed " : "fixed ") << b;
    if (used_oracle) tr << "; fp64 oracle accepted re-association (<= " << int(tol_.oracle_factor) << "x the reference's own error)";
    if (used_relative) tr << "; low signal (max|ref| < 10*atol): judged on relative error";
    tr << "; relative L2 <= max(" << int(tol_.oracle_factor) << "x the reference's, " << tol_.l2_floor << ")";
    bool integral = false;
    if (!corr_ref_.empty())
      for (const auto& o : corr_ref_.front().out)
        integral |= o.defined() && !c10::isFloatingType(o.scalar_type()) && !c10::isComplexType(o.scalar_type());
    if (integral && tol_.integer_exact) tr << "; integer outputs exact";
    if (integral && !tol_.integer_exact) {
      tr << "; integer outputs by these float tolerances (the spec's integer_outputs)";
      res_.advisory.push_back("the spec declares \"integer_outputs\": \"tolerance\": integer outputs were judged with the "
                              "float tolerances, not exactly");
    }
    res_.tolerance_rule = tr.str();
  }
  if (!correct_) {
    res_.correct = false;
    if (!failed_rule.empty()) {
      res_.extra_metrics["failed_rule"] = failed_rule;
      res_.extra_metrics["failed_distribution"] = failed_dist;
    }
    if (dev_sum.failed_trials > 0) res_.deviation = dev_sum;
    res_.error = "incorrect: " + first_failure;
    if (params_.size() >= 2 && failed_at >= 0 && !python_candidate()) {
      const std::string d = diagnose_order(corr_in_[size_t(failed_at)], corr_ref_[size_t(failed_at)].out, corr_oracle_[size_t(failed_at)]);
      if (!d.empty()) res_.error += "; " + d;
    }
  }
}

void Evaluation::time_candidate() {
  enter(Phase::TimingCandidate);
  RemoteOp& cand = *cand_;
  channel_["candidate"] = round_to(channel_ms(cand), 1e-4);
  if (frozen_ && fresh_ref_) {
    try {
      channel_["reference"] = round_to(channel_ms(*fresh_ref_), 1e-4);
    } catch (const std::exception&) {
    }
  }
  Timed ct;
  const ClockSample clocks_before = judge_clock_sample(use_cuda_);
  time_loop(cand, true, &ct, frozen_ && fresh_ref_ ? fresh_ref_.get() : nullptr);
  if (auto a = clocks_evidence(res_.extra_metrics, clocks_before, judge_clock_sample(use_cuda_)); !a.empty()) res_.advisory.push_back(a);
  Summary s = summarize(ct.samples);
  res_.runtime_ms = s.median;
  res_.trials = s.n;
  res_.rel_iqr = s.rel_iqr;
  res_.rel_ci = s.rel_ci_half;
  // The median's interval (issue 49): printed as latency_ci_ms when its exact coverage reaches 95 %;
  // below 6 trials none does, and the widest one, [min, max], goes here with its coverage.
  if (s.ci.reaches) res_.latency_ci = std::make_pair(s.ci.lo, s.ci.hi);
  else if (s.n >= 1) res_.extra_metrics["latency_ci_widest_ms"] = {round_to(s.ci.lo, 1e-6), round_to(s.ci.hi, 1e-6)};
  res_.extra_metrics["latency_ci_coverage"] = round_to(s.ci.coverage, 1e-4);
  res_.stop_reason = to_string(ct.reason);
  res_.noisy = ct.reason != StopReason::Converged;
  res_.extra_metrics["cv"] = round_to(s.cv, 1e-5);
  // Distance to the limit (issue 49): the least bytes one call moves and the rate that is at the median.
  {
    std::vector<at::Tensor> ins;
    for (const auto& v : reused_in_)
      if (v.isTensor()) ins.push_back(v.toTensor());
    const uint64_t counted = bytes_moved(ins, reused_ref_.out);
    const uint64_t bytes = spec_.bytes.value_or(counted);  // the spec's declaration refines the count
    res_.extra_metrics["bytes_moved"] = bytes;
    if (spec_.bytes) res_.extra_metrics["bytes_counted"] = counted;
    if (s.median > 0) res_.extra_metrics["bandwidth_gbps"] = round_to(double(bytes) / (s.median * 1e-3) / 1e9, 1e-4);
    if (limits_) add_limit_metrics(res_.extra_metrics, *limits_, bytes, spec_.bytes.has_value(), spec_.flops, s.median);
  }
  // Inputs that never vary: said, never flagged (an honest kernel on such a spec is honest).
  if (!opt_.fresh_inputs || !any_input_varies(spec_)) res_.extra_metrics["timed_inputs_identical"] = true;
  if (opt_.fresh_inputs && !any_input_varies(spec_))
    res_.advisory.push_back("the timed inputs were identical on every call: the spec draws no random values (" +
                            fixed_inputs_text(spec_) +
                            "), so a kernel that remembers its last inputs' result is timed as if it computed, "
                            "and the mutation sentinel rewrites the inputs with the same values; the speedup holds "
                            "for these very inputs only. For a figure that does: random inputs in the spec");
  res_.extra_metrics["channel_ms"] = channel_;
  // CPU time of every thread of each runner, read from outside: per timed window, and while the
  // judge held the candidate's stopped (nothing can run there). Information: a pool that spins is
  // honest, and its spinning is inside the windows.
  json cpu = {{"per_timed_call", round_to(ct.cpu_ms / double(std::max<size_t>(ct.calls, 1)), 1e-4)},
              {"while_stopped", round_to(cand.cpu_outside_ms(), 1e-3)}};
  if (ref_cpu_calls_) cpu["reference_per_timed_call"] = round_to(ref_cpu_ms_ / double(ref_cpu_calls_), 1e-4);
  res_.extra_metrics["runner_cpu_ms"] = cpu;
  res_.extra_metrics["stop_ms"] = round_to(summarize(ct.stop_ms).median, 1e-4);
  if (res_.noisy) {
    char b[400];
    std::snprintf(b, sizeof b,
                  "timing NOISY: stopped at %s after %zu trials; the times vary by CV %.1f%% (median CI "
                  "+-%.2f%%, target +-%.2f%%). A busy machine or a very short op: rerun on a quieter machine, "
                  "raise --max-trials/--max-time (--time-budget for a fast op), or loosen --target-ci",
                  res_.stop_reason.c_str(), s.n, 100 * s.cv, 100 * s.rel_ci_half, 100 * opt_.stop.target_rel_ci);
    res_.advisory.push_back(b);
  }

  // The device time is the runner's claim: it stands only above the judge's floor. The floor is
  // the candidate's batch per call, less the channel and less the reference's own per-call
  // overhead beyond its device time (both measured on the reference's runner, which runs no
  // candidate code). Below it by more than the noise: the judge's floor is the figure; far below
  // (10x): a forged time.
  if (device_timing_) {
    if (frozen_) {
      batch_ = std::clamp(size_t(std::ceil(2.0 / std::max(s.median, 1e-3))), std::min<size_t>(8, max_batch_), max_batch_);
      if (!fresh_samples_.empty()) ref_device_ms_ = summarize(fresh_samples_).median;
    }
    RemoteOp* ref = ref_runner_ ? ref_runner_.get() : fresh_ref_.get();
    res_.extra_metrics["device_timing"] = device_floor(cand, ref, s.median);
    ref_runner_.reset();
  }

  if (frozen_ && fresh_samples_.size() >= 3 && s.median > 0) {
    // The frozen figure carries whatever load there was when it was measured. Drift: the fresh
    // figure differs from it by more than the measured noise (the larger relative IQR of the
    // two measurements, at least 5 %, at most 50 %: ten fresh samples on a busy machine can have an
    // IQR wider than any real drift, and a frozen figure 2x off is worth saying however noisy).
    Summary f = summarize(fresh_samples_);
    double rel = f.median / frozen_->ref_runtime_ms - 1.0;
    double band = std::min(std::max({f.rel_iqr, frozen_->rel_iqr, 0.05}), 0.5);
    bool drift = std::fabs(rel) > band;
    const double cand_ms = *res_.runtime_ms;
    res_.extra_metrics["ref_runtime_fresh_ms"] = round_to(f.median, 1e-6);
    res_.extra_metrics["speedup_fresh"] = round_to(f.median / cand_ms, 1e-4);
    res_.extra_metrics["baseline_drift"] = drift;
    res_.extra_metrics["baseline_drift_rel"] = round_to(rel, 1e-4);
    if (drift) {
      // Faster now beyond the noise: the frozen figure carries a load that is gone (or never was
      // the reference's), so the speedup is reported against the fresh figure. Slower now: the
      // frozen figure stays (a load now, or a candidate that slows the reference, must not help).
      const bool faster = rel < 0;
      char b[520];
      std::snprintf(b, sizeof b,
                    "baseline drift: the frozen reference time %.4f ms (measured %s) differs from the reference "
                    "re-timed now, %.4f ms (%+.0f%%, noise +-%.0f%%); speedup %.2fx against the frozen figure, "
                    "%.2fx against the fresh one%s. On a quiet machine: --refresh-baseline",
                    frozen_->ref_runtime_ms, frozen_->measured_at.c_str(), f.median, 100 * rel, 100 * band,
                    frozen_->ref_runtime_ms / cand_ms, f.median / cand_ms,
                    faster ? ", which is the speedup reported (the faster reference figure)" : "");
      res_.advisory.push_back(b);
      if (faster) {
        res_.ref_runtime_ms = f.median;
        res_.ref_ci.reset();
        if (f.ci.reaches) res_.ref_ci = std::make_pair(f.ci.lo, f.ci.hi);
        res_.extra_metrics["ref_runtime_frozen_ms"] = round_to(frozen_->ref_runtime_ms, 1e-6);
        char src[240];
        std::snprintf(src, sizeof src, "; replaced by the reference re-timed now, %.4f ms: %.0f%% faster, beyond the noise +-%.0f%%",
                      f.median, -100 * rel, 100 * band);
        res_.ref_source += src;
      }
    }
  }
  fresh_ref_.reset();  // its runner ends here
  // GPU timing semantics (timer_cuda.cpp): work on any stream is inside the timed region; CUPTI
  // figures are information only, a call that does no work is caught by the output checks.
  if (ct.stats_sum.persisting_l2) hack("the candidate set an L2 persistence window (keeps its data in L2 across the flush)");
  if (ct.stats_sum.off_stream_ms > 0) {
    res_.extra_metrics["max_off_stream_ms"] = ct.stats_sum.off_stream_ms;
    res_.advisory.push_back("work continued on other streams after the current stream finished (counted in the time)");
  }
  if (ct.stats_sum.valid && ct.stats_trials > 0) {
    res_.kernel_ms = ct.stats_sum.kernel_ms / double(ct.stats_trials);
    res_.launches = ct.stats_sum.launches / ct.stats_trials;
    res_.extra_metrics["memcpys_per_call"] = double(ct.stats_sum.memcpys) / double(ct.stats_trials);
    res_.extra_metrics["streams"] = ct.stats_sum.streams;
    if (ct.stats_sum.launches == 0)
      res_.advisory.push_back("CUPTI saw no kernel launched during the timed calls (outputs were still checked)");
  }
}

// The last timed call's inputs rewritten in place (same address, bytes only), then twice a single
// element per tensor changed (at two different places): the output must follow each time. A cache
// keyed on a sample of the values misses a one-element change unless it samples that very element,
// twice in a row.
void Evaluation::mutation_sentinel() {
  enter(Phase::MutationSentinel);
  RemoteOp& cand = *cand_;
  auto one_changed = [&](const IVals& base_vals, uint64_t k) {
    IVals out = clone_inputs(base_vals);
    IVals other = draw(Stream::Sentinel, 1 + k);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seeds_(Stream::Sentinel, 10 + k));
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].isTensor()) continue;
      at::Tensor base = out[i].toTensor().contiguous();
      if (base.numel() == 0) continue;
      at::Tensor mask = at::zeros(base.sizes(), at::kBool);
      int64_t pick = at::randint(base.numel(), {1}, gen, at::kLong).item<int64_t>();
      mask.view(-1)[pick] = true;
      out[i] = at::where(mask.to(base.device()), other[i].toTensor(), base).contiguous();
    }
    return out;
  };
  const IVals full = draw(Stream::Sentinel, 0);
  const IVals sparse = one_changed(full, 0);
  const IVals sparse2 = one_changed(sparse, 1);
  struct Step {
    const IVals& in;
    const char* what;
  };
  const Step steps[] = {{full, "inputs rewritten in place"},
                        {sparse, "one input element changed in place"},
                        {sparse2, "one input element changed in place"}};
  bool ok = true;
  std::string msg;
  for (const Step& st : steps) {
    Placed p = place(cand, last_timed_slot_, st.in);
    CallResult o = cand.call(p.offset);
    auto mutated = check_call(cand, o.calls.at(0), p, st.in);
    RefRun rr = ref_call(st.in);
    LazyOracle lo = oracle_for(st.in);
    check_effect(mutated, rr, "the mutation sentinel");
    Verdict v = judge(o.calls.at(0).tensors, rr.out, lo, tol_, o.calls.at(0).devices);
    if (!v.ok) {
      ok = false;
      msg = std::string(st.what) + ", output did not follow (" + v.message + ")";
      break;
    }
  }
  res_.sentinel = ok ? "PASS" : "FAIL";
  if (!ok) hack("mutation sentinel: " + msg);
}

// Every output the runner still holds, read again once the inputs are overwritten: recycled,
// late-written or input-sharing memory shows. Then the runner's last report of its own process.
void Evaluation::check_process_state() {
  enter(Phase::CheckingProcessState);
  RemoteOp& cand = *cand_;
  if (used_hi_ > slot_offset(0)) std::memset(cand.inputs().at(slot_offset(0)), 0xA5, used_hi_ - slot_offset(0));
  const std::string changed = cand.verify_held([&](size_t i) { return i < ref_alias_.size() && ref_alias_[i] != 0; });
  if (!changed.empty()) hack(changed);
  json fin = cand.end();
  for (const auto& n : fin.value("dispatch_changes", std::vector<std::string>{})) {
    bool dup = false;
    for (const auto& x : hacks_) dup |= x.find(n) != std::string::npos;
    if (!dup) hack("the dispatch table of " + n + " changed while the candidate ran");
  }
  for (const auto& c : fin.value("state_changes", std::vector<std::string>{}))
    hack("process-wide torch state changed: " + c);
  for (const auto& n : fin.value("foreign_ops", std::vector<std::string>{}))
    res_.advisory.push_back("the candidate registered an op outside its namespace: " + n);
  if (cand.output_bytes() > 0) res_.extra_metrics["candidate_output_bytes"] = cand.output_bytes();
  // The reuse check sees as many earlier calls as the runner still holds: where the hold budget
  // released outputs, say how deep it was, never stop checking silently.
  if (const size_t k = cand.fewest_held_calls(); k > 0) {
    res_.extra_metrics["output_hold"] = {{"budget_mib", RemoteOp::hold_budget_bytes() >> 20}, {"fewest_calls_held", k}};
    if (k < 8)
      res_.advisory.push_back("the outputs exceed the judge's hold budget (" + std::to_string(RemoteOp::hold_budget_bytes() >> 20) +
                              " MiB of output elements): at times only the last " + std::to_string(k) +
                              " calls' outputs were held, so a ring of more than " + std::to_string(k) +
                              " output buffers reused while the caller still holds them would not be seen");
  }
}

void Evaluation::conclude() {
  res_.extra_metrics["isolation"] = isolation_;
  if (!isolation_.is_null() && isolation_.value("level", "") != "namespaces")
    res_.advisory.push_back("weaker isolation: the candidate ran without namespaces (" +
                            isolation_.value("weaker_because", std::string("unknown")) + ")");
  if (!isolation_.is_null() && isolation_.contains("weaker_steps"))
    res_.advisory.push_back("weaker isolation: the runner could not confine itself (" +
                            isolation_["weaker_steps"].get<std::string>() + "), allowed by --allow-weaker-isolation");
  // Trust-lowering whatever it turned out to allow: the user accepted less than the judge promises.
  if (opt_.allow_weaker_isolation)
    res_.advisory.push_back("weaker isolation accepted: agent-chosen --allow-weaker-isolation (a confinement step that "
                            "cannot be applied is run without instead of refused)");
  if (cand_ && !cand_->judge_reads_outputs() && !use_cuda_)
    res_.advisory.push_back("weaker: the candidate's process copied its own outputs (" +
                            isolation_.value("outputs", std::string("the judge could not read them")) + ")");
  std::vector<std::string> uniq;
  for (const auto& h : hacks_)
    if (std::find(uniq.begin(), uniq.end(), h) == uniq.end()) uniq.push_back(h);
  res_.hacks = uniq;
  res_.correct = correct_ && res_.hacks.empty();
  if (correct_ && !res_.hacks.empty()) res_.error = "reward hack: " + res_.hacks.front();
  if (res_.correct && res_.runtime_ms && res_.ref_runtime_ms && *res_.runtime_ms > 0 &&
      *res_.ref_runtime_ms / *res_.runtime_ms > 10)
    res_.advisory.push_back("implausible speedup " + fixed4(*res_.ref_runtime_ms / *res_.runtime_ms) +
                            "x: check the candidate computes the whole op");
  finish(res_.correct ? 0 : 1);
}

// After a failed correctness trial: would the candidate be right with its parameters in another
// order? Tried: the module's named_parameters() order (the usual mistake: the export passes
// declaration order) and each exchange of two parameters whose shapes differ (so the shapes can tell
// them apart). Costs calls only on a failure; "" when no order fixes it. The diagnosis is a hint in
// the error message, never a verdict: the candidate stays incorrect.
std::string Evaluation::diagnose_order(const IVals& in, const Outputs& ref_out, LazyOracle& oracle) {
  RemoteOp& cand = *cand_;
  const IVals& params = params_;
  const size_t n = params.size();
  std::vector<std::vector<size_t>> perms;
  {
    std::vector<size_t> p;
    for (const auto& nm : named_order_) {
      auto it = std::find(spec_.params.begin(), spec_.params.end(), nm);
      if (it != spec_.params.end()) p.push_back(size_t(it - spec_.params.begin()));
    }
    bool identity = true;
    for (size_t k = 0; k < p.size(); ++k) identity &= p[k] == k;
    if (p.size() == n && !identity) perms.push_back(p);
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      if (!params[i].isTensor() || !params[j].isTensor() || params[i].toTensor().sizes() == params[j].toTensor().sizes())
        continue;
      std::vector<size_t> p(n);
      for (size_t k = 0; k < n; ++k) p[k] = k;
      std::swap(p[i], p[j]);
      if (std::find(perms.begin(), perms.end(), p) == perms.end()) perms.push_back(p);
    }
  if (perms.size() > 16) perms.resize(16);  // bounded: each try is one call
  for (const auto& p : perms) {
    IVals args;
    for (size_t k = 0; k < n; ++k) args.push_back(params[p[k]]);
    try {
      cand.set_args(args);
      Placed pl = place(cand, 0, in);
      CallResult cr = cand.call(pl.offset);
      if (!judge(cr.calls.at(0).tensors, ref_out, oracle, tol_, cr.calls.at(0).devices).ok) continue;
    } catch (const RunnerFailure&) {
      throw;
    } catch (const std::exception&) {
      continue;
    }
    cand.set_args(params);
    size_t k = 0;
    while (p[k] == k) ++k;
    const size_t n_in = spec_.inputs.size();
    std::ostringstream m;
    m << "argument order: the candidate is right when its parameters are passed in the order ";
    for (size_t q = 0; q < n; ++q) m << (q ? ", " : "") << spec_.params[p[q]];
    m << " - its argument " << (n_in + k + 1) << " (parameter " << (k + 1) << ") has the shape of `"
      << spec_.params[p[k]] << "` " << shape_str(params[p[k]].toTensor()) << ", where the export passes `"
      << spec_.params[k] << "` " << shape_str(params[k].toTensor())
      << "; the export passes the inputs, then the parameters in declaration order (";
    for (size_t q = 0; q < n; ++q) m << (q ? ", " : "") << spec_.params[q];
    m << "): check the order in the signature export-ref printed";
    return m.str();
  }
  try {
    cand.set_args(params);
  } catch (const RunnerFailure&) {
    throw;
  } catch (const std::exception&) {
  }
  return "";
}

}  // namespace

int worker_main(const std::string& job_path) {
  Evaluation(job_path).run();
}

}  // namespace kopt::bench
