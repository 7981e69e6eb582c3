#include "worker.hpp"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <dlfcn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "baseline.hpp"
#include "guards.hpp"
#include "inputs.hpp"
#include "options.hpp"
#include "proc.hpp"
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
using Outputs = std::vector<at::Tensor>;

void write_json_atomic(const std::string& path, const json& j) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp);
    f << j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::rename(tmp.c_str(), path.c_str());
}

std::string clean_error(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return e.what();
}

Outputs to_outputs(const c10::IValue& v, const char* who) {
  Outputs out;
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) {
      if (!e.isTensor()) throw std::runtime_error(std::string(who) + " returned a tuple with a non-tensor element");
      out.push_back(e.toTensor());
    }
  } else if (v.isTensorList()) {
    for (const auto& t : v.toTensorVector()) out.push_back(t);
  } else {
    throw std::runtime_error(std::string(who) + " must return a Tensor or a tuple of Tensors, got " +
                             v.tagKind());
  }
  return out;
}

// ---------- the two callables ----------
struct Reference {
  bool is_script = false;
  torch::jit::Module module;
  std::optional<torch::jit::Module> oracle_module;  // float64 copy
  c10::OperatorHandle* op = nullptr;
  std::optional<c10::OperatorHandle> op_storage;

  Outputs call(const IVals& in) {
    if (is_script) return to_outputs(module.forward(in), "reference");
    IVals stack = in;
    op_storage->callBoxed(&stack);
    if (stack.size() == 1) return to_outputs(stack[0], "reference");
    Outputs o;
    for (auto& v : stack) o.push_back(v.toTensor());
    return o;
  }
  // The same computation in float64; nullopt when the reference cannot run in float64.
  std::optional<Outputs> call_oracle(const IVals& in64) {
    try {
      if (is_script) {
        if (!oracle_module) return std::nullopt;
        return to_outputs(oracle_module->forward(in64), "reference");
      }
      IVals stack = in64;
      op_storage->callBoxed(&stack);
      if (stack.size() == 1) return to_outputs(stack[0], "reference");
      Outputs o;
      for (auto& v : stack) o.push_back(v.toTensor());
      return o;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
};

void device_sync(const at::Device& dev) {
#ifdef KOPT_WITH_CUDA
  if (dev.is_cuda()) KOPT_CUDA_CALL(cudaDeviceSynchronize());
#else
  (void)dev;
#endif
}

// ---------- judging ----------
struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
  bool auto_mode = true;   // fixed, else fp64 oracle
  double oracle_factor = 8.0;
  double l2_floor = 1e-5;  // relative L2 error always accepted (fp32); 1e-2 for fp16/bf16
};

struct Verdict {
  bool ok = true;
  bool fatal = false;  // shape/count mismatch: no point in more trials
  std::string message;
  std::string rule;    // fixed | oracle | relative | exact-zero
  double max_abs = 0, avg_abs = 0, max_rel = 0, rel_l2 = 0;
  bool low_signal = false;
};

// The fp64 oracle, computed only when a rule needs it (it costs a float64 run of the reference).
struct LazyOracle {
  std::function<std::optional<Outputs>()> fn;
  bool done = false;
  std::optional<Outputs> value;
  const std::optional<Outputs>& get() {
    if (!done && fn) value = fn();
    done = true;
    return value;
  }
};

Verdict judge(const Outputs& cand, const Outputs& ref, LazyOracle& lazy, const Tolerance& tol) {
  Verdict v;
  v.rule = "fixed";
  if (cand.size() != ref.size()) {
    v.ok = false;
    v.fatal = true;
    v.message = "candidate returned " + std::to_string(cand.size()) + " outputs, the reference returns " +
                std::to_string(ref.size());
    return v;
  }
  double sum_abs = 0;
  double count = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!cand[i].defined()) {
      v.ok = false;
      v.fatal = true;
      v.message = "output " + std::to_string(i) + " is an undefined tensor";
      return v;
    }
    if (cand[i].sizes() != ref[i].sizes()) {
      std::ostringstream m;
      m << "output " << i << " has shape " << cand[i].sizes() << ", the reference's is " << ref[i].sizes();
      v.ok = false;
      v.fatal = true;
      v.message = m.str();
      return v;
    }
    at::Tensor c = cand[i].detach().to(at::kCPU).to(at::kDouble);
    at::Tensor r = ref[i].detach().to(at::kCPU).to(at::kDouble);
    if (c.numel() == 0) continue;
    at::Tensor both_nan = at::logical_and(at::isnan(c), at::isnan(r));
    at::Tensor diff = (c - r).abs().masked_fill(both_nan, 0.0);
    bool nan_mismatch = at::isnan(diff).any().item<bool>();
    diff = diff.nan_to_num(std::numeric_limits<double>::infinity());
    double max_abs = diff.max().item<double>();
    double max_ref = r.abs().nan_to_num(0.0, 0.0, 0.0).max().item<double>();
    sum_abs += diff.sum().item<double>();
    count += double(diff.numel());
    v.max_abs = std::max(v.max_abs, max_abs);
    double rel = max_ref > 0 ? max_abs / max_ref : (max_abs > 0 ? INFINITY : 0);
    v.max_rel = std::max(v.max_rel, rel);
    if (nan_mismatch) {
      v.ok = false;
      v.message = "output " + std::to_string(i) + " has NaN where the reference has a number";
      continue;
    }
    bool ok_i;
    if (max_ref < 10 * tol.atol) {
      // Low signal: the fixed tolerance would accept anything near zero (e.g. an all-zero output).
      v.low_signal = true;
      if (max_ref == 0) {
        ok_i = max_abs <= 1e-12;
        if (v.rule == "fixed") v.rule = "exact-zero";
      } else {
        ok_i = rel <= 4 * tol.rtol;
        v.rule = "relative";
      }
    } else {
      at::Tensor bound = r.abs().mul(tol.rtol).add(tol.atol);
      ok_i = at::le(diff, bound).all().item<bool>();
      if (!ok_i && tol.auto_mode && lazy.get() && i < lazy.get()->size()) {
        const auto& oracle = lazy.get();
        at::Tensor o = (*oracle)[i].detach().to(at::kCPU).to(at::kDouble);
        double e_cand = (c - o).abs().nan_to_num(INFINITY).max().item<double>();
        double e_ref = (r - o).abs().nan_to_num(INFINITY).max().item<double>();
        if (e_cand <= tol.oracle_factor * e_ref && std::isfinite(e_cand)) {
          ok_i = true;
          v.rule = "oracle";
        }
      }
    }
    if (!ok_i) {
      v.ok = false;
      std::ostringstream m;
      m << "output " << i << " differs from the reference (max_abs=" << max_abs << ")";
      v.message = m.str();
      continue;
    }
    // Relative L2 error beside the element-wise rule: many small contributions dropped under atol
    // add up here. Within l2_floor of the reference: accepted. Beyond it, against the fp64 oracle
    // (bound: a small factor of the reference's own error), else against rtol.
    double rn = r.norm().item<double>();
    if (rn > 0 && std::isfinite(rn)) {
      double e_c = (c - r).norm().item<double>() / rn;
      double bound = std::max(tol.l2_floor, tol.rtol);
      const char* against = "reference";
      if (e_c > tol.l2_floor && tol.auto_mode && lazy.get() && i < lazy.get()->size()) {
        at::Tensor o = (*lazy.get())[i].detach().to(at::kCPU).to(at::kDouble);
        double on = o.norm().item<double>();
        if (on > 0 && std::isfinite(on)) {
          e_c = (c - o).norm().item<double>() / on;
          bound = std::max(tol.oracle_factor * ((r - o).norm().item<double>() / on), tol.l2_floor);
          against = "fp64 oracle";
        }
      }
      v.rel_l2 = std::max(v.rel_l2, e_c);
      if (e_c > tol.l2_floor && !(e_c <= bound)) {
        v.ok = false;
        std::ostringstream m;
        m << "output " << i << " has relative L2 error " << e_c << " against the " << against << " (bound " << bound
          << "), although every element is within atol/rtol";
        v.message = m.str();
      }
    }
  }
  v.avg_abs = count > 0 ? sum_abs / count : 0;
  return v;
}

