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
#include <optional>
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
    UniqueFd judge_in, write_end;
    if (!open_pipe(&judge_in, &write_end)) return;
    if (ctx.start_judge) {
      JudgeStart js = ctx.start_judge(log_path, judge_in.get());
      child_ = std::move(js.child);
      how_ = js.how;
    } else {
      child_ = start_process({exe, "-"}, log_path, {}, judge_in.get());
    }
    judge_in.reset();  // the judge's end: ours closed
    write_fd_ = std::move(write_end);
  }
  // How the judge started, for native_metrics.isolation.start ("" when started the usual way).
  const std::string& how() const { return how_; }
  ~PendingJudge() { cancel(); }
  PendingJudge(const PendingJudge&) = delete;
  PendingJudge& operator=(const PendingJudge&) = delete;

  // Hands the job over and waits for the judge to finish (timeout_s from now).
  ProcStatus run(const std::string& job_path, double timeout_s) {
    const std::string line = job_path + "\n";
    const bool sent = write_fd_ && ::write(write_fd_.get(), line.data(), line.size()) == ssize_t(line.size());
    write_fd_.reset();
    if (!sent) {
      cancel();
      return ProcStatus{};
    }
    return wait_process(child_, timeout_s);
  }
  // No job after all (a build failed): the judge goes, before the result line is printed.
  void cancel() {
    write_fd_.reset();
    if (child_.end()) reap_all_children(1.0, spare_);  // its zygote, reparented to us (the subreaper)
  }

 private:
  Child child_;
  UniqueFd write_fd_;
  pid_t spare_ = 0;
  std::string how_;
};

// One evaluation in the parent, in named stages as the judge's are: prepare (arguments, paths, the
// cache and its key, a KernelBench problem's export, the spec), build the reference, build the
// candidate, the baseline (frozen record and its key), judge (the job, the worker), report (the
// result line). A stage that ends the evaluation returns its exit status; its stdout goes to ctx.out.
class ParentRun {
 public:
  explicit ParentRun(EvalContext& ctx) : ctx_(ctx) {}

