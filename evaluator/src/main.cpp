// kopt-bench: the parent process. It parses, builds (through the verified cache) and supervises
// the judge (kopt-bench-worker, next to this binary), which in turn runs the candidate in a
// confined kopt-bench-runner. It links no LibTorch, never loads candidate code and never touches
// CUDA; it prints the result only after every process started for the evaluation is gone.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <utility>

#include "baseline.hpp"
#include "compile_cache.hpp"
#include "integrity.hpp"
#include "options.hpp"
#include "proc.hpp"
#include "python_build.hpp"
#include "report.hpp"
#include "sandbox.hpp"
#include "serve.hpp"
#include "sha256.hpp"
#include "slurm_client.hpp"
#include "spec.hpp"
#include "kopt_bench_config.hpp"

using namespace kopt::bench;
using nlohmann::json;

namespace {


bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

bool readable(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), R_OK) == 0;
}

// The first lines of a compiler log that carry "error", else its head.
std::string compile_summary(const std::string& log) {
  std::string out;
  size_t pos = 0;
  while (pos < log.size() && out.size() < 600) {
    size_t nl = log.find('\n', pos);
    std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.find("error") != std::string::npos) out += line + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out.empty() ? log.substr(0, 600) : out;
}

std::string abs_path(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + p : p;
}

// The baseline's MAC lives beside it (<baseline>.mac) over the file's exact bytes.
bool baseline_mac_ok(const std::string& key, const std::string& path) { return file_mac_ok(key, path); }
void write_baseline_mac(const std::string& key, const std::string& path) { write_file_mac(key, path); }

// The judge, started before the builds so that its LibTorch start (~0.6 s of CPU) overlaps them
// (or forked from the warm image, kopt-bench --serve). It waits for its job's path on stdin; until it
// is handed one it is killed on every way out.
class PendingJudge {
 public:
  PendingJudge(const EvalContext& ctx, const std::string& exe, const std::string& log_path) : spare_(ctx.spare) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return;
    if (ctx.start_judge) {
      JudgeStart js = ctx.start_judge(log_path, p[0]);
      child_ = std::move(js.child);
      how_ = js.how;
    } else {
      child_ = start_process({exe, "-"}, log_path, {}, p[0]);
    }
    ::close(p[0]);
    write_fd_ = p[1];
  }
  // How the judge started, for native_metrics.isolation.start ("" when started the usual way).
  const std::string& how() const { return how_; }
  ~PendingJudge() { cancel(); }
  PendingJudge(const PendingJudge&) = delete;
  PendingJudge& operator=(const PendingJudge&) = delete;

  // Hands the job over and waits for the judge to finish (timeout_s from now).
  ProcStatus run(const std::string& job_path, double timeout_s) {
    const std::string line = job_path + "\n";
    const bool sent = write_fd_ >= 0 && ::write(write_fd_, line.data(), line.size()) == ssize_t(line.size());
    ::close(write_fd_);
    write_fd_ = -1;
    if (!sent) {
      cancel();
      return ProcStatus{};
    }
    return wait_process(child_, timeout_s);
  }
  // No job after all (a build failed): the judge goes, before the result line is printed.
  void cancel() {
    if (write_fd_ >= 0) ::close(write_fd_);
    write_fd_ = -1;
    if (child_.end()) reap_all_children(1.0, spare_);  // its zygote, reparented to us (the subreaper)
  }

 private:
  Child child_;
  int write_fd_ = -1;
  pid_t spare_ = 0;
  std::string how_;
};

