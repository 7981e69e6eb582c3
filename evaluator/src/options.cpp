#include "options.hpp"

#include <cstdlib>
#include <sstream>

#include "python_build.hpp"

namespace kopt::bench {

using nlohmann::json;

json Options::to_json() const {
  json j = {{"ref", ref}, {"solution", solution}, {"inputs", inputs}, {"artifact", artifact},
            {"precision", precision}, {"device", device}, {"timer", timer}, {"num_correct_trials", num_correct_trials},
            {"off_distribution_trials", off_distribution_trials},
            {"warmup", warmup}, {"min_trials", stop.min_trials}, {"max_trials", stop.max_trials},
            {"target_rel_ci", stop.target_rel_ci}, {"target_abs_ms", stop.target_abs_ms}, {"max_seconds", stop.max_seconds},
            {"budget_s", stop.budget_s},
            {"fresh_inputs", fresh_inputs}, {"tolerance", tolerance}, {"baseline", baseline},
            {"refresh_baseline", refresh_baseline}, {"cache_dir", cache_dir}, {"timeout_s", timeout_s}, {"no_timing", no_timing}, {"namespaces", namespaces},
            {"allow_weaker_isolation", allow_weaker_isolation}};
  if (atol) j["atol"] = *atol;
  if (rtol) j["rtol"] = *rtol;
  if (seed) j["seed"] = *seed;
  return j;
}

Options Options::from_json(const json& j) {
  Options o;
  o.ref = j.at("ref").get<std::string>();
  o.solution = j.at("solution").get<std::vector<std::string>>();
  o.inputs = j.at("inputs").get<std::string>();
  o.artifact = j.value("artifact", "");
  o.precision = j.value("precision", "");
  o.device = j.value("device", "auto");
  o.timer = j.value("timer", "auto");
  o.num_correct_trials = j.value("num_correct_trials", 10);
  o.off_distribution_trials = j.value("off_distribution_trials", 3);
  o.warmup = j.value("warmup", 10);
  o.stop.min_trials = j.value("min_trials", size_t(15));
  o.stop.max_trials = j.value("max_trials", size_t(100));
  o.stop.target_rel_ci = j.value("target_rel_ci", 0.005);
  o.stop.target_abs_ms = j.value("target_abs_ms", 0.002);
  o.stop.max_seconds = j.value("max_seconds", 30.0);
  o.stop.budget_s = j.value("budget_s", StopRule{}.budget_s);
  o.fresh_inputs = j.value("fresh_inputs", true);
  o.tolerance = j.value("tolerance", "auto");
  o.baseline = j.value("baseline", ".bench-baseline.json");
  o.refresh_baseline = j.value("refresh_baseline", false);
  o.cache_dir = j.value("cache_dir", "");
  o.timeout_s = j.value("timeout_s", 600.0);
  o.no_timing = j.value("no_timing", false);
  o.namespaces = j.value("namespaces", true);
  o.allow_weaker_isolation = j.value("allow_weaker_isolation", false);
  if (j.contains("atol")) o.atol = j["atol"].get<double>();
  if (j.contains("rtol")) o.rtol = j["rtol"].get<double>();
  if (j.contains("seed")) o.seed = j["seed"].get<uint64_t>();
  return o;
}

json Options::non_defaults() const {
  const Options d;
  json j = json::object();
  if (!precision.empty()) j["precision"] = precision;
  if (device != d.device) j["device"] = device;
  if (timer != d.timer) j["timer"] = timer;
  if (num_correct_trials != d.num_correct_trials) j["num_correct_trials"] = num_correct_trials;
  if (off_distribution_trials != d.off_distribution_trials) j["off_distribution_trials"] = off_distribution_trials;
  if (warmup != d.warmup) j["warmup"] = warmup;
  if (stop.min_trials != d.stop.min_trials) j["min_trials"] = stop.min_trials;
  if (stop.max_trials != d.stop.max_trials) j["max_trials"] = stop.max_trials;
  if (stop.target_rel_ci != d.stop.target_rel_ci) j["target_ci"] = stop.target_rel_ci;
  if (stop.target_abs_ms != d.stop.target_abs_ms) j["target_ci_abs_ms"] = stop.target_abs_ms;
  if (stop.max_seconds != d.stop.max_seconds) j["max_time_s"] = stop.max_seconds;
  if (stop.budget_s != d.stop.budget_s) j["time_budget_s"] = stop.budget_s;
  if (!fresh_inputs) j["fresh_inputs"] = false;
  if (tolerance != d.tolerance) j["tolerance"] = tolerance;
  if (atol) j["atol"] = *atol;
  if (rtol) j["rtol"] = *rtol;
  if (baseline != d.baseline) j["baseline"] = baseline;
  if (refresh_baseline) j["refresh_baseline"] = true;
  if (cache_dir_given) j["cache_dir"] = cache_dir;
  if (timeout_s != d.timeout_s) j["timeout_s"] = timeout_s;
  if (no_timing) j["no_timing"] = true;
  if (!namespaces) j["namespaces"] = false;
  if (allow_weaker_isolation) j["allow_weaker_isolation"] = true;
  if (seed) j["seed"] = *seed;
  return j;
}

std::string usage_text() {
  return R"(kopt-bench — compile, check and time one candidate op against a frozen reference

usage: kopt-bench --ref REF --solution SRC [--solution SRC ...] [--inputs SPEC.json] [options]

  --ref PATH                 reference: a KernelBench problem (.py: class Model, get_inputs,
                             get_init_inputs), a TorchScript module (.pt) or a C++/CUDA source
                             with KOPT_LIBRARY
  --solution PATH            candidate: a KernelBench-format Python solution (.py: class ModelNew,
                             torch ops, load_inline, Triton), or C++/CUDA sources (.cpp/.cu) with
                             KOPT_LIBRARY; repeat or comma-separate for several files (a .py first,
                             then the files it reads)
  --inputs SPEC.json         input spec (shapes, dtypes, distributions, scalars, params, seed);
                             required unless --ref is a .py, whose get_inputs() it then wins over
  --artifact NAME            name reported in KERNEL_EVAL (default: the first solution path)
  --precision P              float32 | float16 | bfloat16 (default: the spec's, else float32)
  --device D                 auto | cpu | cuda (default auto)
  --timer T                  auto | device (default auto: the judge's clock on the CPU, the device timer
                             checked against the judge's floor on a GPU; device: the GPU's path on the
                             CPU too, with the runner's host clock standing in for the device timer)
  --num-correct-trials N     correctness trials with fresh inputs (default 10)
  --off-distribution-trials N  more trials off the declared distribution (scaled, shifted, wide, outliers;
                             default 3, 0 = none)
  --warmup N                 untimed warmup calls (default 10)
  --min-trials N             fewest timed samples before stopping (default 15)
  --max-trials N             most timed samples (default 100)
  --target-ci F              stop when the median's 95% CI half-width / median <= F (default 0.005)
  --target-ci-abs MS         ... or when that half-width is <= MS milliseconds (default 0.002; 0: off)
  --max-time S               wall-time cap of one timed loop in seconds (default 30)
  --time-budget S            a fast op's budget: an op whose max-trials samples fit in S seconds stops
                             after S seconds of timing when neither target is in reach by max-trials
                             (default 0.05; 0: off, time it to max-trials)
  --no-fresh-inputs          reuse one input set for all timed calls (the older regime)
  --tolerance auto|fixed     auto (fp32 default): fixed tolerance, else an fp64 oracle check
  --atol F --rtol F          override the per-dtype tolerance
  --baseline PATH            frozen reference timing (default .bench-baseline.json)
  --refresh-baseline         re-time the reference on purpose
  --cache-dir DIR            build cache (default $KOPT_BENCH_CACHE or ~/.cache/kopt-bench)
  --timeout S                wall-clock limit of one evaluation; past it the result is a timeout (default 600)
  --seed N                   pin the input seed (default: a secret per-run seed from OS randomness)
  --no-timing                correctness checks only
  --no-namespaces            run the candidate without bubblewrap's namespaces (Landlock, seccomp and
                             no_new_privs only): to compare isolation levels; lowers trust
  --allow-weaker-isolation   where a confinement step cannot be applied (bubblewrap's namespaces, seccomp,
                             no_new_privs, Landlock), run with what remains instead of refusing; lowers trust
  --slurm "SBATCH OPTIONS"   run on a Slurm node as a job array: each --solution is one candidate (commas
                             still separate one candidate's files), one KERNEL_EVAL line per candidate with
                             native_metrics.slurm; Ctrl-C or the deadline cancels the array (docs/cluster.md)
  -h, --help                 this text

Output: COMPILED/CORRECT/BACKEND/TIMER/RUNTIME/REF_RUNTIME/SPEEDUP/REF_SOURCE/MUTATION_SENTINEL lines,
then KERNEL_EVAL={...} as the last line, errors included (a usage or input error too: evaluator_failed).
Exit status: 0 correct, 1 not correct (compile error, wrong answer, reward hack, crash, timeout),
2 bad usage or input.
)";
}

namespace {
bool to_int(const std::string& s, long long lo, long long hi, long long* out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || end == s.c_str() || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}
bool to_double(const std::string& s, double* out) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || !(v == v)) return false;
  *out = v;
  return true;
}
}  // namespace