  int run(int argc, char** argv) {
    if (auto done = prepare(argc, argv)) return *done;
    stage("build");
    judge_.emplace(ctx_, exe_dir_ + "kopt-bench-worker", jd_ + "/worker.log");
    const auto t_build = std::chrono::steady_clock::now();
    if (auto done = build_reference()) return *done;
    if (auto done = build_candidate()) return *done;
    build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_build).count();
    baseline();
    judge();
    return report();
  }

 private:
  using Done = std::optional<int>;

  void stage(const char* name) {
    if (ctx_.stage) ctx_.stage(name);
  }
  int emit(const Result& r, int code) {
    ctx_.out += format_output(r);
    return code;
  }
  // An input the evaluation cannot start from: evaluator_failed, exit status 2, still a result line.
  int input_error(const std::string& msg) {
    if (judge_) judge_->cancel();
    res_.compiled = false;
    res_.correct = false;
    res_.evaluator_failed = true;
    res_.error = msg;
    std::fprintf(stderr, "kopt-bench: %s\n", msg.c_str());
    return emit(res_, 2);
  }
  // A candidate that does not build: compiled false, exit status 1.
  int build_error(const std::string& msg) {
    judge_->cancel();
    res_.compiled = false;
    res_.correct = false;
    res_.error = msg;
    res_.notes = integrity_notes_;
    return emit(res_, 1);
  }

  // ---- prepare: the arguments, absolute paths, the cache and its key, the problem's export, the spec
  Done prepare(int argc, char** argv) {
    ParseOutcome po = parse_args(argc, argv, &opt_);
    if (po.help) {
      ctx_.out += usage_text();
      return 0;
    }
    // A usage error still ends in a KERNEL_EVAL line (evaluator_failed, exit status 2), like every
    // other input error: a caller that reads the contract always finds one.
    auto usage_error = [&](const std::string& msg) {
      std::fprintf(stderr, "kopt-bench: %s\n(run kopt-bench --help for usage)\n", msg.c_str());
      const std::string artifact = !opt_.artifact.empty() ? opt_.artifact : !opt_.solution.empty() ? opt_.solution.front() : "";
      ctx_.out += input_error_output(artifact, "usage: " + msg);
      return 2;
    };
    if (!po.ok) return usage_error(po.error);
    // On a Slurm node: this process only submits, streams the lines back and cancels (slurm_client.hpp).
    if (opt_.slurm) {
      if (ctx_.serving) return usage_error("--slurm runs as its own process, not through --serve");
      return run_slurm(opt_);
    }
    // The judge and the runners work elsewhere (the runner's cwd is its scratch dir): absolute paths.
    opt_.ref = abs_path(opt_.ref);
    if (!opt_.inputs.empty()) opt_.inputs = abs_path(opt_.inputs);
    for (auto& s : opt_.solution) s = abs_path(s);
    res_.artifact = opt_.artifact;
    if (!readable(opt_.ref)) return input_error("cannot read the reference " + opt_.ref);
    for (const auto& s : opt_.solution)
      if (!readable(s)) return input_error("cannot read the solution " + s);
    if (opt_.cache_dir.empty()) opt_.cache_dir = default_cache_dir();
    // Absolute, as every path here: builds run in folders of their own (a relative cache would move).
    opt_.cache_dir = abs_path(opt_.cache_dir);
    if (!make_dirs(opt_.cache_dir)) return input_error("cannot create the cache directory " + opt_.cache_dir);
    if (std::getenv("KOPT_BENCH_CACHE") && *std::getenv("KOPT_BENCH_CACHE") && !opt_.cache_dir_given) opt_.cache_dir_given = true;
    mac_key_ = judge_key(opt_.cache_dir, &key_path_);
    // A KernelBench problem: exported once per bytes (TorchScript and the spec its get_inputs() and
    // get_init_inputs() declare); an explicit --inputs wins over the derived spec.
    ref_source_ = opt_.ref;
    if (is_python_source(opt_.ref)) {
      stage("export");
      ExportedReference ex = export_reference(opt_.ref, opt_.cache_dir, mac_key_);
      if (!ex.ok) return input_error("the reference " + opt_.ref + " cannot be exported: " + ex.error);
      if (!ex.python) opt_.ref = ex.pt;  // else opt.ref stays the problem: its Model runs as Python
      if (opt_.inputs.empty()) opt_.inputs = ex.spec;
    }
    if (!readable(opt_.inputs)) return input_error("cannot read the input spec " + opt_.inputs);
    try {
      spec_ = load_spec(opt_.inputs);
    } catch (const SpecError& e) {
      return input_error(std::string("bad input spec: ") + e.what());
    }
    // The job folder; every way out from here removes it (unless KOPT_BENCH_KEEP_JOB asks to keep it).
    const char* tmpdir = std::getenv("TMPDIR");
    std::string tpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kopt-bench-job.XXXXXX";
    std::vector<char> buf(tpl.begin(), tpl.end());
    buf.push_back(0);
    char tmpl[] = "/tmp/kopt-bench-job.XXXXXX";
    char* dir = mkdtemp(buf.data());
    if (!dir) dir = mkdtemp(tmpl);
    if (!dir) return input_error("cannot create a temporary directory");
    jd_ = dir;
    job_folder_.path = jd_;
    scratch_ = jd_ + "/scratch";
    ::mkdir(scratch_.c_str(), 0700);
    ::chmod(scratch_.c_str(), 01777);  // the candidate runs as nobody when we are root
    // The judge and the runner are found beside this binary, never through the environment.
    const std::string exe = self_exe();
    exe_dir_ = exe.substr(0, exe.find_last_of('/') + 1);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return std::nullopt;
  }

  // A cached .so is used only when its MAC checks out; else it is rebuilt and the output says so.
  BuildResult build_verified(const std::vector<std::string>& srcs, const char* what) {
    BuildResult b = build_cached(tc_, srcs, opt_.cache_dir);
    if (b.ok && b.cached && !file_mac_ok(mac_key_, b.so_path)) {
      integrity_notes_.push_back(std::string("the cached ") + what + " library " + b.so_path +
                                 " failed verification (changed outside kopt-bench, or made by an older version): rebuilt");
      ::unlink(b.so_path.c_str());
      b = build_cached(tc_, srcs, opt_.cache_dir);
      if (b.ok && b.cached) b.ok = false, b.log = "cannot replace the unverified cache entry " + b.so_path;
    }
    if (b.ok && !b.cached) write_file_mac(mac_key_, b.so_path);
    return b;
  }
  // What a Python build stage constructs its class with: the reference's seed, constructor arguments
  // and mode (KernelBench's way), on the evaluation's device.
  json python_params(const char* cls) const {
    const std::string precision = !opt_.precision.empty() ? opt_.precision : spec_.precision.value_or("float32");
    // The parent links no CUDA: it expects the judge's choice (a LibTorch with CUDA, a driver's node) and the
    // judge, which decides, refuses a build made for another device (worker.cpp).
    const bool cuda = opt_.device == "cuda" || (opt_.device == "auto" && std::string(KOPT_CFG_TORCH_CUDA) == "ON" &&
                                                ::access("/dev/nvidiactl", F_OK) == 0);
    json p = {{"init_args", spec_.init_args}, {"seed", spec_.seed}, {"train", spec_.mode.value_or("eval") == "train"},
              {"precision", precision}, {"device", cuda ? "cuda" : "cpu"},
              {"inputs", spec_.raw.value("inputs", json::array())},
              {"allow_weaker_isolation", opt_.allow_weaker_isolation}};
    if (cls) p["class"] = cls;
    return p;
  }
  // Every file a build read, as the compilers listed them (compile_cache.hpp): reported with the
  // result (KOPT_FILES_READ= and native_metrics.files_read) so the caller can bind them to the point.
  void bind_files(const std::vector<FileRead>& files, const std::string& workspace) {
    files_read_.insert(files_read_.end(), files.begin(), files.end());
    files_workspace_ = workspace;
  }

  // ---- build the reference: a TorchScript module as is, a C++ op compiled, a problem run as Python
  Done build_reference() {
    const std::string& ref = opt_.ref;
    if (ends_with(ref, ".pt") || ends_with(ref, ".pth") || ends_with(ref, ".ts")) {
      ref_job_ = {{"kind", "torchscript"}, {"path", ref}};
    } else if (ends_with(ref, ".cpp") || ends_with(ref, ".cc") || ends_with(ref, ".cu")) {
      BuildResult rb = build_verified({ref}, "reference");
      if (!rb.ok) return input_error("the reference does not compile: " + compile_summary(rb.log));
      ref_job_ = {{"kind", "op"}, {"so", rb.so_path}, {"ns", rb.ns}};
      bind_files(rb.files_read, rb.workspace);
    } else if (is_python_source(ref)) {
      // A problem that neither scripts nor traces: its Model, built like a solution, runs in the judge.
      PythonBuild rb = build_python({ref}, python_params("Model"), opt_.cache_dir, mac_key_, exe_dir_ + "kopt-bench-runner");
      if (!rb.ok) return input_error("the reference " + ref + " does not run: " + rb.error);
      ref_job_ = {{"kind", "python"}, {"python", rb.entry}, {"launch", rb.launch}};
    } else {
      return input_error("--ref must be a KernelBench problem (.py), a TorchScript file (.pt) or a C++/CUDA source (.cpp/.cu): " + ref);
    }
    return std::nullopt;
  }

  // ---- build the candidate: a Python solution through its build stage (python_build.hpp), or C++
  Done build_candidate() {
    if (is_python_source(opt_.solution.front())) {
      PythonBuild pb = build_python(opt_.solution, python_params(nullptr), opt_.cache_dir, mac_key_, exe_dir_ + "kopt-bench-runner");
      if (!pb.ok) return build_error("build error: " + pb.error);
      cand_job_ = {{"python", pb.entry}, {"launch", pb.launch}, {"cached", pb.cached}};
      // The build stage reads exactly the files it is given (copied into its build folder, under Landlock).
      bind_files(files_as_read(opt_.solution), default_workspace(opt_.solution));
    } else {
      BuildResult cb = build_verified(opt_.solution, "candidate");
      if (!cb.ok) return build_error("compile error: " + compile_summary(cb.log));
      cand_job_ = {{"so", cb.so_path}, {"ns", cb.ns}};
      bind_files(cb.files_read, cb.workspace);
    }
    return std::nullopt;
  }

  // ---- the baseline: the frozen record (verified by its MAC) and the key it must match
  void baseline() {
    baseline_ = load_baseline(opt_.baseline);
    if (baseline_.record && !baseline_mac_ok(mac_key_, opt_.baseline)) {
      baseline_.record.reset();
      baseline_.problem = "the frozen baseline " + opt_.baseline + " failed verification (edited outside kopt-bench?)";
    }
    key_["ref_sha256"] = sha256_hex(read_file(ref_source_));
    key_["inputs_sha256"] = spec_hash(spec_);
    key_["torch"] = KOPT_CFG_TORCH_VERSION;
    key_["input_regime"] = opt_.fresh_inputs ? "fresh" : "reused";
    key_["stopping_rule"] = opt_.stop.describe() + "; warmup=" + std::to_string(opt_.warmup);
  }

  // ---- judge: the job for the worker, which judges; its result, or why there is none
  void judge() {
    std::vector<std::string> hide{abs_path(opt_.baseline), key_path_, jd_ + "/job.json", jd_ + "/stage.json",
                                  jd_ + "/result.json"};
    json job = {{"options", opt_.to_json()},
                {"ref", ref_job_},
                {"cand", cand_job_},
                {"baseline", baseline_.record ? baseline_.record->to_json() : json(nullptr)},
                {"baseline_problem", baseline_.problem},
                {"baseline_key", key_},
                {"result_path", jd_ + "/result.json"},
                {"stage_path", jd_ + "/stage.json"},
                {"scratch", scratch_},
                {"hide", hide}};
    {
      std::ofstream f(jd_ + "/job.json");
      f << job.dump();
    }
    const auto t_worker = std::chrono::steady_clock::now();
    stage("judge");
    ProcStatus st = judge_->run(jd_ + "/job.json", opt_.timeout_s + 10);
    reap_all_children(3.0, ctx_.spare);
    worker_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_worker).count();
    const std::string result_text = read_file(jd_ + "/result.json");
    const std::string stage_text = read_file(jd_ + "/stage.json");
    std::string log = read_file(jd_ + "/worker.log");
    bool have_result = false;
    if (!result_text.empty()) {
      try {
        json rj = json::parse(result_text);
        res_ = Result::from_json(rj);
        if (rj.contains("baseline_record")) baseline_record_ = rj["baseline_record"];
        have_result = true;
        code_ = st.exited ? st.code : 1;
        if (code_ != 0 && code_ != 1 && code_ != 2) code_ = 1;
      } catch (const std::exception& e) {
        log += std::string("\n(unreadable worker result: ") + e.what() + ")";
      }
    }
    if (have_result) return;
    res_.compiled = true;
    res_.correct = false;
    res_.error = std::string(st.timed_out ? "timeout: " : "") + "the evaluation worker " + st.describe();
    if (st.timed_out) res_.extra_metrics["timeout"] = true;
    std::string t = tail_of(log, 300);
    if (!t.empty()) res_.error += "; its last output: " + t;
    if (!stage_text.empty()) {
      try {
        json sj = json::parse(stage_text);
        if (sj.contains("baseline_record")) {
          baseline_record_ = sj["baseline_record"];
          res_.ref_runtime_ms = baseline_record_.value("ref_runtime_ms", 0.0);
          res_.ref_source = "measured now (before the worker stopped)";
        }
      } catch (const std::exception&) {
      }
    }
    code_ = 1;
  }

  // ---- report: this process's own facts added to the judge's result, the baseline saved, the line
  int report() {
    for (const auto& n : integrity_notes_) res_.notes.push_back(n);
    if (!files_workspace_.empty()) res_.extra_metrics["files_read"] = files_read_record(files_workspace_, files_read_);
    if (!judge_->how().empty()) {
      // How this judge started (kopt-bench --serve: from the warm image, or as its own process and why),
      // before how the runner started.
      json& iso = res_.extra_metrics["isolation"];
      if (!iso.is_object()) iso = json::object();
      const std::string runner = iso.contains("start") && iso["start"].is_string() ? iso["start"].get<std::string>() : "";
      iso["start"] = "judge: " + judge_->how() + (runner.empty() ? "" : "; runner: " + runner);
    }
    {
      // The worker's phases, plus this process's own stages: the build (compile, or a verified cache
      // hit) and the worker process's start and exit (its LibTorch load before "setup" begins).
      json stages = json::object();
      stages["build"] = std::round(build_ms_ * 10) / 10;
      double inside = 0;
      if (res_.extra_metrics.contains("stage_ms") && res_.extra_metrics["stage_ms"].is_object())
        for (const auto& [name, ms] : res_.extra_metrics["stage_ms"].items()) {
          stages[name] = ms;
          if (ms.is_number()) inside += ms.get<double>();
        }
      stages["worker start and exit"] = std::round(std::max(0.0, worker_ms_ - inside) * 10) / 10;
      res_.extra_metrics["stage_ms"] = stages;
    }
    json options = opt_.non_defaults();
    if (const char* nc = std::getenv("KOPT_BENCH_NO_CUPTI"); nc && std::string(nc) == "1") options["no_cupti"] = true;
    if (!options.empty()) res_.extra_metrics["options"] = options;
    advise_options();
    if (!baseline_record_.is_null()) {
      try {
        write_baseline_atomic(opt_.baseline, BaselineRecord::from_json(baseline_record_));
        write_baseline_mac(mac_key_, opt_.baseline);
      } catch (const std::exception& e) {
        res_.advisory.push_back(std::string("could not save the baseline: ") + e.what());
      }
    }
    int code = code_;
    if (res_.correct != (code == 0)) code = res_.correct ? 0 : (code == 0 ? 1 : code);
    return emit(res_, code);
  }
  // Options that change what "correct" or "fast" means are also said in words, so the panel shows
  // them on the point (advisory) and not only inside native_metrics.
  void advise_options() {
    auto num = [](double v) {
      char b[32];
      std::snprintf(b, sizeof b, "%g", v);
      return std::string(b);
    };
    const Options d;
    if (opt_.atol) res_.advisory.push_back("agent-chosen atol " + num(*opt_.atol));
    if (opt_.rtol) res_.advisory.push_back("agent-chosen rtol " + num(*opt_.rtol));
    if (opt_.tolerance != "auto") res_.advisory.push_back("agent-chosen tolerance rule '" + opt_.tolerance + "'");
    if (!opt_.fresh_inputs) res_.advisory.push_back("agent-chosen --no-fresh-inputs: one input set reused for every timed call");
    if (opt_.seed) res_.advisory.push_back("agent-pinned input seed " + std::to_string(*opt_.seed) + " (the same inputs on every run with this cache; still unpredictable to the candidate, which cannot read the judge's key)");
    if (opt_.num_correct_trials < d.num_correct_trials)
      res_.advisory.push_back("agent-chosen " + std::to_string(opt_.num_correct_trials) + " correctness trials (default " +
                              std::to_string(d.num_correct_trials) + ")");
    if (opt_.off_distribution_trials < d.off_distribution_trials)
      res_.advisory.push_back("agent-chosen " + std::to_string(opt_.off_distribution_trials) +
                              " correctness trials off the declared distribution (default " +
                              std::to_string(d.off_distribution_trials) + ")");
  }

  // Removes the job folder on every way out (unless KOPT_BENCH_KEEP_JOB asks to keep it).
  struct JobFolder {
    std::string path;
    ~JobFolder() {
      if (path.empty()) return;
      if (std::getenv("KOPT_BENCH_KEEP_JOB") == nullptr) remove_tree(path);
      else std::fprintf(stderr, "kopt-bench: job files kept in %s\n", path.c_str());
    }
  };

  EvalContext& ctx_;
  Options opt_;
  Result res_;
  InputSpec spec_;
  Toolchain tc_ = Toolchain::from_build_config();
  std::string mac_key_, key_path_, ref_source_;
  std::string jd_, scratch_, exe_dir_;
  std::vector<std::string> integrity_notes_;
  std::vector<FileRead> files_read_;
  std::string files_workspace_;
  json ref_job_, cand_job_;
  BaselineLoad baseline_;
  std::map<std::string, std::string> key_;
  json baseline_record_;
  double build_ms_ = 0, worker_ms_ = 0;
  int code_ = 1;
  // The judge is declared after the folder, so it is ended (cancelled, or its child reaped) before
  // the folder is removed.
  JobFolder job_folder_;
  std::optional<PendingJudge> judge_;
};

int evaluate(int argc, char** argv, EvalContext& ctx) { return ParentRun(ctx).run(argc, argv); }

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
  // A caller's stop (SIGTERM, SIGINT, SIGHUP) ends what this evaluation started, and the evaluation
  // still ends with its result line and removes its job folder.
  struct sigaction sa {};
  sa.sa_handler = [](int) { cancel_all(); };
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  EvalContext ctx;
  const int code = evaluate(argc, argv, ctx);
  std::fwrite(ctx.out.data(), 1, ctx.out.size(), stdout);
  std::fflush(stdout);
  return code;
}
