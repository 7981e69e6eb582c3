#include "kopt/evaluate.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "kopt/anchors.hpp"
#include "kopt/contract.hpp"
#include "kopt/utf16.hpp"

namespace kopt {

namespace {

constexpr std::size_t kMaxSolutionFiles = 32;
constexpr std::size_t kMaxPath = 4096;
constexpr std::size_t kReportLines = 40;
constexpr std::size_t kReportChars = 4000;
constexpr std::size_t kSlurmOptions = 2000;

// How an option's value becomes kopt-bench arguments.
enum class Kind { Enum, Int, Number, Bool, NoFlagWhenFalse, Path };
struct Option {
  const char* name;
  const char* flag;
  Kind kind;
  std::vector<std::string> values;  // Enum
};

const std::vector<Option>& options() {
  static const std::vector<Option> list = {
      {"precision", "--precision", Kind::Enum, {"float32", "float16", "bfloat16"}},
      {"device", "--device", Kind::Enum, {"auto", "cpu", "cuda"}},
      {"num_correct_trials", "--num-correct-trials", Kind::Int, {}},
      {"warmup", "--warmup", Kind::Int, {}},
      {"min_trials", "--min-trials", Kind::Int, {}},
      {"max_trials", "--max-trials", Kind::Int, {}},
      {"target_ci", "--target-ci", Kind::Number, {}},
      {"max_time", "--max-time", Kind::Number, {}},
      {"fresh_inputs", "--no-fresh-inputs", Kind::NoFlagWhenFalse, {}},
      {"tolerance", "--tolerance", Kind::Enum, {"auto", "fixed"}},
      {"atol", "--atol", Kind::Number, {}},
      {"rtol", "--rtol", Kind::Number, {}},
      {"baseline", "--baseline", Kind::Path, {}},
      {"refresh_baseline", "--refresh-baseline", Kind::Bool, {}},
      {"timeout", "--timeout", Kind::Number, {}},
      {"seed", "--seed", Kind::Int, {}},
      {"no_timing", "--no-timing", Kind::Bool, {}},
      {"namespaces", "--no-namespaces", Kind::NoFlagWhenFalse, {}},
  };
  return list;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A path an agent gave, shown in an error: one line, bounded.
std::string shown(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200)) out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  if (s.size() > 200) out += "…";
  return "'" + out + "'";
}

std::optional<std::string> real_path(const std::string& p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

bool inside(const std::string& real, const std::string& root) {
  if (root == "/") return real.size() > 1;
  return real.size() > root.size() && real.compare(0, root.size(), root) == 0 && real[root.size()] == '/';
}

std::string parent_of(const std::string& p) {
  auto slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

class Checker {
 public:
  explicit Checker(std::string_view cwd) : cwd_(cwd) {}

  EvaluateCheck run(const json& args) {
    EvaluateCheck out;
    try {
      out.request = check(args);
    } catch (const std::string& why) {
      out.request.reset();
      out.error = why;
    }
    return out;
  }

 private:
  [[noreturn]] static void fail(const std::string& why) { throw why; }

  EvaluateRequest check(const json& args) {
    if (!args.is_object()) fail("the arguments must be a JSON object");
    static const std::vector<std::string> known = {"solution", "reference", "inputs", "artifact_path",
                                                   "options",  "where",     "slurm_options"};
    for (auto it = args.begin(); it != args.end(); ++it)
      if (std::find(known.begin(), known.end(), it.key()) == known.end())
        fail("unknown argument " + shown(it.key()) + " (arguments: " + joined(known, ", ") + ")");
    if (cwd_.empty() || cwd_[0] != '/') fail("the session's working directory is unknown");
    auto root = real_path(std::string(cwd_));
    if (!root) fail("the session's working directory " + shown(cwd_) + " does not exist");
    root_ = *root;

    EvaluateRequest r;
    std::vector<std::string> solutions;
    auto sol = args.find("solution");
    if (sol == args.end()) fail("solution is required: the candidate's source file(s)");
    if (sol->is_string()) solutions.push_back(sol->get<std::string>());
    else if (sol->is_array() && !sol->empty() && sol->size() <= kMaxSolutionFiles) {
      for (const auto& s : *sol) {
        if (!s.is_string()) fail("solution must be a path or a list of paths");
        solutions.push_back(s.get<std::string>());
      }
    } else {
      fail("solution must be a path or a list of 1 to " + std::to_string(kMaxSolutionFiles) + " paths");
    }
    std::string joined_solution;
    for (const auto& s : solutions) {
      if (s.find(',') != std::string::npos) fail("solution " + shown(s) + ": a path with a comma cannot be passed to kopt-bench");
      r.files.push_back({"solution", s, file("solution", s)});
      joined_solution += (joined_solution.empty() ? "" : ",") + r.files.back().real;
    }
    const std::string ref = string_arg(args, "reference", "the frozen reference (a KernelBench problem .py, .pt, .cpp or .cu)");
    r.files.push_back({"reference", ref, file("reference", ref)});
    // A KernelBench problem declares its inputs (get_inputs); a spec given beside it wins.
    const bool problem_py = ref.size() > 3 && ref.compare(ref.size() - 3, 3, ".py") == 0;
    const bool has_inputs = args.contains("inputs") && !args["inputs"].is_null();
    if (has_inputs || !problem_py) {
      const std::string inputs = string_arg(args, "inputs", "the input spec (JSON), unless the reference is a KernelBench problem (.py)");
      r.files.push_back({"inputs", inputs, file("inputs", inputs)});
    }

    r.artifact = solutions.front();
    if (auto a = args.find("artifact_path"); a != args.end()) {
      if (!a->is_string() || a->get_ref<const std::string&>().empty() || a->get_ref<const std::string&>().size() > kMaxPath)
        fail("artifact_path must be a non-empty string");
      r.artifact = a->get<std::string>();
    }
    r.argv = {"--ref", r.files[solutions.size()].real};
    if (r.files.size() > solutions.size() + 1) r.argv.insert(r.argv.end(), {"--inputs", r.files[solutions.size() + 1].real});
    r.argv.insert(r.argv.end(), {"--solution", joined_solution, "--artifact", r.artifact});

    if (auto o = args.find("options"); o != args.end() && !o->is_null()) add_options(*o, r.argv);

    std::string where = "local";
    if (auto w = args.find("where"); w != args.end() && !w->is_null()) {
      if (!w->is_string() || (*w != "local" && *w != "slurm")) fail("where must be \"local\" or \"slurm\"");
      where = w->get<std::string>();
    }
    auto so = args.find("slurm_options");
    if (so != args.end() && !so->is_null()) {
      if (where != "slurm") fail("slurm_options is for where: \"slurm\"");
      if (!so->is_string() || so->get_ref<const std::string&>().size() > kSlurmOptions ||
          so->get_ref<const std::string&>().find('\0') != std::string::npos)
        fail("slurm_options must be a string of sbatch options");
    }
    if (where == "slurm") {
      r.slurm = true;
      r.argv.push_back("--slurm");
      r.argv.push_back(so != args.end() && so->is_string() ? so->get<std::string>() : std::string());
    }
    return r;
  }

  static std::string string_arg(const json& args, const char* key, const char* what) {
    auto v = args.find(key);
    if (v == args.end()) fail(std::string(key) + " is required: " + what);
    if (!v->is_string()) fail(std::string(key) + " must be a path");
    return v->get<std::string>();
  }

  // The real path of an existing regular file inside the working directory.
  std::string file(const char* role, const std::string& given) {
    if (given.empty() || given.size() > kMaxPath || given.find('\0') != std::string::npos)
      fail(std::string(role) + " must be a non-empty path");
    const std::string p = given[0] == '/' ? given : root_ + "/" + given;
    auto real = real_path(p);
    if (!real) fail(std::string(role) + " " + shown(given) + ": no such file in " + shown(root_));
    if (!inside(*real, root_))
      fail(std::string(role) + " " + shown(given) + " is outside the session's working directory " + shown(root_));
    struct stat st {};
    if (::stat(real->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) fail(std::string(role) + " " + shown(given) + " is not a regular file");
    if (::access(real->c_str(), R_OK) != 0) fail(std::string(role) + " " + shown(given) + " cannot be read");
    return *real;
  }

  // A path that may not exist yet (the baseline): its folder must be inside the working directory.
  std::string future_file(const std::string& given) {
    if (given.empty() || given.size() > kMaxPath || given.find('\0') != std::string::npos)
      fail("options.baseline must be a non-empty path");
    const std::string p = given[0] == '/' ? given : root_ + "/" + given;
    if (auto real = real_path(p)) {
      if (!inside(*real, root_)) fail("options.baseline " + shown(given) + " is outside the session's working directory " + shown(root_));
      return *real;
    }
    auto dir = real_path(parent_of(p));
    if (!dir || !(inside(*dir, root_) || *dir == root_))
      fail("options.baseline " + shown(given) + ": its folder is outside the session's working directory " + shown(root_) + " or does not exist");
    return *dir + "/" + p.substr(p.find_last_of('/') + 1);
  }

  void add_options(const json& o, std::vector<std::string>& argv) {
    if (!o.is_object()) fail("options must be a JSON object (keys: " + joined(evaluate_option_names(), ", ") + ")");
    for (auto it = o.begin(); it != o.end(); ++it) {
      const Option* opt = nullptr;
      for (const auto& c : options())
        if (it.key() == c.name) opt = &c;
      if (!opt)
        fail("unknown option " + shown(it.key()) + " (options: " + joined(evaluate_option_names(), ", ") + ")");
      const json& v = it.value();
      const std::string name = std::string("options.") + opt->name;
      switch (opt->kind) {
        case Kind::Enum:
          if (!v.is_string() || std::find(opt->values.begin(), opt->values.end(), v.get<std::string>()) == opt->values.end())
            fail(name + " must be one of " + joined(opt->values, ", "));
          argv.insert(argv.end(), {opt->flag, v.get<std::string>()});
          break;
        case Kind::Int: {
          auto n = as_number(v);
          if (!v.is_number() || !n || *n != std::floor(*n) || std::fabs(*n) > 9.0e15) fail(name + " must be an integer");
          argv.insert(argv.end(), {opt->flag, js_number(*n)});
          break;
        }
        case Kind::Number: {
          auto n = as_number(v);
          if (!v.is_number() || !n) fail(name + " must be a number");
          argv.insert(argv.end(), {opt->flag, js_number(*n)});
          break;
        }
        case Kind::Bool:
          if (!v.is_boolean()) fail(name + " must be true or false");
          if (v.get<bool>()) argv.push_back(opt->flag);
          break;
        case Kind::NoFlagWhenFalse:
          if (!v.is_boolean()) fail(name + " must be true or false");
          if (!v.get<bool>()) argv.push_back(opt->flag);
          break;
        case Kind::Path:
          if (!v.is_string()) fail(name + " must be a path");
          argv.insert(argv.end(), {opt->flag, future_file(v.get<std::string>())});
          break;
      }
    }
  }

  std::string_view cwd_;
  std::string root_;
};

std::string string_or(const json& in, const char* key, std::string fallback) {
  auto v = in.find(key);
  return v != in.end() && v->is_string() ? v->get<std::string>() : fallback;
}

}  // namespace

const std::vector<std::string>& evaluate_option_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& o : options()) n.push_back(o.name);
    return n;
  }();
  return names;
}