// One evaluation: parse, build, judge; its stdout goes to ctx.out. Returns the exit status.
int evaluate(int argc, char** argv, EvalContext& ctx) {
  auto emit = [&](const Result& r, int code) {
    ctx.out += format_output(r);
    return code;
  };
  auto stage = [&](const char* name) {
    if (ctx.stage) ctx.stage(name);
  };
  Options opt;
  ParseOutcome po = parse_args(argc, argv, &opt);
  if (po.help) {
    ctx.out += usage_text();
    return 0;
  }
  // A usage error still ends in a KERNEL_EVAL line (evaluator_failed, exit status 2), like every
  // other input error: a caller that reads the contract always finds one.
  auto usage_error = [&](const std::string& msg) {
    std::fprintf(stderr, "kopt-bench: %s\n(run kopt-bench --help for usage)\n", msg.c_str());
    const std::string artifact = !opt.artifact.empty() ? opt.artifact : !opt.solution.empty() ? opt.solution.front() : "";
    ctx.out += input_error_output(artifact, "usage: " + msg);
    return 2;
  };
  if (!po.ok) return usage_error(po.error);
  // On a Slurm node: this process only submits, streams the lines back and cancels (slurm_client.hpp).
  if (opt.slurm) {
    if (ctx.serving) return usage_error("--slurm runs as its own process, not through --serve");
    return run_slurm(opt);
  }

  // The judge and the runners work elsewhere (the runner's cwd is its scratch dir): absolute paths.
  opt.ref = abs_path(opt.ref);
  if (!opt.inputs.empty()) opt.inputs = abs_path(opt.inputs);
  for (auto& s : opt.solution) s = abs_path(s);
  Result res;
  res.artifact = opt.artifact;
  auto input_error = [&](const std::string& msg) {
    res.compiled = false;
    res.correct = false;
    res.evaluator_failed = true;
    res.error = msg;
    std::fprintf(stderr, "kopt-bench: %s\n", msg.c_str());
    return emit(res, 2);
  };

  if (!readable(opt.ref)) return input_error("cannot read the reference " + opt.ref);
  for (const auto& s : opt.solution)
    if (!readable(s)) return input_error("cannot read the solution " + s);
  if (opt.cache_dir.empty()) opt.cache_dir = default_cache_dir();
  if (!make_dirs(opt.cache_dir)) return input_error("cannot create the cache directory " + opt.cache_dir);
  if (std::getenv("KOPT_BENCH_CACHE") && *std::getenv("KOPT_BENCH_CACHE") && !opt.cache_dir_given) opt.cache_dir_given = true;
  std::string key_path;
  const std::string mac_key = judge_key(opt.cache_dir, &key_path);
  // A KernelBench problem: exported once per bytes (TorchScript and the spec its get_inputs() and
  // get_init_inputs() declare); an explicit --inputs wins over the derived spec.
  const std::string ref_source = opt.ref;
  if (is_python_source(opt.ref)) {
    stage("export");
    ExportedReference ex = export_reference(opt.ref, opt.cache_dir, mac_key);
    if (!ex.ok) return input_error("the reference " + opt.ref + " cannot be exported: " + ex.error);
    if (!ex.python) opt.ref = ex.pt;  // else opt.ref stays the problem: its Model runs as Python
    if (opt.inputs.empty()) opt.inputs = ex.spec;
  }
  if (!readable(opt.inputs)) return input_error("cannot read the input spec " + opt.inputs);
  InputSpec spec;
  try {
    spec = load_spec(opt.inputs);
  } catch (const SpecError& e) {
    return input_error(std::string("bad input spec: ") + e.what());
  }
  std::vector<std::string> integrity_notes;
  Toolchain tc = Toolchain::from_build_config();
  // A cached .so is used only when its MAC checks out; else it is rebuilt and the output says so.
  auto build_verified = [&](const std::vector<std::string>& srcs, const char* what) {
    BuildResult b = build_cached(tc, srcs, opt.cache_dir);
    if (b.ok && b.cached && !file_mac_ok(mac_key, b.so_path)) {
      integrity_notes.push_back(std::string("the cached ") + what + " library " + b.so_path +
                                " failed verification (changed outside kopt-bench, or made by an older version): rebuilt");
      ::unlink(b.so_path.c_str());
      b = build_cached(tc, srcs, opt.cache_dir);
      if (b.ok && b.cached) b.ok = false, b.log = "cannot replace the unverified cache entry " + b.so_path;
    }
    if (b.ok && !b.cached) write_file_mac(mac_key, b.so_path);
    return b;
  };
  char tmpl[] = "/tmp/kopt-bench-job.XXXXXX";
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kopt-bench-job.XXXXXX";
  std::vector<char> buf(tpl.begin(), tpl.end());
  buf.push_back(0);
  char* dir = mkdtemp(buf.data());
  if (!dir) dir = mkdtemp(tmpl);
  if (!dir) return input_error("cannot create a temporary directory");
  std::string jd = dir;
  std::string scratch = jd + "/scratch";
  ::mkdir(scratch.c_str(), 0700);
  ::chmod(scratch.c_str(), 01777);  // the candidate runs as nobody when we are root
  // Every way out from here removes the job folder (unless KOPT_BENCH_KEEP_JOB asks to keep it).
  struct JobFolder {
    std::string path;
    ~JobFolder() {
      if (std::getenv("KOPT_BENCH_KEEP_JOB") == nullptr) remove_tree(path);
      else std::fprintf(stderr, "kopt-bench: job files kept in %s\n", path.c_str());
    }
  } job_folder{jd};
  std::string exe = self_exe();
  // The judge is found beside this binary, never through the environment.
  std::string worker = exe.substr(0, exe.find_last_of('/') + 1) + "kopt-bench-worker";
  const std::string runner_exe = exe.substr(0, exe.find_last_of('/') + 1) + "kopt-bench-runner";
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  stage("build");
  PendingJudge judge(ctx, worker, jd + "/worker.log");

  const auto t_build = std::chrono::steady_clock::now();
  // What a Python build stage constructs its class with: the reference's seed, constructor arguments
  // and mode (KernelBench's way), on the evaluation's device.
  auto python_params = [&](const char* cls) {
    const std::string precision = !opt.precision.empty() ? opt.precision : spec.precision.value_or("float32");
    const bool cuda = opt.device == "cuda" || (opt.device == "auto" && !std::string(KOPT_CFG_NVCC).empty() &&
                                               ::access("/dev/nvidiactl", F_OK) == 0);
    json p = {{"init_args", spec.init_args}, {"seed", spec.seed}, {"train", spec.mode.value_or("eval") == "train"},
              {"precision", precision}, {"device", cuda ? "cuda" : "cpu"},
              {"inputs", spec.raw.value("inputs", json::array())},
              {"allow_weaker_isolation", opt.allow_weaker_isolation}};
    if (cls) p["class"] = cls;
    return p;
  };
  json ref_job;
  // Every file the builds read, as the compilers listed them (compile_cache.hpp): reported with the
  // result (KOPT_FILES_READ= and native_metrics.files_read) so the caller can bind them to the point.
  std::vector<FileRead> files_read;
  std::string files_workspace;
  if (ends_with(opt.ref, ".pt") || ends_with(opt.ref, ".pth") || ends_with(opt.ref, ".ts")) {
    ref_job = {{"kind", "torchscript"}, {"path", opt.ref}};
  } else if (ends_with(opt.ref, ".cpp") || ends_with(opt.ref, ".cc") || ends_with(opt.ref, ".cu")) {
    BuildResult rb = build_verified({opt.ref}, "reference");
    if (!rb.ok) {
      judge.cancel();
      return input_error("the reference does not compile: " + compile_summary(rb.log));
    }
    ref_job = {{"kind", "op"}, {"so", rb.so_path}, {"ns", rb.ns}};
    files_read.insert(files_read.end(), rb.files_read.begin(), rb.files_read.end());
    files_workspace = rb.workspace;
  } else if (is_python_source(opt.ref)) {
    // A problem that neither scripts nor traces: its Model, built like a solution, runs in the judge.
    PythonBuild rb = build_python({opt.ref}, python_params("Model"), opt.cache_dir, mac_key, runner_exe);
    if (!rb.ok) {
      judge.cancel();
      return input_error("the reference " + opt.ref + " does not run: " + rb.error);
    }
    ref_job = {{"kind", "python"}, {"python", rb.entry}, {"launch", rb.launch}};
  } else {
    judge.cancel();
    return input_error("--ref must be a KernelBench problem (.py), a TorchScript file (.pt) or a C++/CUDA source (.cpp/.cu): " + opt.ref);
  }

  // The candidate: a Python solution through its build stage (python_build.hpp), or compiled C++.
  json cand_job;
  if (is_python_source(opt.solution.front())) {
    PythonBuild pb = build_python(opt.solution, python_params(nullptr), opt.cache_dir, mac_key, runner_exe);
    if (!pb.ok) {
      res.compiled = false;
      res.correct = false;
      res.error = "build error: " + pb.error;
      res.notes = integrity_notes;
      judge.cancel();
      return emit(res, 1);
    }
    cand_job = {{"python", pb.entry}, {"launch", pb.launch}, {"cached", pb.cached}};
    // The build stage reads exactly the files it is given (copied into its build folder, under Landlock).
    for (const auto& f : files_as_read(opt.solution)) files_read.push_back(f);
    files_workspace = default_workspace(opt.solution);
  } else {
    BuildResult cb = build_verified(opt.solution, "candidate");
    if (!cb.ok) {
      res.compiled = false;
      res.correct = false;
      res.error = "compile error: " + compile_summary(cb.log);
      res.notes = integrity_notes;
      judge.cancel();
      return emit(res, 1);
    }
    cand_job = {{"so", cb.so_path}, {"ns", cb.ns}};
    files_read.insert(files_read.end(), cb.files_read.begin(), cb.files_read.end());
    files_workspace = cb.workspace;
  }

  const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_build).count();
  BaselineLoad bl = load_baseline(opt.baseline);
  if (bl.record && !baseline_mac_ok(mac_key, opt.baseline)) {
    bl.record.reset();
    bl.problem = "the frozen baseline " + opt.baseline + " failed verification (edited outside kopt-bench?)";
  }
  std::map<std::string, std::string> key;
  key["ref_sha256"] = sha256_hex(read_file(ref_source));
  key["inputs_sha256"] = spec_hash(spec);
  key["torch"] = KOPT_CFG_TORCH_VERSION;
  key["input_regime"] = opt.fresh_inputs ? "fresh" : "reused";
  key["stopping_rule"] = opt.stop.describe() + "; warmup=" + std::to_string(opt.warmup);

  std::vector<std::string> hide{abs_path(opt.baseline), key_path, jd + "/job.json", jd + "/stage.json",
                                jd + "/result.json"};
  json job = {{"options", opt.to_json()},
              {"ref", ref_job},
              {"cand", cand_job},
              {"baseline", bl.record ? bl.record->to_json() : json(nullptr)},
              {"baseline_problem", bl.problem},
              {"baseline_key", key},
              {"result_path", jd + "/result.json"},
              {"stage_path", jd + "/stage.json"},
              {"scratch", scratch},
              {"hide", hide}};
  {
    std::ofstream f(jd + "/job.json");
    f << job.dump();
  }
  const auto t_worker = std::chrono::steady_clock::now();
  stage("judge");
  ProcStatus st = judge.run(jd + "/job.json", opt.timeout_s + 10);
  reap_all_children(3.0, ctx.spare);
  const double worker_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_worker).count();
  std::string result_text = read_file(jd + "/result.json");
  std::string stage_text = read_file(jd + "/stage.json");
  std::string log = read_file(jd + "/worker.log");
  json baseline_record;
  int code = 1;
  bool have_result = false;
  if (!result_text.empty()) {
    try {
      json rj = json::parse(result_text);
      res = Result::from_json(rj);
      if (rj.contains("baseline_record")) baseline_record = rj["baseline_record"];
      have_result = true;
      code = st.exited ? st.code : 1;
      if (code != 0 && code != 1 && code != 2) code = 1;
    } catch (const std::exception& e) {
      log += std::string("\n(unreadable worker result: ") + e.what() + ")";
    }
  }
  if (!have_result) {
    res.compiled = true;
    res.correct = false;
    res.error = std::string(st.timed_out ? "timeout: " : "") + "the evaluation worker " + st.describe();
    if (st.timed_out) res.extra_metrics["timeout"] = true;
    std::string t = tail_of(log, 300);
    if (!t.empty()) res.error += "; its last output: " + t;
    if (!stage_text.empty()) {
      try {
        json sj = json::parse(stage_text);
        if (sj.contains("baseline_record")) {
          baseline_record = sj["baseline_record"];
          res.ref_runtime_ms = baseline_record.value("ref_runtime_ms", 0.0);
          res.ref_source = "measured now (before the worker stopped)";
        }
      } catch (const std::exception&) {
      }
    }
    code = 1;
  }
  for (const auto& n : integrity_notes) res.notes.push_back(n);
  if (!files_workspace.empty()) res.extra_metrics["files_read"] = files_read_record(files_workspace, files_read);
  if (!judge.how().empty()) {
    // How this judge started (kopt-bench --serve: from the warm image, or as its own process and why),
    // before how the runner started.
    json& iso = res.extra_metrics["isolation"];
    if (!iso.is_object()) iso = json::object();
    const std::string runner = iso.contains("start") && iso["start"].is_string() ? iso["start"].get<std::string>() : "";
    iso["start"] = "judge: " + judge.how() + (runner.empty() ? "" : "; runner: " + runner);
  }
  {
    // The worker's phases, plus this process's own stages: the build (compile, or a verified cache
    // hit) and the worker process's start and exit (its LibTorch load before "setup" begins).
    json stages = json::object();
    stages["build"] = std::round(build_ms * 10) / 10;
    double inside = 0;
    if (res.extra_metrics.contains("stage_ms") && res.extra_metrics["stage_ms"].is_object())
      for (const auto& [name, ms] : res.extra_metrics["stage_ms"].items()) {
        stages[name] = ms;
        if (ms.is_number()) inside += ms.get<double>();
      }
    stages["worker start and exit"] = std::round(std::max(0.0, worker_ms - inside) * 10) / 10;
    res.extra_metrics["stage_ms"] = stages;
  }
  json options = opt.non_defaults();
  if (const char* nc = std::getenv("KOPT_BENCH_NO_CUPTI"); nc && std::string(nc) == "1") options["no_cupti"] = true;
  if (!options.empty()) res.extra_metrics["options"] = options;
  // Options that change what "correct" or "fast" means are also said in words, so the panel shows
  // them on the point (advisory) and not only inside native_metrics.
  {
    auto num = [](double v) {
      char b[32];
      std::snprintf(b, sizeof b, "%g", v);
      return std::string(b);
    };
    if (opt.atol) res.advisory.push_back("agent-chosen atol " + num(*opt.atol));
    if (opt.rtol) res.advisory.push_back("agent-chosen rtol " + num(*opt.rtol));
    if (opt.tolerance != "auto") res.advisory.push_back("agent-chosen tolerance rule '" + opt.tolerance + "'");
    if (!opt.fresh_inputs) res.advisory.push_back("agent-chosen --no-fresh-inputs: one input set reused for every timed call");
    if (opt.seed) res.advisory.push_back("agent-pinned input seed " + std::to_string(*opt.seed) + " (the same inputs on every run with this cache; still unpredictable to the candidate, which cannot read the judge's key)");
    if (opt.num_correct_trials < Options().num_correct_trials)
      res.advisory.push_back("agent-chosen " + std::to_string(opt.num_correct_trials) + " correctness trials (default " +
                             std::to_string(Options().num_correct_trials) + ")");
    if (opt.off_distribution_trials < Options().off_distribution_trials)
      res.advisory.push_back("agent-chosen " + std::to_string(opt.off_distribution_trials) +
                             " correctness trials off the declared distribution (default " +
                             std::to_string(Options().off_distribution_trials) + ")");
  }
  if (!baseline_record.is_null()) {
    try {
      write_baseline_atomic(opt.baseline, BaselineRecord::from_json(baseline_record));
      write_baseline_mac(mac_key, opt.baseline);
    } catch (const std::exception& e) {
      res.advisory.push_back(std::string("could not save the baseline: ") + e.what());
    }
  }
  if (res.correct != (code == 0)) code = res.correct ? 0 : (code == 0 ? 1 : code);
  return emit(res, code);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("kopt-bench %s (torch %s%s)\n", KOPT_CFG_VERSION, KOPT_CFG_TORCH_VERSION,
                std::string(KOPT_CFG_NVCC).empty() ? ", CPU only" : ", CUDA");
    return 0;
  }
  // The plugin's evaluator service (serve.hpp): evaluations one at a time, judges from a warm image.
  if (argc == 3 && std::string(argv[1]) == "--serve") {
    const std::string exe = self_exe();
    return serve(argv[2], exe.substr(0, exe.find_last_of('/') + 1) + "kopt-bench-worker", &evaluate);
  }
  EvalContext ctx;
  const int code = evaluate(argc, argv, ctx);
  std::fwrite(ctx.out.data(), 1, ctx.out.size(), stdout);
  std::fflush(stdout);
  return code;
}