std::string shape_str(const at::Tensor& t) {
  std::ostringstream o;
  o << t.sizes();
  return o.str();
}

// After a failed correctness trial: would the candidate be right with its parameters in another
// order? Tried: the module's named_parameters() order (the usual mistake: the export passes
// declaration order) and each exchange of two parameters whose shapes differ (so the shapes can tell
// them apart). Costs calls only on a failure; "" when no order fixes it. The diagnosis is a hint in
// the error message, never a verdict: the candidate stays incorrect.
std::string diagnose_order(RemoteOp& cand, const InputSpec& spec, const IVals& params,
                           const std::vector<std::string>& named_order, const IVals& in, const Outputs& ref,
                           LazyOracle& oracle, const Tolerance& tol) {
  const size_t n = params.size();
  std::vector<std::vector<size_t>> perms;
  {
    std::vector<size_t> p;
    for (const auto& nm : named_order) {
      auto it = std::find(spec.params.begin(), spec.params.end(), nm);
      if (it != spec.params.end()) p.push_back(size_t(it - spec.params.begin()));
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
      cand.prepare(in);
      CallResult cr = cand.call();
      if (!judge(cr.outputs, ref, oracle, tol).ok) continue;
    } catch (const RunnerFailure&) {
      throw;
    } catch (const std::exception&) {
      continue;
    }
    cand.set_args(params);
    size_t k = 0;
    while (p[k] == k) ++k;
    const size_t n_in = spec.inputs.size();
    std::ostringstream m;
    m << "argument order: the candidate is right when its parameters are passed in the order ";
    for (size_t q = 0; q < n; ++q) m << (q ? ", " : "") << spec.params[p[q]];
    m << " - its argument " << (n_in + k + 1) << " (parameter " << (k + 1) << ") has the shape of `"
      << spec.params[p[k]] << "` " << shape_str(params[p[k]].toTensor()) << ", where the export passes `"
      << spec.params[k] << "` " << shape_str(params[k].toTensor())
      << "; the export passes the inputs, then the parameters in declaration order (";
    for (size_t q = 0; q < n; ++q) m << (q ? ", " : "") << spec.params[q];
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

bool shares_storage(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  if (a.storage().is_alias_of(b.storage())) return true;
  auto lo_a = reinterpret_cast<uintptr_t>(a.storage().data());
  auto hi_a = lo_a + a.storage().nbytes();
  auto lo_b = reinterpret_cast<uintptr_t>(b.storage().data());
  auto hi_b = lo_b + b.storage().nbytes();
  return lo_a < hi_b && lo_b < hi_a;
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

struct Timed {
  std::vector<double> samples;
  StopReason reason = StopReason::MaxTrials;
  KernelStats stats_sum;
  long stats_trials = 0;
};

uint64_t os_random_seed() {
  std::random_device rd;  // getrandom(2) on Linux
  uint64_t s = (uint64_t(rd()) << 32) ^ uint64_t(rd());
  return s & ((uint64_t(1) << 62) - 1);
}

size_t value_bytes(const IVals& v) { return region_bytes(v); }
size_t output_bytes(const Outputs& o) { return region_bytes(IVals(o.begin(), o.end())); }

// For each output, which inputs its storage overlaps (bit j of entry i).
std::vector<uint64_t> alias_bits(const Outputs& out, const IVals& in) {
  std::vector<uint64_t> bits(out.size(), 0);
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < in.size() && j < 8; ++j)
      if (in[j].isTensor() && shares_storage(out[i], in[j].toTensor())) bits[i] |= uint64_t(1) << j;
  return bits;
}

}  // namespace

int worker_main(const std::string& job_path) {
  json job;
  {
    std::ifstream f(job_path);
    job = json::parse(f);
  }
  const std::string result_path = job.at("result_path");
  const std::string stage_path = job.at("stage_path");
  Options opt = Options::from_json(job.at("options"));
  Result res;
  res.artifact = opt.artifact;
  res.compiled = true;
  json baseline_out;
  // Runners we start (and anything they start) become our children even when orphaned: we reap
  // them all before the result is written.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const auto t_start = std::chrono::steady_clock::now();
  const auto deadline = t_start + std::chrono::milliseconds(long(std::max(1.0, opt.timeout_s - 2.0) * 1000));

  // Where the time goes (native_metrics.stage_ms): each phase's wall time, by the phase's name.
  std::string phase = "setup";
  json stage_ms = json::object();
  auto t_phase = std::chrono::steady_clock::now();
  auto close_phase = [&] {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - t_phase).count();
    stage_ms[phase] = std::round((stage_ms.value(phase, 0.0) + ms) * 10) / 10;
    t_phase = now;
  };
  auto enter = [&](const char* next) {
    close_phase();
    phase = next;
  };
  auto finish = [&](int code) {
    close_phase();
    reap_all_children(2.0);
    res.extra_metrics["stage_ms"] = stage_ms;
    json out = res.to_json();
    if (!baseline_out.is_null()) out["baseline_record"] = baseline_out;
    write_json_atomic(result_path, out);
    // Done: every child is reaped and the result is on disk. Leaving without destructors saves
    // the ~0.2 s LibTorch and the reference spend freeing memory the exit frees anyway.
    std::fflush(nullptr);
    std::_Exit(code);
    return code;
  };

  json isolation;
  try {
    at::NoGradGuard no_grad;
    InputSpec spec = load_spec(opt.inputs);
    // A per-run secret seed unless the user pins one: a candidate cannot precompute or memoize
    // outputs for inputs it cannot predict.
    const bool seed_pinned = opt.seed.has_value();
    spec.seed = seed_pinned ? *opt.seed : os_random_seed();
    std::string precision = !opt.precision.empty() ? opt.precision : spec.precision.value_or("float32");

    // ---- device ----
    bool use_cuda = false;
#ifdef KOPT_WITH_CUDA
    const std::string no_device = cuda_no_device_reason();
    if (opt.device == "cuda" && !no_device.empty()) throw std::runtime_error("--device cuda: " + no_device);
#ifdef KOPT_TORCH_CUDA
    use_cuda = opt.device != "cpu" && no_device.empty();
#else
    // The toolkit-only build (KOPT_BENCH_CUDA=TOOLKIT): its LibTorch cannot hold CUDA tensors.
    if (opt.device == "cuda")
      throw std::runtime_error("--device cuda: this kopt-bench's LibTorch has no CUDA (a KOPT_BENCH_CUDA=TOOLKIT build)");
#endif
#else
    if (opt.device == "cuda") throw std::runtime_error("--device cuda but this kopt-bench was built without CUDA");
#endif
    at::Device dev = use_cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    res.backend = use_cuda ? "cuda" : "cpu";
    std::map<std::string, std::string> key = job.at("baseline_key").get<std::map<std::string, std::string>>();
    key["precision"] = precision;
    key["seed"] = seed_pinned ? std::to_string(spec.seed) : "per-run";
#ifdef KOPT_WITH_CUDA
    if (use_cuda) {
      cudaDeviceProp prop{};
      KOPT_CUDA_CALL(cudaGetDeviceProperties(&prop, 0));
      char uuid[64] = {0};
      for (int i = 0; i < 16; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)prop.uuid.bytes[i]);
      int drv = 0;
      KOPT_CUDA_CALL(cudaDriverGetVersion(&drv));
      key["device_name"] = prop.name;
      key["device_uuid"] = uuid;
      key["driver"] = std::to_string(drv);
    }
#endif
    if (!use_cuda) {
      key["device_name"] = cpu_model() + " x" + std::to_string(at::get_num_threads()) + " threads";
      key["device_uuid"] = "";
      key["driver"] = "";
    }
    key["backend"] = res.backend;

    Tolerance tol;
    bool low_prec = precision != "float32";
    tol.atol = opt.atol.value_or(low_prec ? 1e-2 : 1e-4);
    tol.rtol = opt.rtol.value_or(low_prec ? 1e-2 : 1e-4);
    tol.auto_mode = opt.tolerance == "auto" && !low_prec;
    tol.l2_floor = low_prec ? 1e-2 : 1e-5;

    // ---- start the candidate's process now: it loads LibTorch while we compute the reference ----
    enter("starting the candidate");
    const std::string exe = self_exe();
    const std::string runner_exe = exe.substr(0, exe.find_last_of('/') + 1) + "kopt-bench-runner";
    const std::string scratch = job.at("scratch").get<std::string>();
    // Regions sized generously before anything is drawn (a memfd is sparse: pages cost only when
    // written); values larger than this are reported as an error.
    size_t spec_bytes = 0;
    for (const auto& d : spec.inputs) {
      size_t n = 8;
      for (auto s : d.shape) n *= size_t(std::max<int64_t>(s, 1));
      spec_bytes += n;
    }
    size_t in_bytes = std::max(4 * spec_bytes, size_t(1) << 30);
    size_t out_bytes = std::max(16 * spec_bytes, size_t(1) << 30);
    auto spec_for = [&](const std::string& mode, const std::string& path, const std::string& arg3) {
      RunnerSpec s;
      s.exe = runner_exe;
      s.mode = mode;
      s.path = path;
      s.arg3 = arg3;
      s.cuda = use_cuda;
      s.in_bytes = in_bytes;
      s.out_bytes = out_bytes;
      s.hide = job.value("hide", std::vector<std::string>{});
      s.scratch = scratch;
      s.allow_bwrap = opt.namespaces;
      s.deadline = deadline;
      return s;
    };
    const json& cj = job.at("cand");
    const std::string cns = cj.at("ns");
    // Only when the reference needs no timing now: a candidate's load-time threads must never run
    // beside the reference's timed calls.
    bool ref_timing_needed = !opt.no_timing;
    if (ref_timing_needed && job.contains("baseline") && !job["baseline"].is_null() && !opt.refresh_baseline) {
      BaselineRecord stored = BaselineRecord::from_json(job["baseline"]);
      auto k = key;
      k["timer"] = stored.key.count("timer") ? stored.key.at("timer") : "";
      ref_timing_needed = !invalidation_reasons(stored, k).empty();
    }
    std::unique_ptr<RemoteOp> cand_ptr;
    if (!ref_timing_needed) cand_ptr = std::make_unique<RemoteOp>(spec_for("candidate", cj.at("so"), cns));

    // ---- the reference, in this process (which never loads candidate code) ----
    enter("loading the reference");
    Reference ref;
    const json& rj = job.at("ref");
    if (rj.at("kind") == "torchscript") {
      ref.is_script = true;
      ref.module = torch::jit::load(rj.at("path").get<std::string>(), dev);
      // The mode the export recorded (KernelBench runs modules as constructed: training mode).
      if (spec.mode.value_or("eval") == "train") ref.module.train();
      else ref.module.eval();
      if (tol.auto_mode) {
        try {
          torch::jit::Module m = ref.module.clone();
          m.to(at::kDouble);
          ref.oracle_module = m;
        } catch (const std::exception&) {
        }
      }
      if (precision != "float32") ref.module.to(scalar_type_of(precision));
    } else {
      std::string so = rj.at("so");
      void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) throw std::runtime_error(std::string("cannot load the reference library: ") + dlerror());
      std::string name = rj.at("ns").get<std::string>() + "::forward";
      auto op = c10::Dispatcher::singleton().findSchema({name, ""});
      if (!op) throw std::runtime_error("the reference does not register forward (use KOPT_LIBRARY)");
      ref.op_storage = *op;
    }
    IVals params;
    std::vector<std::string> named_order;  // the module's named_parameters() order, for the order diagnosis
    if (!spec.params.empty()) {
      if (!ref.is_script) throw std::runtime_error("spec.params names reference parameters, but the reference is not a TorchScript module");
      std::map<std::string, at::Tensor> named;
      for (const auto& p : ref.module.named_parameters()) {
        named[p.name] = p.value;
        named_order.push_back(p.name);
      }
      for (const auto& p : ref.module.named_buffers()) named.emplace(p.name, p.value);
      for (const auto& n : spec.params) {
        auto it = named.find(n);
        if (it == named.end()) throw std::runtime_error("spec.params: the reference has no parameter '" + n + "'");
        params.emplace_back(it->second.detach());
      }
    }

    // The reference's timing runner; a TorchScript reference runs in the spec's mode (training mode
    // for BatchNorm problems as KernelBench defines them), as in the judge.
    auto ref_runner_spec = [&]() {
      return rj.at("kind") == "torchscript"
                 ? spec_for("ref-script", rj.at("path"), precision + (spec.mode.value_or("eval") == "train" ? "/train" : ""))
                 : spec_for("ref-op", rj.at("so"), rj.at("ns"));
    };
    // Drift check: with a frozen baseline in use, the reference is re-timed briefly, interleaved
    // with the candidate's timed calls (same load for both). Its runner starts now, beside the
    // candidate's, while the judge computes the reference outputs.
    std::unique_ptr<RemoteOp> fresh_ref;
    if (!ref_timing_needed && !opt.no_timing) fresh_ref = std::make_unique<RemoteOp>(ref_runner_spec());

    auto draw = [&](Stream s, uint64_t i) { return draw_inputs(spec, derive_seed(spec.seed, s, i), precision, dev); };

    enter("running the reference");
    auto oracle_for = [&](const IVals& in) {
      LazyOracle l;
      if (tol.auto_mode) l.fn = [&ref, in]() { return ref.call_oracle(to_double(in)); };
      return l;
    };
    // The reference's own aliasing: an output that is a view of an input is fine when the
    // reference's output is a view of the same input.
    std::vector<uint64_t> ref_alias;
    auto ref_call = [&](const IVals& in) {
      IVals c = clone_inputs(in);
      Outputs o = ref.call(c);
      auto bits = alias_bits(o, c);
      if (ref_alias.size() < bits.size()) ref_alias.resize(bits.size(), 0);
      for (size_t i = 0; i < bits.size(); ++i) ref_alias[i] |= bits[i];
      return o;
    };
    const int n_correct = opt.num_correct_trials;
    std::vector<IVals> corr_in;
    std::vector<Outputs> corr_ref;
    std::vector<LazyOracle> corr_oracle;
    for (int t = 0; t < n_correct; ++t) {
      corr_in.push_back(draw(Stream::Correctness, t));
      corr_ref.push_back(ref_call(corr_in.back()));
      corr_oracle.push_back(oracle_for(corr_in.back()));
    }
    // Sentinel values: a full re-draw, then twice a single element per tensor changed (at two
    // different places): a cache keyed on a sample of the values misses a one-element change
    // unless it samples that very element, twice in a row.
    IVals sent_full = draw(Stream::Sentinel, 0);
    auto one_changed = [&](const IVals& base_vals, uint64_t k) {
      IVals out = clone_inputs(base_vals);
      IVals other = draw(Stream::Sentinel, 1 + k);
      auto gen = at::make_generator<at::CPUGeneratorImpl>(derive_seed(spec.seed, Stream::Sentinel, 10 + k));
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
    IVals sent_sparse = one_changed(sent_full, 0);
    IVals sent_sparse2 = one_changed(sent_sparse, 1);
    Outputs sent_full_ref = ref_call(sent_full);
    Outputs sent_sparse_ref = ref_call(sent_sparse);
    auto sent_full_oracle = oracle_for(sent_full);
    auto sent_sparse_oracle = oracle_for(sent_sparse);
    Outputs sent_sparse2_ref = ref_call(sent_sparse2);
    auto sent_sparse2_oracle = oracle_for(sent_sparse2);
    IVals reused_in = draw(Stream::Timing, 0);  // the one input set of --no-fresh-inputs
    Outputs reused_ref = ref_call(reused_in);
    auto reused_oracle = oracle_for(reused_in);


    // One timed loop, the same for both sides: inputs handed over outside the clock, the judge's
    // clock around each call (CPU), every candidate call's outputs compared with the reference.
    constexpr size_t kFreshSamples = 10, kFreshWarmup = 3;  // "briefly": the drift check's share
    std::vector<double> fresh_samples;
    auto time_loop = [&](RemoteOp& op, bool is_candidate, std::vector<std::string>* hacks, Timed* out,
                         RemoteOp* fresh = nullptr) {
      std::vector<std::pair<size_t, Outputs>> pending;
      size_t pending_bytes = 0;
      auto check_pending = [&]() {
        for (auto& [trial, outs] : pending) {
          IVals in = opt.fresh_inputs ? draw(Stream::Timing, trial + 1000000) : IVals{};
          LazyOracle lo = opt.fresh_inputs ? oracle_for(in) : LazyOracle{};
          Verdict v = opt.fresh_inputs ? judge(outs, ref_call(in), lo, tol) : judge(outs, reused_ref, reused_oracle, tol);
          if (!v.ok) {
            hacks->push_back("timed call " + std::to_string(trial) +
                             " returned a wrong result although the correctness trials passed (" + v.message + ")");
            pending.clear();
            return false;
          }
        }
        pending.clear();
        pending_bytes = 0;
        return true;
      };
      IVals warm = opt.fresh_inputs ? draw(Stream::Warmup, is_candidate ? 1 : 0) : reused_in;
      // Drift check: the reference re-timed in two short blocks around the candidate's timed loop
      // (before its warm-up, and right after its last call), so the fresh figure brackets the same
      // load window. Per-call alternation was measured to disturb the candidate's samples (the other
      // runner's intra-op threads keep spinning after each call). Never decides the verdict: a
      // reference runner that fails ends the check only.
      auto fresh_block = [&](size_t n) {
        if (!fresh) return;
        try {
          fresh->prepare(warm);
          for (size_t i = 0; i < kFreshWarmup; ++i) fresh->call();
          for (size_t k = 0; k < n; ++k) {
            if (opt.fresh_inputs) fresh->prepare(draw(Stream::Timing, 2000000 + fresh_samples.size()));
            else if (k == 0) fresh->prepare(reused_in);
            CallResult fr = fresh->call();
            fresh_samples.push_back(use_cuda ? fr.runner_ms : fr.judge_ms);
          }
        } catch (const std::exception& e) {
          res.notes.push_back(std::string("drift check skipped: the reference's re-timing failed (") + e.what() + ")");
          fresh = nullptr;
        }
      };
      fresh_block(kFreshSamples / 2);
      op.prepare(warm);
      for (int i = 0; i < opt.warmup; ++i) op.call();
      if (!opt.fresh_inputs) op.prepare(reused_in);
      auto t_loop = std::chrono::steady_clock::now();
      for (size_t trial = 0;; ++trial) {
        IVals in;
        if (opt.fresh_inputs) {
          in = draw(Stream::Timing, trial + (is_candidate ? 1000000 : 1));
          op.prepare(in);
        }
        CallResult cr = op.call();
        double ms = use_cuda ? cr.runner_ms : cr.judge_ms;
        if (use_cuda && cr.runner_ms > cr.judge_ms * 1.05 + 0.05 && is_candidate)
          hacks->push_back("the device time reported from the candidate process exceeds the judge's own clock");
        if (is_candidate) {
          // Every timed call is checked against the reference on the same inputs. The outputs are
          // kept and judged after the loop (inputs are re-drawn from the seed), so the judge does
          // no work while the candidate is timed; past a memory cap they are judged at once.
          pending.emplace_back(trial, std::move(cr.outputs));
          pending_bytes += output_bytes(pending.back().second);
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
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_loop).count();
        if (trial > 0 && should_stop(opt.stop, out->samples, el, &out->reason)) break;
      }
      fresh_block(kFreshSamples - kFreshSamples / 2);
      if (is_candidate) check_pending();
    };

    std::optional<double> ref_ms;
    std::optional<BaselineRecord> frozen;  // the frozen baseline in use, for the drift check
    std::string timer_name = use_cuda ? "cuda_event" : "host";
    if (!opt.no_timing) {
      enter("timing the reference");
      std::vector<std::string> reasons;
      bool reuse = false;
      std::string problem = job.value("baseline_problem", "");
      if (job.contains("baseline") && !job["baseline"].is_null() && !opt.refresh_baseline) {
        BaselineRecord stored = BaselineRecord::from_json(job["baseline"]);
        key["timer"] = stored.key.count("timer") ? stored.key.at("timer") : "";
        reasons = invalidation_reasons(stored, key);
        if (reasons.empty()) {
          reuse = true;
          ref_ms = stored.ref_runtime_ms;
          frozen = stored;
          timer_name = key["timer"];
          res.ref_source = "frozen baseline (measured " + stored.measured_at + ")";
        }
      }
      if (!reuse) {
        RemoteOp rop(ref_runner_spec());
        timer_name = rop.loaded().value("timer", timer_name);
        if (rop.loaded().contains("timer_note")) res.timer_note = rop.loaded()["timer_note"];
        key["timer"] = timer_name;
        Timed rt;
        std::vector<std::string> none;
        time_loop(rop, false, &none, &rt);
        rop.end();
        Summary s = summarize(rt.samples);
        ref_ms = s.median;
        BaselineRecord rec;
        rec.key = key;
        rec.ref_runtime_ms = s.median;
        rec.measured_at = utc_now_iso();
        rec.trials = s.n;
        rec.rel_iqr = s.rel_iqr;
        baseline_out = rec.to_json();
        write_json_atomic(stage_path, json{{"baseline_record", baseline_out}});
        std::string why;
        if (opt.refresh_baseline) why = "refresh requested";
        else if (!problem.empty()) why = problem;
        else if (reasons.empty()) why = "no frozen baseline yet";
        else {
          why = "baseline key changed: ";
          for (size_t i = 0; i < reasons.size(); ++i) why += (i ? "; " : "") + reasons[i];
        }
        res.ref_source = "measured now (" + why + ")";
        if (!reasons.empty() || !problem.empty()) res.notes.push_back("baseline re-measured: " + why);
      }
      res.ref_runtime_ms = ref_ms;
    }
    res.timer = timer_name;

    // ---- the candidate, in its own confined process ----
    enter("loading the candidate");
    if (!cand_ptr) cand_ptr = std::make_unique<RemoteOp>(spec_for("candidate", cj.at("so"), cns));
    RemoteOp& cand = *cand_ptr;
    cand.ensure_loaded();
    isolation = cand.isolation();
    std::vector<std::string> hacks;
    for (const auto& n : cand.loaded().value("load_changes", std::vector<std::string>{}))
      hacks.push_back("loading the candidate changed the dispatch table of " + n);
    if (!params.empty()) cand.set_args(params);

    // ---- correctness ----
    enter("correctness trials");
    Deviation dev_sum;
    dev_sum.trials = size_t(n_correct);
    bool correct = true;
    bool used_oracle = false, used_relative = false;
    std::string first_failure;
    int failed_at = -1;
    double sum_avg = 0, max_l2 = 0;
    for (int t = 0; t < n_correct; ++t) {
      cand.prepare(corr_in[t]);
      CallResult cr;
      try {
        cr = cand.call();
      } catch (const RunnerFailure&) {
        throw;
      } catch (const std::exception& e) {
        // The candidate threw (an ATen error, typically): say so, with the order diagnosis when the
        // parameters' shapes reveal a wrong order.
        std::string d = params.size() >= 2 ? diagnose_order(cand, spec, params, named_order, corr_in[t], corr_ref[t],
                                                            corr_oracle[t], tol)
                                           : "";
        throw std::runtime_error(clean_error(e) + (d.empty() ? "" : "; " + d));
      }
      ReplyMsg ins = cand.inspect();
      Verdict v = judge(cr.outputs, corr_ref[t], corr_oracle[t], tol);
      if (ins.flags & 1) {
        size_t i = 0;
        while (i < 24 && !(ins.flags & (1u << (8 + i)))) ++i;
        hacks.push_back(i < 24 && i < spec.inputs.size()
                            ? "the candidate modified input " + std::to_string(i) + " ('" + spec.inputs[i].name + "') in place"
                            : std::string("the candidate modified its inputs in place"));
      }
      if (ins.flags & 2) hacks.push_back("an output returns the buffer of an earlier call's output (stale output reuse)");
      for (size_t oi = 0; oi < cr.outputs.size() && oi < 8; ++oi)
        for (size_t j = 0; j < corr_in[t].size() && j < 8; ++j) {
          bool cand_alias = (ins.alias_mask >> (oi * 8 + j)) & 1;
          bool ref_alias_j = oi < ref_alias.size() && ((ref_alias[oi] >> j) & 1);
          if (cand_alias && !ref_alias_j)
            hacks.push_back("output " + std::to_string(oi) + " aliases input " + std::to_string(j) + " ('" +
                            spec.inputs[j].name + "') where the reference's output does not");
        }
      if (v.fatal) {  // a wrong shape or output count: the ERROR line says it; no deviation to print
        correct = false;
        if (first_failure.empty()) first_failure = "trial " + std::to_string(t) + ": " + v.message;
        if (failed_at < 0) failed_at = t;
        dev_sum.trials = size_t(t);
        break;
      }
      used_oracle |= v.rule == "oracle";
      used_relative |= v.rule == "relative";
      dev_sum.max_abs = std::max(dev_sum.max_abs, v.max_abs);
      dev_sum.max_rel = std::max(dev_sum.max_rel, v.max_rel);
      max_l2 = std::max(max_l2, v.rel_l2);
      sum_avg += v.avg_abs;
      if (!v.ok) {
        correct = false;
        ++dev_sum.failed_trials;
        if (first_failure.empty()) first_failure = "trial " + std::to_string(t) + ": " + v.message;
        if (failed_at < 0) failed_at = t;
      }
    }
    dev_sum.avg_abs = dev_sum.trials ? sum_avg / double(dev_sum.trials) : 0;
    res.extra_metrics["rel_l2_error"] = max_l2;
    {
      std::ostringstream tr;
      char b[64];
      std::snprintf(b, sizeof b, "atol=%.0e rtol=%.0e", tol.atol, tol.rtol);
      tr << (tol.auto_mode ? "auto: fixed " : "fixed ") << b;
      if (used_oracle) tr << "; fp64 oracle accepted re-association (<= " << int(tol.oracle_factor) << "x the reference's own error)";
      if (used_relative) tr << "; low signal (max|ref| < 10*atol): judged on relative error";
      tr << "; relative L2 <= max(" << int(tol.oracle_factor) << "x the reference's, " << tol.l2_floor << ")";
      res.tolerance_rule = tr.str();
    }
    if (!correct) {
      res.correct = false;
      if (dev_sum.failed_trials > 0) res.deviation = dev_sum;
      res.error = "incorrect: " + first_failure;
      if (params.size() >= 2 && failed_at >= 0) {
        std::string d = diagnose_order(cand, spec, params, named_order, corr_in[size_t(failed_at)],
                                       corr_ref[size_t(failed_at)], corr_oracle[size_t(failed_at)], tol);
        if (!d.empty()) res.error += "; " + d;
      }
    }

    // ---- timing (every timed call checked), sentinel ----
    if (correct && !opt.no_timing) {
      enter("timing the candidate");
      Timed ct;
      time_loop(cand, true, &hacks, &ct, frozen && fresh_ref ? fresh_ref.get() : nullptr);
      fresh_ref.reset();  // its runner ends here
      Summary s = summarize(ct.samples);
      res.runtime_ms = s.median;
      res.trials = s.n;
      res.rel_iqr = s.rel_iqr;
      res.rel_ci = s.rel_ci_half;
      res.stop_reason = to_string(ct.reason);
      res.noisy = ct.reason != StopReason::Converged;
      res.extra_metrics["cv"] = std::round(s.cv * 1e5) / 1e5;
      if (res.noisy) {
        char b[400];
        std::snprintf(b, sizeof b,
                      "timing NOISY: stopped at %s after %zu trials; the times vary by CV %.1f%% (median CI "
                      "+-%.2f%%, target +-%.2f%%). A busy machine or a very short op: rerun on a quieter machine, "
                      "raise --max-trials/--max-time, or loosen --target-ci",
                      res.stop_reason.c_str(), s.n, 100 * s.cv, 100 * s.rel_ci_half, 100 * opt.stop.target_rel_ci);
        res.advisory.push_back(b);
      }
      if (frozen && fresh_samples.size() >= 3 && s.median > 0) {
        // The frozen figure carries whatever load there was when it was measured. Drift: the fresh
        // figure differs from it by more than the measured noise (the larger relative IQR of the
        // two measurements, at least 5 %, at most 50 %: ten fresh samples on a busy machine can have an
        // IQR wider than any real drift, and a frozen figure 2x off is worth saying however noisy).
        Summary f = summarize(fresh_samples);
        double rel = f.median / frozen->ref_runtime_ms - 1.0;
        double band = std::min(std::max({f.rel_iqr, frozen->rel_iqr, 0.05}), 0.5);
        bool drift = std::fabs(rel) > band;
        res.extra_metrics["ref_runtime_fresh_ms"] = std::round(f.median * 1e6) / 1e6;
        res.extra_metrics["speedup_fresh"] = std::round(f.median / s.median * 1e4) / 1e4;
        res.extra_metrics["baseline_drift"] = drift;
        res.extra_metrics["baseline_drift_rel"] = std::round(rel * 1e4) / 1e4;
        if (drift) {
          char b[400];
          std::snprintf(b, sizeof b,
                        "baseline drift: the frozen reference time %.4f ms (measured %s) differs from the reference "
                        "re-timed now, %.4f ms (%+.0f%%, noise +-%.0f%%); speedup %.2fx against the frozen figure, "
                        "%.2fx against the fresh one. On a quiet machine: --refresh-baseline",
                        frozen->ref_runtime_ms, frozen->measured_at.c_str(), f.median, 100 * rel, 100 * band,
                        frozen->ref_runtime_ms / s.median, f.median / s.median);
          res.advisory.push_back(b);
        }
      }
      // GPU timing semantics (timer_cuda.cpp): work on any stream is inside the timed region; CUPTI
      // figures are information only, a call that does no work is caught by the output checks.
      if (ct.stats_sum.persisting_l2)
        hacks.push_back("the candidate set an L2 persistence window (keeps its data in L2 across the flush)");
      if (ct.stats_sum.off_stream_ms > 0) {
        res.extra_metrics["max_off_stream_ms"] = ct.stats_sum.off_stream_ms;
        res.advisory.push_back("work continued on other streams after the current stream finished (counted in the time)");
      }
      if (ct.stats_sum.valid && ct.stats_trials > 0) {
        res.kernel_ms = ct.stats_sum.kernel_ms / double(ct.stats_trials);
        res.launches = ct.stats_sum.launches / ct.stats_trials;
        res.extra_metrics["memcpys_per_call"] = double(ct.stats_sum.memcpys) / double(ct.stats_trials);
        res.extra_metrics["streams"] = ct.stats_sum.streams;
        if (ct.stats_sum.launches == 0)
          res.advisory.push_back("CUPTI saw no kernel launched during the timed calls (outputs were still checked)");
      }

      enter("mutation sentinel");
      bool sentinel_ok = true;
      std::string sentinel_msg;
      // Each step rewrites the inputs in place and requires the output to follow; the first miss ends it.
      struct Step {
        const IVals& in;
        const Outputs& ref;
        decltype(sent_full_oracle)& oracle;  // lazy: fills itself on first use
        const char* what;
      };
      Step steps[] = {
          {sent_full, sent_full_ref, sent_full_oracle, "inputs rewritten in place"},
          {sent_sparse, sent_sparse_ref, sent_sparse_oracle, "one input element changed in place"},
          {sent_sparse2, sent_sparse2_ref, sent_sparse2_oracle, "one input element changed in place"},
      };
      for (Step& st : steps) {
        cand.mutate(st.in);
        CallResult o = cand.call();
        Verdict v = judge(o.outputs, st.ref, st.oracle, tol);
        if (!v.ok) {
          sentinel_ok = false;
          sentinel_msg = std::string(st.what) + ", output did not follow (" + v.message + ")";
          break;
        }
      }
      res.sentinel = sentinel_ok ? "PASS" : "FAIL";
      if (!sentinel_ok) hacks.push_back("mutation sentinel: " + sentinel_msg);
    }

    // ---- process-wide state of the candidate's process after its last call ----
    enter("checking process state");
    {
      json fin = cand.end();
      for (const auto& n : fin.value("dispatch_changes", std::vector<std::string>{})) {
        bool dup = false;
        for (const auto& x : hacks) dup |= x.find(n) != std::string::npos;
        if (!dup) hacks.push_back("the dispatch table of " + n + " changed while the candidate ran");
      }
      for (const auto& c : fin.value("state_changes", std::vector<std::string>{}))
        hacks.push_back("process-wide torch state changed: " + c);
      for (const auto& n : fin.value("foreign_ops", std::vector<std::string>{}))
        res.advisory.push_back("the candidate registered an op outside its namespace: " + n);
    }
    if (cand.output_bytes() > 0) res.extra_metrics["candidate_output_bytes"] = cand.output_bytes();
    res.extra_metrics["isolation"] = isolation;
    if (!isolation.is_null() && isolation.value("level", "") != "namespaces")
      res.advisory.push_back("weaker isolation: the candidate ran without namespaces (" +
                             isolation.value("weaker_because", std::string("unknown")) + ")");

    std::vector<std::string> uniq;
    for (const auto& h : hacks)
      if (std::find(uniq.begin(), uniq.end(), h) == uniq.end()) uniq.push_back(h);
    res.hacks = uniq;
    res.correct = correct && res.hacks.empty();
    if (correct && !res.hacks.empty()) res.error = "reward hack: " + res.hacks.front();
    if (res.correct && res.runtime_ms && res.ref_runtime_ms && *res.runtime_ms > 0 &&
        *res.ref_runtime_ms / *res.runtime_ms > 10)
      res.advisory.push_back("implausible speedup " + fixed4(*res.ref_runtime_ms / *res.runtime_ms) +
                             "x: check the candidate computes the whole op");
    return finish(res.correct ? 0 : 1);
  } catch (const SpecError& e) {
    res.compiled = true;
    res.correct = false;
    res.evaluator_failed = true;
    res.error = std::string("bad input spec: ") + e.what();
    return finish(2);
  } catch (const RunnerFailure& e) {
    res.correct = false;
    if (!isolation.is_null()) res.extra_metrics["isolation"] = isolation;
    if (e.timeout) {
      res.extra_metrics["timeout"] = true;
      res.error = std::string("timeout while ") + phase + ": " + e.what();
      return finish(1);
    }
    bool ref_side = phase == "timing the reference";
    res.evaluator_failed = ref_side;
    res.error = (ref_side ? "while " : "runtime error while ") + phase + ": " + e.what();
    return finish(ref_side ? 2 : 1);
  } catch (const std::exception& e) {
    res.correct = false;
    if (!isolation.is_null()) res.extra_metrics["isolation"] = isolation;
    std::string what = clean_error(e);
    if (phase == "loading the reference" || phase == "running the reference" || phase == "timing the reference" ||
        phase == "setup") {
      res.evaluator_failed = true;
      res.error = "while " + phase + ": " + what;
      return finish(2);
    }
    res.error = "runtime error while " + phase + ": " + what;
    return finish(1);
  }
}

}  // namespace kopt::bench