EvaluateCheck check_evaluate_args(const json& args, std::string_view cwd) { return Checker(cwd).run(args); }

EvaluateCheck check_evaluate_args_text(std::string_view args_json, std::string_view cwd) {
  auto parsed = parse_json(args_json, 64);
  if (!parsed) return {std::nullopt, "the arguments are not valid JSON"};
  return check_evaluate_args(*parsed, cwd);
}

std::string evaluate_result(const json& in) {
  const std::string output = string_or(in, "output", "");
  const std::string artifact = string_or(in, "artifact", "");
  std::optional<json> payload;
  for (auto& cp : contract_payloads(output)) payload = std::move(cp.payload);  // kopt-bench's last line
  // Every other line of the output, bounded: what the agent reads beside the figures.
  std::string report;
  std::size_t lines = 0;
  std::size_t pos = 0;
  while (pos < output.size() && lines < kReportLines) {
    std::size_t nl = output.find('\n', pos);
    std::string_view line(output.data() + pos, (nl == std::string::npos ? output.size() : nl) - pos);
    pos = nl == std::string::npos ? output.size() : nl + 1;
    if (js_trim(line).empty() || js_trim_start(line).substr(0, anchors::kEvalTrailerPrefix.size()) == anchors::kEvalTrailerPrefix)
      continue;
    report += std::string(line) + "\n";
    ++lines;
  }
  bool cut = false;
  report = utf16_cap(report, kReportChars, &cut);

  const bool cancelled = in.value("cancelled", false);
  const std::string failure = string_or(in, "failure", "");
  json out;
  if (payload && payload->is_object() && !cancelled) {
    out = std::move(*payload);
  } else {
    out = json::object();
    out["artifact"] = artifact;
    out["compiled"] = false;
    out["correct"] = false;
    out["evaluator_failed"] = true;
    std::string why;
    if (cancelled) why = "cancelled by the user: the evaluation was stopped and every process of it ended";
    else if (!failure.empty()) why = failure;
    else {
      auto code = in.find("code");
      why = "kopt-bench gave no result line (" +
            (code != in.end() && code->is_number() ? "exit " + js_number(code->get<double>()) : std::string("no exit status")) + ")";
    }
    out["error"] = why;
    if (cancelled) out["cancelled"] = true;
  }
  // A run whose result the evaluator printed may still have failed afterwards (the files changed while it
  // ran): the figures stay, the error says why they do not count.
  if (!failure.empty() && payload && !cancelled) {
    out["correct"] = false;
    out["error"] = failure + (out.contains("error") && out["error"].is_string() ? "; " + out["error"].get<std::string>() : "");
  }
  out[std::string(anchors::kMeasuredByKey)] = std::string(anchors::kLoopPluginId);
  if (auto s = in.find("sources"); s != in.end() && s->is_object()) out["sources"] = *s;
  if (auto id = in.find("evaluationId"); id != in.end() && id->is_string()) out["evaluation_id"] = *id;
  if (!report.empty()) out["report"] = report;
  return js_stringify(out);
}

}  // namespace kopt
