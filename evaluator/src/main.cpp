// kopt-bench: the parent process. It parses, builds (through the cache) and supervises one
// worker process (kopt-bench-worker, next to this binary) per evaluation. It links no LibTorch,
// never loads candidate code and never touches CUDA, so it starts fast and survives any crash.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "baseline.hpp"
#include "compile_cache.hpp"
#include "options.hpp"
#include "proc.hpp"
#include "report.hpp"
#include "sha256.hpp"
#include "spec.hpp"
#include "kopt_bench_config.hpp"

using namespace kopt::bench;
using nlohmann::json;

namespace {

int emit(const Result& r, int code) {
  std::string out = format_output(r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return code;
}

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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("kopt-bench %s (torch %s%s)\n", KOPT_CFG_VERSION, KOPT_CFG_TORCH_VERSION,
                std::string(KOPT_CFG_NVCC).empty() ? ", CPU only" : ", CUDA");
    return 0;
  }
  Options opt;
  ParseOutcome po = parse_args(argc, argv, &opt);
  if (po.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (!po.ok) {
    std::fprintf(stderr, "kopt-bench: %s\n(run kopt-bench --help for usage)\n", po.error.c_str());
    return 2;
  }

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
  if (!readable(opt.inputs)) return input_error("cannot read the input spec " + opt.inputs);
  for (const auto& s : opt.solution)
    if (!readable(s)) return input_error("cannot read the solution " + s);
  InputSpec spec;
  try {
    spec = load_spec(opt.inputs);
  } catch (const SpecError& e) {
    return input_error(std::string("bad input spec: ") + e.what());
  }
  if (opt.cache_dir.empty()) opt.cache_dir = default_cache_dir();
  if (!make_dirs(opt.cache_dir)) return input_error("cannot create the cache directory " + opt.cache_dir);

  Toolchain tc = Toolchain::from_build_config();
  json ref_job;
  if (ends_with(opt.ref, ".pt") || ends_with(opt.ref, ".pth") || ends_with(opt.ref, ".ts")) {
    ref_job = {{"kind", "torchscript"}, {"path", opt.ref}};
  } else if (ends_with(opt.ref, ".cpp") || ends_with(opt.ref, ".cc") || ends_with(opt.ref, ".cu")) {
    BuildResult rb = build_cached(tc, {opt.ref}, opt.cache_dir);
    if (!rb.ok) return input_error("the reference does not compile: " + compile_summary(rb.log));
    ref_job = {{"kind", "op"}, {"so", rb.so_path}, {"ns", rb.ns}};
  } else {
    return input_error("--ref must be a TorchScript file (.pt) or a C++/CUDA source (.cpp/.cu): " + opt.ref);
  }

  BuildResult cb = build_cached(tc, opt.solution, opt.cache_dir);
  if (!cb.ok) {
    res.compiled = false;
    res.correct = false;
    res.error = "compile error: " + compile_summary(cb.log);
    return emit(res, 1);
  }

  BaselineLoad bl = load_baseline(opt.baseline);
  std::map<std::string, std::string> key;
  key["ref_sha256"] = sha256_hex(read_file(opt.ref));
  key["inputs_sha256"] = spec_hash(spec);
  key["torch"] = KOPT_CFG_TORCH_VERSION;
  key["input_regime"] = opt.fresh_inputs ? "fresh" : "reused";
  key["stopping_rule"] = opt.stop.describe() + "; warmup=" + std::to_string(opt.warmup);

  char tmpl[] = "/tmp/kopt-bench-job.XXXXXX";
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kopt-bench-job.XXXXXX";
  std::vector<char> buf(tpl.begin(), tpl.end());
  buf.push_back(0);
  char* dir = mkdtemp(buf.data());
  if (!dir) dir = mkdtemp(tmpl);
  if (!dir) return input_error("cannot create a temporary directory");
  std::string jd = dir;
  json job = {{"options", opt.to_json()},
              {"ref", ref_job},
              {"cand", {{"so", cb.so_path}, {"ns", cb.ns}}},
              {"baseline", bl.record ? bl.record->to_json() : json(nullptr)},
              {"baseline_problem", bl.problem},
              {"baseline_key", key},
              {"result_path", jd + "/result.json"},
              {"stage_path", jd + "/stage.json"}};
  {
    std::ofstream f(jd + "/job.json");
    f << job.dump();
  }
  std::string exe = self_exe();
  std::string worker = exe.substr(0, exe.find_last_of('/') + 1) + "kopt-bench-worker";
  if (const char* w = std::getenv("KOPT_BENCH_WORKER"); w && *w) worker = w;
  ProcStatus st = run_process({worker, jd + "/job.json"}, jd + "/worker.log", opt.timeout_s);
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
    res.error = "the evaluation worker " + st.describe();
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
  if (!baseline_record.is_null()) {
    try {
      write_baseline_atomic(opt.baseline, BaselineRecord::from_json(baseline_record));
    } catch (const std::exception& e) {
      res.advisory.push_back(std::string("could not save the baseline: ") + e.what());
    }
  }
  if (res.correct != (code == 0)) code = res.correct ? 0 : (code == 0 ? 1 : code);
  if (std::getenv("KOPT_BENCH_KEEP_JOB") == nullptr) {
    for (const char* f : {"/job.json", "/result.json", "/stage.json", "/worker.log"}) ::unlink((jd + f).c_str());
    ::rmdir(jd.c_str());
  } else {
    std::fprintf(stderr, "kopt-bench: job files kept in %s\n", jd.c_str());
  }
  return emit(res, code);
}
