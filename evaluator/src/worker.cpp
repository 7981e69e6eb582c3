#include "worker.hpp"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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
#include "report.hpp"
#include "spec.hpp"
#include "stats.hpp"
#include "timer.hpp"

#ifdef KOPT_WITH_CUDA
#include <cuda_runtime.h>
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

struct Candidate {
  c10::OperatorHandle op;
  IVals params;
  Outputs call(const IVals& in) {
    IVals stack = in;
    stack.insert(stack.end(), params.begin(), params.end());
    op.callBoxed(&stack);
    if (stack.size() == 1) return to_outputs(stack[0], "candidate");
    Outputs o;
    for (auto& v : stack) {
      if (!v.isTensor()) throw std::runtime_error("candidate returned a non-tensor value");
      o.push_back(v.toTensor());
    }
    return o;
  }
};

void device_sync(const at::Device& dev) {
#ifdef KOPT_WITH_CUDA
  if (dev.is_cuda()) cudaDeviceSynchronize();
#else
  (void)dev;
#endif
}

// ---------- judging ----------
struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
  bool auto_mode = true;   // fixed, else fp64 oracle
  double oracle_factor = 8.0;
};

struct Verdict {
  bool ok = true;
  bool fatal = false;  // shape/count mismatch: no point in more trials
  std::string message;
  std::string rule;    // fixed | oracle | relative | exact-zero
  double max_abs = 0, avg_abs = 0, max_rel = 0;
  bool low_signal = false;
};

Verdict judge(const Outputs& cand, const Outputs& ref, const std::optional<Outputs>& oracle, const Tolerance& tol) {
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
      if (!ok_i && tol.auto_mode && oracle && i < oracle->size()) {
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
    }
  }
  v.avg_abs = count > 0 ? sum_abs / count : 0;
  return v;
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

// Fill a block of each output's size with NaN and free it, so a candidate that returns
// at::empty(...) without writing it gets poison, not a leftover correct answer.
void poison_allocator(const Outputs& like) {
  for (const auto& t : like) {
    at::Tensor p = at::empty(t.sizes(), t.options());
    if (p.is_floating_point()) p.fill_(std::numeric_limits<double>::quiet_NaN());
    else p.fill_(0x5A);
  }
}

struct Timed {
  std::vector<double> samples;
  StopReason reason = StopReason::MaxTrials;
  KernelStats stats_sum;
  long stats_trials = 0;
};

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

  auto finish = [&](int code) {
    json out = res.to_json();
    if (!baseline_out.is_null()) out["baseline_record"] = baseline_out;
    write_json_atomic(result_path, out);
    return code;
  };

  std::string phase = "setup";
  try {
    at::NoGradGuard no_grad;
    InputSpec spec = load_spec(opt.inputs);
    if (opt.seed) spec.seed = *opt.seed;
    std::string precision = !opt.precision.empty() ? opt.precision : spec.precision.value_or("float32");

    // ---- device and timer ----
    bool use_cuda = false;
#ifdef KOPT_WITH_CUDA
    int ndev = 0;
    bool cuda_ok = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
    if (opt.device == "cuda" && !cuda_ok) throw std::runtime_error("--device cuda but no CUDA device is usable");
    use_cuda = opt.device != "cpu" && cuda_ok;
#else
    if (opt.device == "cuda") throw std::runtime_error("--device cuda but this kopt-bench was built without CUDA");
#endif
    at::Device dev = use_cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    res.backend = use_cuda ? "cuda" : "cpu";
    std::unique_ptr<Timer> timer;
    std::map<std::string, std::string> key = job.at("baseline_key").get<std::map<std::string, std::string>>();
    key["precision"] = precision;
    key["seed"] = std::to_string(spec.seed);
#ifdef KOPT_WITH_CUDA
    if (use_cuda) {
      std::string note;
      timer = make_cuda_timer(0, &note);
      res.timer_note = note;
      cudaDeviceProp prop{};
      cudaGetDeviceProperties(&prop, 0);
      char uuid[64] = {0};
      for (int i = 0; i < 16; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)prop.uuid.bytes[i]);
      int drv = 0;
      cudaDriverGetVersion(&drv);
      key["device_name"] = prop.name;
      key["device_uuid"] = uuid;
      key["driver"] = std::to_string(drv);
    }