ParseOutcome parse_args(int argc, char** argv, Options* o) {
  ParseOutcome r;
  auto bad = [&](const std::string& m) {
    r.error = m;
    return r;
  };
  for (int i = 1; i < argc; ++i) {
    const int first = i;
    std::string a = argv[i];
    std::string val;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      auto eq = a.find('=');
      if (eq != std::string::npos) {
        val = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline = true;
      }
    }
    auto need = [&](std::string* dst) -> bool {
      if (has_inline) {
        *dst = val;
        return true;
      }
      if (i + 1 >= argc) return false;
      *dst = argv[++i];
      return true;
    };
    std::string v;
    long long n = 0;
    double d = 0;
    if (a == "-h" || a == "--help") {
      r.help = true;
      r.ok = true;
      return r;
    } else if (a == "--ref") {
      if (!need(&o->ref)) return bad("--ref needs a path");
    } else if (a == "--slurm") {
      if (!need(&o->slurm_opts)) return bad("--slurm needs sbatch options (\"\" for none)");
      o->slurm = true;
    } else if (a == "--solution") {
      if (!need(&v)) return bad("--solution needs a path");
      o->candidates.push_back(v);
      std::stringstream ss(v);
      std::string part;
      while (std::getline(ss, part, ','))
        if (!part.empty()) o->solution.push_back(part);
    } else if (a == "--inputs") {
      if (!need(&o->inputs)) return bad("--inputs needs a path");
    } else if (a == "--artifact") {
      if (!need(&o->artifact)) return bad("--artifact needs a name");
      o->artifact_given = true;
    } else if (a == "--precision") {
      if (!need(&v) || (v != "float32" && v != "float16" && v != "bfloat16"))
        return bad("--precision must be float32, float16 or bfloat16");
      o->precision = v;
    } else if (a == "--device") {
      if (!need(&v) || (v != "auto" && v != "cpu" && v != "cuda")) return bad("--device must be auto, cpu or cuda");
      o->device = v;
    } else if (a == "--timer") {
      if (!need(&v) || (v != "auto" && v != "device")) return bad("--timer must be auto or device");
      o->timer = v;
    } else if (a == "--num-correct-trials") {
      if (!need(&v) || !to_int(v, 1, 100000, &n)) return bad("--num-correct-trials needs an integer >= 1");
      o->num_correct_trials = int(n);
    } else if (a == "--off-distribution-trials") {
      if (!need(&v) || !to_int(v, 0, 64, &n)) return bad("--off-distribution-trials needs an integer from 0 to 64");
      o->off_distribution_trials = int(n);
    } else if (a == "--warmup") {
      if (!need(&v) || !to_int(v, 0, 100000, &n)) return bad("--warmup needs an integer >= 0");
      o->warmup = int(n);
    } else if (a == "--min-trials") {
      if (!need(&v) || !to_int(v, 3, 1000000, &n)) return bad("--min-trials needs an integer >= 3");
      o->stop.min_trials = size_t(n);
    } else if (a == "--max-trials") {
      if (!need(&v) || !to_int(v, 3, 1000000, &n)) return bad("--max-trials needs an integer >= 3");
      o->stop.max_trials = size_t(n);
    } else if (a == "--target-ci") {
      if (!need(&v) || !to_double(v, &d) || d <= 0) return bad("--target-ci needs a number > 0");
      o->stop.target_rel_ci = d;
    } else if (a == "--target-ci-abs") {
      if (!need(&v) || !to_double(v, &d) || d < 0) return bad("--target-ci-abs needs milliseconds >= 0");
      o->stop.target_abs_ms = d;
    } else if (a == "--max-time") {
      if (!need(&v) || !to_double(v, &d) || d <= 0) return bad("--max-time needs seconds > 0");
      o->stop.max_seconds = d;
    } else if (a == "--time-budget") {
      if (!need(&v) || !to_double(v, &d) || d < 0) return bad("--time-budget needs seconds >= 0");
      o->stop.budget_s = d;
    } else if (a == "--no-namespaces") {
      o->namespaces = false;
    } else if (a == "--allow-weaker-isolation") {
      o->allow_weaker_isolation = true;
    } else if (a == "--no-fresh-inputs") {
      o->fresh_inputs = false;
    } else if (a == "--tolerance") {
      if (!need(&v) || (v != "auto" && v != "fixed")) return bad("--tolerance must be auto or fixed");
      o->tolerance = v;
    } else if (a == "--atol") {
      if (!need(&v) || !to_double(v, &d) || d < 0) return bad("--atol needs a number >= 0");
      o->atol = d;
    } else if (a == "--rtol") {
      if (!need(&v) || !to_double(v, &d) || d < 0) return bad("--rtol needs a number >= 0");
      o->rtol = d;
    } else if (a == "--baseline") {
      if (!need(&o->baseline) || o->baseline.empty()) return bad("--baseline needs a path");
    } else if (a == "--refresh-baseline") {
      o->refresh_baseline = true;
    } else if (a == "--cache-dir") {
      if (!need(&o->cache_dir)) return bad("--cache-dir needs a path");
      o->cache_dir_given = true;
    } else if (a == "--timeout") {
      if (!need(&v) || !to_double(v, &d) || d <= 0) return bad("--timeout needs seconds > 0");
      o->timeout_s = d;
    } else if (a == "--seed") {
      if (!need(&v) || !to_int(v, 0, (1LL << 62), &n)) return bad("--seed needs an integer >= 0");
      o->seed = uint64_t(n);
    } else if (a == "--no-timing") {
      o->no_timing = true;
    } else {
      return bad("unknown option '" + std::string(argv[i]) + "' (see --help)");
    }
    if (a != "--slurm" && a != "--solution")
      for (int k = first; k <= i; ++k) o->passthrough.push_back(argv[k]);
  }
  if (o->ref.empty()) return bad("--ref is required");
  if (o->solution.empty()) return bad("--solution is required");
  // A KernelBench problem (.py) declares its inputs itself (get_inputs, get_init_inputs).
  if (o->inputs.empty() && !is_python_source(o->ref)) return bad("--inputs is required (or give a KernelBench problem .py as --ref)");
  if (o->stop.max_trials < o->stop.min_trials) return bad("--max-trials must be >= --min-trials");
  if (o->slurm && o->candidates.size() > 1 && o->artifact_given)
    return bad("--artifact names one candidate; with --slurm and several --solution each line is named by its solution");
  if (o->artifact.empty()) o->artifact = o->solution.front();
  r.ok = true;
  return r;
}

}  // namespace kopt::bench