#endif
    if (!timer) {
      timer = make_host_timer();
      key["device_name"] = cpu_model() + " x" + std::to_string(at::get_num_threads()) + " threads";
      key["device_uuid"] = "";
      key["driver"] = "";
    }
    res.timer = timer->name();
    key["backend"] = res.backend;
    key["timer"] = res.timer;

    Tolerance tol;
    bool low_prec = precision != "float32";
    tol.atol = opt.atol.value_or(low_prec ? 1e-2 : 1e-4);
    tol.rtol = opt.rtol.value_or(low_prec ? 1e-2 : 1e-4);
    tol.auto_mode = opt.tolerance == "auto" && !low_prec;

    // ---- reference ----
    phase = "loading the reference";
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
    if (!spec.params.empty()) {
      if (!ref.is_script) throw std::runtime_error("spec.params names reference parameters, but the reference is not a TorchScript module");
      std::map<std::string, at::Tensor> named;
      for (const auto& p : ref.module.named_parameters()) named[p.name] = p.value;
      for (const auto& p : ref.module.named_buffers()) named.emplace(p.name, p.value);
      for (const auto& n : spec.params) {
        auto it = named.find(n);
        if (it == named.end()) throw std::runtime_error("spec.params: the reference has no parameter '" + n + "'");
        params.emplace_back(it->second.detach());
      }
    }

    // ---- all reference outputs, before the candidate exists in this process ----
    phase = "running the reference";
    auto draw = [&](Stream s, uint64_t i) { return draw_inputs(spec, derive_seed(spec.seed, s, i), precision, dev); };
    const int n_correct = opt.num_correct_trials;
    const int n_check = opt.no_timing ? 0 : std::max(0, opt.checked_timed_calls);
    std::vector<IVals> corr_in, check_in;
    std::vector<Outputs> corr_ref, check_ref;
    std::vector<std::optional<Outputs>> corr_oracle, check_oracle;
    auto oracle_for = [&](const IVals& in) -> std::optional<Outputs> {
      if (!tol.auto_mode) return std::nullopt;
      return ref.call_oracle(to_double(in));
    };
    for (int t = 0; t < n_correct; ++t) {
      corr_in.push_back(draw(Stream::Correctness, t));
      corr_ref.push_back(ref.call(clone_inputs(corr_in.back())));
      corr_oracle.push_back(oracle_for(corr_in.back()));
    }
    int n_check_sets = opt.fresh_inputs ? n_check : (n_check > 0 ? 1 : 0);
    for (int k = 0; k < n_check_sets; ++k) {
      check_in.push_back(draw(Stream::Check, k));
      check_ref.push_back(ref.call(clone_inputs(check_in.back())));
      check_oracle.push_back(oracle_for(check_in.back()));
    }
    // Sentinel values: a full re-draw, then the same with a sparse set of elements changed.
    IVals sent_full = draw(Stream::Sentinel, 0);
    IVals sent_sparse = clone_inputs(sent_full);
    {
      IVals other = draw(Stream::Sentinel, 1);
      auto gen = at::make_generator<at::CPUGeneratorImpl>(derive_seed(spec.seed, Stream::Sentinel, 2));
      for (size_t i = 0; i < sent_sparse.size(); ++i) {
        if (!sent_sparse[i].isTensor()) continue;
        at::Tensor base = sent_sparse[i].toTensor();
        if (base.numel() == 0) continue;
        at::Tensor mask = at::empty(base.sizes(), at::kFloat).uniform_(0, 1, gen).lt(0.01);
        int64_t pick = at::randint(base.numel(), {1}, gen, at::kLong).item<int64_t>();
        mask.view(-1)[pick] = true;
        at::Tensor mixed = at::where(mask.to(base.device()), other[i].toTensor(), base);
        sent_sparse[i] = mixed.contiguous();
      }
    }
    Outputs sent_full_ref = ref.call(clone_inputs(sent_full));
    Outputs sent_sparse_ref = ref.call(clone_inputs(sent_sparse));
    auto sent_full_oracle = oracle_for(sent_full);
    auto sent_sparse_oracle = oracle_for(sent_sparse);

    // ---- time the reference (or take the frozen baseline) ----
    auto time_loop = [&](auto&& fn, bool is_candidate, std::vector<std::string>* hacks, IVals* last_inputs) {
      Timed out;
      IVals warm = opt.fresh_inputs ? draw(Stream::Warmup, is_candidate ? 1 : 0) : IVals{};
      // Reused regime: one input set for every timed call; it is the check set, so the checked
      // timed calls compare against outputs computed before the candidate was loaded.
      IVals reused = opt.fresh_inputs ? IVals{} : (check_in.empty() ? draw(Stream::Timing, 0) : clone_inputs(check_in[0]));
      for (int i = 0; i < opt.warmup; ++i) fn(opt.fresh_inputs ? warm : reused);
      device_sync(dev);
      // Which timed calls also get checked: chosen from a seed the candidate never sees.
      std::map<size_t, int> checked;
      if (is_candidate && n_check > 0) {
        std::mt19937_64 rng(derive_seed(spec.seed, Stream::Select, 0));
        size_t hi = std::max<size_t>(opt.stop.min_trials, 2);
        std::vector<size_t> idx;
        for (size_t i = 1; i <= hi; ++i) idx.push_back(i);
        std::shuffle(idx.begin(), idx.end(), rng);
        for (int k = 0; k < n_check && size_t(k) < idx.size(); ++k) checked[idx[k]] = opt.fresh_inputs ? k : 0;
      }
      IVals prev, prev2;  // kept alive so the next inputs land at other addresses
      auto t_loop = std::chrono::steady_clock::now();
      for (size_t trial = 0;; ++trial) {
        IVals in;
        auto chk = checked.find(trial);
        if (!opt.fresh_inputs) in = reused;
        else if (chk != checked.end()) in = clone_inputs(check_in[chk->second]);
        else in = draw(Stream::Timing, trial + (is_candidate ? 1000000 : 0));
        if (is_candidate) poison_allocator(corr_ref.empty() ? Outputs{} : corr_ref[0]);
        timer->before_trial();
        timer->start();
        Outputs o = fn(in);
        double ms = timer->stop_ms();
        if (chk != checked.end()) {
          Verdict v = judge(o, check_ref[chk->second], check_oracle[chk->second], tol);
          if (!v.ok)
            hacks->push_back("timed call " + std::to_string(trial) +
                             " returned a wrong result although the correctness trials passed (" + v.message + ")");
        }
        auto ks = timer->last_stats();
        if (ks.valid) {
          out.stats_sum.kernel_ms += ks.kernel_ms;
          out.stats_sum.launches += ks.launches;
          out.stats_sum.memcpys += ks.memcpys;
          out.stats_sum.streams = std::max(out.stats_sum.streams, ks.streams);
          out.stats_sum.foreign_stream |= ks.foreign_stream;
          out.stats_sum.persisting_l2 |= ks.persisting_l2;
          out.stats_sum.valid = true;
          ++out.stats_trials;
        }
        if (trial > 0) out.samples.push_back(ms);  // the first timed trial is dropped
        prev2 = std::move(prev);
        prev = in;
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_loop).count();
        if (trial > 0 && should_stop(opt.stop, out.samples, el, &out.reason)) break;
      }
      if (last_inputs) *last_inputs = prev;
      return out;
    };

    std::optional<double> ref_ms;
    if (!opt.no_timing) {
      phase = "timing the reference";
      std::vector<std::string> reasons;
      bool reuse = false;
      std::string problem = job.value("baseline_problem", "");
      if (job.contains("baseline") && !job["baseline"].is_null() && !opt.refresh_baseline) {
        BaselineRecord stored = BaselineRecord::from_json(job["baseline"]);
        reasons = invalidation_reasons(stored, key);
        if (reasons.empty()) {
          reuse = true;
          ref_ms = stored.ref_runtime_ms;
          res.ref_source = "frozen baseline (measured " + stored.measured_at + ")";
        }
      }
      if (!reuse) {
        std::vector<std::string> none;
        Timed rt = time_loop([&](const IVals& in) { return ref.call(in); }, false, &none, nullptr);
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
        if (!reasons.empty()) res.notes.push_back("baseline re-measured: " + why);
      }
      res.ref_runtime_ms = ref_ms;
    }

    // ---- load the candidate ----
    phase = "snapshotting the dispatcher";
    DispatcherSnapshot before = snapshot_dispatcher();
    TorchState state_before = snapshot_torch_state();
    phase = "loading the candidate";
    const json& cj = job.at("cand");
    std::string cns = cj.at("ns");
    void* ch = dlopen(cj.at("so").get<std::string>().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!ch) throw std::runtime_error(std::string("cannot load the candidate library: ") + dlerror());
    auto cop = c10::Dispatcher::singleton().findSchema({cns + "::forward", ""});
    if (!cop)
      throw std::runtime_error("the candidate registers no op '" + cns +
                               "::forward' — define it with KOPT_LIBRARY(m) { m.def(\"forward(...) -> Tensor\"); }");
    Candidate cand{*cop, params};
    std::vector<std::string> hacks;
    std::vector<std::string> foreign_new;
    {
      DispatcherSnapshot after = snapshot_dispatcher();
      for (const auto& n : dispatcher_changes(before, after, cns + "::", &foreign_new))
        hacks.push_back("loading the candidate changed the dispatch table of " + n);
    }

    // ---- correctness ----
    phase = "correctness trials";
    Deviation dev_sum;
    dev_sum.trials = size_t(n_correct);
    bool correct = true;
    bool used_oracle = false, used_relative = false;
    std::string first_failure;
    std::vector<Outputs> kept_outputs;
    std::vector<IVals> kept_inputs;  // alive until the end: every trial sees inputs at new addresses
    std::vector<std::vector<uint64_t>> kept_sums;
    double sum_avg = 0;
    for (int t = 0; t < n_correct; ++t) {
      IVals in = clone_inputs(corr_in[t]);
      uint64_t in_sum = checksum(in);
      poison_allocator(corr_ref[t]);
      Outputs o = cand.call(in);
      device_sync(dev);
      // Fingerprint the outputs first thing after the call: later writes show up below.
      std::vector<uint64_t> sums;
      for (const auto& x : o) sums.push_back(x.defined() ? checksum(x) : 0);
      Verdict v = judge(o, corr_ref[t], corr_oracle[t], tol);
      if (checksum(in) != in_sum) {
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i].isTensor() && checksum(in[i].toTensor()) != checksum(corr_in[t][i].toTensor())) {
            hacks.push_back("the candidate modified input " + std::to_string(i) + " ('" + spec.inputs[i].name + "') in place");
            break;
          }
      }
      for (size_t oi = 0; oi < o.size(); ++oi) {
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i].isTensor() && shares_storage(o[oi], in[i].toTensor()))
            hacks.push_back("output " + std::to_string(oi) + " aliases input " + std::to_string(i) + " ('" + spec.inputs[i].name + "')");
        for (size_t p = 0; p < params.size(); ++p)
          if (shares_storage(o[oi], params[p].toTensor()))
            hacks.push_back("output " + std::to_string(oi) + " aliases reference parameter " + spec.params[p]);
        bool reused = false;
        for (size_t k = 0; k < kept_outputs.size() && !reused; ++k)
          for (const auto& prev : kept_outputs[k])
            if (!reused && shares_storage(o[oi], prev)) {
              reused = true;
              hacks.push_back("output " + std::to_string(oi) + " returns the buffer of an earlier call's output (stale output reuse)");
            }
      }
      kept_outputs.push_back(o);
      kept_inputs.push_back(in);
      kept_sums.push_back(sums);
      used_oracle |= v.rule == "oracle";
      used_relative |= v.rule == "relative";
      dev_sum.max_abs = std::max(dev_sum.max_abs, v.max_abs);
      dev_sum.max_rel = std::max(dev_sum.max_rel, v.max_rel);
      sum_avg += v.avg_abs;
      if (!v.ok) {
        correct = false;
        ++dev_sum.failed_trials;
        if (first_failure.empty()) first_failure = "trial " + std::to_string(t) + ": " + v.message;
        if (v.fatal) {
          dev_sum.trials = size_t(t + 1);
          break;
        }
      }
    }
    dev_sum.avg_abs = dev_sum.trials ? sum_avg / double(dev_sum.trials) : 0;
    // Work finished after the call returned (e.g. a detached thread) shows up as changed bytes.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (size_t k = 0; k < kept_outputs.size(); ++k)
      for (size_t i = 0; i < kept_outputs[k].size(); ++i)
        if (kept_outputs[k][i].defined() && checksum(kept_outputs[k][i]) != kept_sums[k][i]) {
          hacks.push_back("output " + std::to_string(i) + " of trial " + std::to_string(k) +
                          " changed after the call returned (work deferred past the call)");
          k = kept_outputs.size();
          break;
        }
    kept_outputs.clear();
    kept_inputs.clear();
    {
      std::ostringstream tr;
      char b[64];
      std::snprintf(b, sizeof b, "atol=%.0e rtol=%.0e", tol.atol, tol.rtol);
      tr << (tol.auto_mode ? "auto: fixed " : "fixed ") << b;
      if (used_oracle) tr << "; fp64 oracle accepted re-association (<= " << int(tol.oracle_factor) << "x the reference's own error)";
      if (used_relative) tr << "; low signal (max|ref| < 10*atol): judged on relative error";
      res.tolerance_rule = tr.str();
    }
    if (!correct) {
      res.correct = false;
      res.deviation = dev_sum;
      res.error = "incorrect: " + first_failure;
    }

    // ---- timing, timed-call checks, sentinel ----
    if (correct && !opt.no_timing) {
      phase = "timing the candidate";
      IVals last;
      Timed ct = time_loop([&](const IVals& in) { return cand.call(in); }, true, &hacks, &last);
      Summary s = summarize(ct.samples);
      res.runtime_ms = s.median;
      res.trials = s.n;
      res.rel_iqr = s.rel_iqr;
      res.rel_ci = s.rel_ci_half;
      res.stop_reason = to_string(ct.reason);
      res.noisy = ct.reason != StopReason::Converged;
      if (ct.stats_sum.valid && ct.stats_trials > 0) {
        res.kernel_ms = ct.stats_sum.kernel_ms / double(ct.stats_trials);
        res.launches = ct.stats_sum.launches / ct.stats_trials;
        res.extra_metrics["memcpys_per_call"] = double(ct.stats_sum.memcpys) / double(ct.stats_trials);
        res.extra_metrics["streams"] = ct.stats_sum.streams;
        if (ct.stats_sum.foreign_stream)
          hacks.push_back("kernel time exceeds the timed window: work ran on a side stream the timer does not see");
        if (ct.stats_sum.persisting_l2)
          hacks.push_back("the candidate set an L2 persistence window (keeps its data in L2 across the flush)");
        if (ct.stats_sum.launches == 0)
          hacks.push_back("no kernel was launched during the timed calls (answer served from a host-side cache)");
      }

      phase = "mutation sentinel";
      bool sentinel_ok = true;
      std::string sentinel_msg;
      if (!last.empty()) {
        overwrite_bytes(last, sent_full);
        Outputs o1 = cand.call(last);
        device_sync(dev);
        Verdict v1 = judge(o1, sent_full_ref, sent_full_oracle, tol);
        if (!v1.ok) {
          sentinel_ok = false;
          sentinel_msg = "inputs rewritten in place, output did not follow (" + v1.message + ")";
        } else {
          overwrite_bytes(last, sent_sparse);
          Outputs o2 = cand.call(last);
          device_sync(dev);
          Verdict v2 = judge(o2, sent_sparse_ref, sent_sparse_oracle, tol);
          if (!v2.ok) {
            sentinel_ok = false;
            sentinel_msg = "a few input elements changed in place, output did not follow (" + v2.message + ")";
          }
        }
      }
      res.sentinel = sentinel_ok ? "PASS" : "FAIL";
      if (!sentinel_ok) hacks.push_back("mutation sentinel: " + sentinel_msg);
    }

    // ---- process-wide state after the last call ----
    phase = "checking process state";
    {
      DispatcherSnapshot after = snapshot_dispatcher();
      std::vector<std::string> late_new;
      for (const auto& n : dispatcher_changes(before, after, cns + "::", &late_new)) {
        std::string h = "the dispatch table of " + n + " changed";
        bool dup = false;
        for (const auto& x : hacks) dup |= x.find(n) != std::string::npos;
        if (!dup) hacks.push_back(h + " while the candidate ran");
      }
      for (const auto& n : late_new)
        if (std::find(foreign_new.begin(), foreign_new.end(), n) == foreign_new.end()) foreign_new.push_back(n);
      for (const auto& c : torch_state_changes(state_before, snapshot_torch_state()))
        hacks.push_back("process-wide torch state changed: " + c);
      for (const auto& n : foreign_new) res.advisory.push_back("the candidate registered an op outside its namespace: " + n);
    }

    // de-duplicate, keep order
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
  } catch (const std::exception& e) {
    res.correct = false;
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
