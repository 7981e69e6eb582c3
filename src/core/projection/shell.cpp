#include "kopt/shell.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "kopt/contract.hpp"
#include "kopt/utf16.hpp"

namespace kopt {

namespace {

// Quoted spans become opaque placeholder tokens "\x01<index>\x02" so operators inside are data.
struct Quoted {
  std::string line;                 // with placeholders
  std::vector<std::string> inners;  // text inside each quoted span (may hold earlier placeholders)
};

void replace_spans(Quoted& q, char quote) {
  std::string out;
  const std::string& s = q.line;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t open = s.find(quote, i);
    if (open == std::string::npos) break;
    std::size_t close = s.find(quote, open + 1);
    if (close == std::string::npos) break;  // unterminated: stays as text
    out.append(s, i, open - i);
    out.push_back('\x01');
    out += std::to_string(q.inners.size());
    out.push_back('\x02');
    q.inners.emplace_back(s.substr(open + 1, close - open - 1));
    i = close + 1;
  }
  out.append(s, i, std::string::npos);
  q.line = std::move(out);
}

Quoted quote_line(std::string_view command) {
  Quoted q{std::string(command), {}};
  replace_spans(q, '\'');
  replace_spans(q, '"');
  return q;
}

// Index of the quoted span when the token is exactly one placeholder.
std::optional<std::size_t> placeholder_index(std::string_view tok) {
  if (tok.size() < 3 || tok.front() != '\x01' || tok.back() != '\x02') return std::nullopt;
  std::size_t v = 0;
  for (char c : tok.substr(1, tok.size() - 2)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
    if (v > (1u << 30)) return std::nullopt;
  }
  return v;
}

// D-3: split on runs of ; | & newline, and on "$(" and backtick.
std::vector<std::string_view> segments(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0, i = 0;
  auto cut = [&](std::size_t end, std::size_t next) {
    out.push_back(line.substr(start, end - start));
    start = i = next;
  };
  while (i < line.size()) {
    char c = line[i];
    if (c == ';' || c == '|' || c == '&' || c == '\n') {
      std::size_t j = i;
      while (j < line.size() && (line[j] == ';' || line[j] == '|' || line[j] == '&' || line[j] == '\n')) ++j;
      cut(i, j);
    } else if (c == '`') {
      cut(i, i + 1);
    } else if (c == '$' && i + 1 < line.size() && line[i + 1] == '(') {
      cut(i, i + 2);
    } else {
      ++i;
    }
  }
  out.push_back(line.substr(start));
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'; }

std::vector<std::string_view> tokens(std::string_view seg) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < seg.size()) {
    while (i < seg.size() && is_space(seg[i])) ++i;
    std::size_t s = i;
    while (i < seg.size() && !is_space(seg[i])) ++i;
    if (i > s) out.push_back(seg.substr(s, i - s));
  }
  return out;
}

bool is_assignment(std::string_view t) {
  if (t.empty() || !(std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_')) return false;
  for (std::size_t i = 1; i < t.size(); ++i) {
    char c = t[i];
    if (c == '=') return true;
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return false;
}

struct Wrapper {
  std::string_view name;
  std::vector<std::string_view> value_opts;
  int operands;
  bool all_short_take_value = false;  // numactl
};

// srun and salloc: the options that take a required value in Slurm 22.05 (`srun --help`/`--usage`, `salloc
// --help`/`--usage`); optional-value ones (--immediate[=s], --nice[=n], --exclusive[=user], …) only attach.
const std::array<Wrapper, 16>& wrappers() {
  static const std::array<Wrapper, 16> w{{
      {"sudo", {"-u", "-g", "-U", "-C", "-D", "-p", "-r", "-t", "-T"}, 0},
      {"env", {"-u", "-C", "-S"}, 0},
      {"nice", {"-n"}, 0},
      {"ionice", {"-c", "-n", "-p", "-P", "-u"}, 0},
      {"timeout", {"-s", "-k"}, 1},
      {"time", {"-f", "-o"}, 0},
      {"nohup", {}, 0},
      {"command", {}, 0},
      {"stdbuf", {"-o", "-e", "-i"}, 0},
      {"taskset", {}, 1},
      {"numactl", {}, 0, true},
      {"chrt", {"-T", "-P", "-D"}, 1},
      {"exec", {"-a"}, 0},
      {"xcrun", {"--sdk", "-sdk", "--toolchain", "-toolchain"}, 0},
      {"srun",
       {"-A", "-B", "-C", "-D", "-G", "-J", "-L", "-M", "-N", "-S", "-T", "-W", "-b", "-c", "-d", "-e", "-i",
        "-m", "-n", "-o", "-p", "-q", "-r", "-t", "-w", "-x", "--account", "--acctg-freq", "--bb", "--bbf",
        "--bcast", "--bcast-exclude", "--begin", "--chdir", "--cluster-constraint", "--clusters", "--comment",
        "--constraint", "--container", "--core-spec", "--cores-per-socket", "--cpu-bind", "--cpu-freq",
        "--cpus-per-gpu", "--cpus-per-task", "--ctrl-comm-ifhn", "--deadline", "--delay-boot", "--dependency",
        "--distribution", "--epilog", "--error", "--exclude", "--export", "--extra-node-info", "--gpu-bind",
        "--gpu-freq", "--gpus", "--gpus-per-node", "--gpus-per-socket", "--gpus-per-task", "--gres",
        "--gres-flags", "--het-group", "--input", "--job-name", "--jobid", "--licenses", "--mail-type",
        "--mail-user", "--mcs-label", "--mem", "--mem-bind", "--mem-per-cpu", "--mem-per-gpu", "--mincpus",
        "--mpi", "--mpi-combine", "--network", "--nodelist", "--nodes", "--ntasks", "--ntasks-per-core",
        "--ntasks-per-node", "--ntasks-per-socket", "--output", "--partition", "--power", "--priority",
        "--profile", "--prolog", "--qos", "--relative", "--reservation", "--signal", "--slurmd-debug",
        "--slurmd_debug", "--sockets-per-node", "--switches", "--task-epilog", "--task-prolog", "--thread-spec",
        "--threads", "--threads-per-core", "--time", "--time-min", "--tmp", "--wait", "--wckey"},
       0},
      {"salloc",
       {"-A", "-B", "-C", "-D", "-F", "-G", "-J", "-L", "-M", "-N", "-S", "-b", "-c", "-d", "-m", "-n", "-p",
        "-q", "-r", "-t", "-w", "-x", "--account", "--bb", "--bbf", "--begin", "--chdir",
        "--cluster-constraint", "--clusters", "--comment", "--constraint", "--container", "--core-spec",
        "--cores-per-socket", "--cpu-freq", "--cpus-per-gpu", "--cpus-per-task", "--deadline", "--delay-boot",
        "--dependency", "--distribution", "--exclude", "--extra-node-info", "--gid", "--gpu-bind", "--gpu-freq",
        "--gpus", "--gpus-per-node", "--gpus-per-socket", "--gpus-per-task", "--gres", "--gres-flags",
        "--job-name", "--licenses", "--mail-type", "--mail-user", "--mcs-label", "--mem", "--mem-bind",
        "--mem-per-cpu", "--mem-per-gpu", "--mincpus", "--network", "--nodefile", "--nodelist", "--nodes",
        "--ntasks", "--ntasks-per-core", "--ntasks-per-node", "--ntasks-per-socket", "--partition", "--power",
        "--priority", "--profile", "--qos", "--reservation", "--signal", "--sockets-per-node", "--switches",
        "--thread-spec", "--threads-per-core", "--time", "--time-min", "--tmp", "--uid", "--wckey"},
       0},
  }};
  return w;
}

const Wrapper* find_wrapper(std::string_view tok) {
  for (const auto& w : wrappers())
    if (w.name == tok) return &w;
  return nullptr;
}

bool takes_value(const Wrapper& w, std::string_view tok) {
  if (w.all_short_take_value)
    return tok.size() == 2 && tok[0] == '-' && std::isalpha(static_cast<unsigned char>(tok[1])) && tok[1] != 'l' &&
           tok[1] != 'H' && tok[1] != 's';
  return std::find(w.value_opts.begin(), w.value_opts.end(), tok) != w.value_opts.end();
}

// D-4: index of the program token after assignments and wrappers (== toks.size() when none).
// `launcher`, when given, receives the first Slurm launcher (srun/salloc) among the wrappers passed.
std::size_t program_index(const std::vector<std::string_view>& toks, std::string_view* launcher = nullptr) {
  std::size_t i = 0, n = toks.size();
  while (true) {
    while (i < n && is_assignment(toks[i])) ++i;
    if (i >= n) return n;
    const Wrapper* w = find_wrapper(toks[i]);
    if (!w) return i;
    if (launcher && launcher->empty() && (w->name == "srun" || w->name == "salloc")) *launcher = w->name;
    ++i;
    while (i < n) {
      std::string_view t = toks[i];
      if (t == "--") {
        ++i;
        break;
      }
      if (is_assignment(t)) {
        ++i;
        continue;
      }
      if (t.empty() || t[0] != '-') break;
      i += takes_value(*w, t) ? 2 : 1;
    }
    i = std::min(n, i + static_cast<std::size_t>(w->operands));
  }
}

std::string_view basename(std::string_view tok) {
  std::size_t slash = tok.rfind('/');
  return slash == std::string_view::npos ? tok : tok.substr(slash + 1);
}

bool in(std::string_view x, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), x) != set.end();
}

enum class SegKind { Empty, Neutral, Reader, Run };

SegKind segment_kind(std::string_view seg) {
  auto toks = tokens(seg);
  if (toks.empty()) return SegKind::Empty;
  std::size_t p = program_index(toks);
  if (p >= toks.size()) return SegKind::Neutral;  // only assignments (and wrappers)
  std::string_view prog = basename(toks[p]);
  if (in(prog, {"echo", "printf", "true", ":", "cd", "export", "set"})) return SegKind::Neutral;
  if (in(prog, {"cat", "grep", "egrep", "fgrep", "rg", "head", "tail", "less", "more", "od", "xxd", "strings", "wc",
                "ls", "find", "diff"}))
    return SegKind::Reader;
  return SegKind::Run;
}

// ---- profiler detection (E) ----

struct ProfileScan {
  const Quoted& q;
  const std::vector<std::string>& profilers;
};

bool scan_line(const ProfileScan& ps, std::string_view line, std::size_t min_args, int hops);

bool scan_tokens(const ProfileScan& ps, const std::vector<std::string_view>& toks, std::size_t min_args, int hops) {
  std::size_t p = program_index(toks);
  if (p >= toks.size()) return false;
  std::string_view prog = basename(toks[p]);
  std::vector<std::string_view> args(toks.begin() + static_cast<std::ptrdiff_t>(p) + 1, toks.end());

  // E-5 handoff across a bare "--" (before executors).
  if (hops > 0 && !in(prog, {"git", "grep", "rg", "find", "ls", "rm", "cp", "mv", "diff"})) {
    auto dd = std::find(args.begin(), args.end(), std::string_view("--"));
    if (dd != args.end()) {
      std::vector<std::string_view> rest(dd + 1, args.end());
      if (scan_tokens(ps, rest, 2, hops - 1)) return true;
    }
  }
  // E-3
  if (std::find(ps.profilers.begin(), ps.profilers.end(), prog) != ps.profilers.end() && args.size() >= min_args) {
    bool inspect = false;
    for (auto a : args)
      if (in(a, {"--help", "-h", "help", "--version", "-V", "--list", "list"})) inspect = true;
    if (!inspect) return true;
  }
  // E-4 executors
  if (hops > 0 && in(prog, {"ssh", "bash", "sh", "zsh", "docker", "podman", "kubectl", "srun", "sbatch"})) {
    for (auto a : args)
      if (auto idx = placeholder_index(a); idx && *idx < ps.q.inners.size())
        if (scan_line(ps, ps.q.inners[*idx], 1, hops - 1)) return true;
    if (prog == "ssh") {
      std::size_t i = 0;
      while (i < args.size() && !args[i].empty() && args[i][0] == '-') {
        std::string_view t = args[i];
        bool single = t.size() >= 2;
        for (std::size_t k = 1; k < t.size(); ++k)
          if (std::string_view("46AaCfGgKkMNnqsTtVvXxYy").find(t[k]) == std::string_view::npos) single = false;
        i += single ? 1 : 2;
      }
      ++i;  // destination
      if (i < args.size()) {
        std::string joined;
        for (std::size_t k = i; k < args.size(); ++k) {
          if (k > i) joined.push_back(' ');
          joined.append(args[k]);
        }
        if (scan_line(ps, joined, 1, hops - 1)) return true;
      }
    }
  }
  return false;
}

bool scan_line(const ProfileScan& ps, std::string_view line, std::size_t min_args, int hops) {
  for (auto seg : segments(line))
    if (scan_tokens(ps, tokens(seg), min_args, hops)) return true;
  return false;
}

}  // namespace

const char* to_string(CommandKind k) {
  switch (k) {
    case CommandKind::Run: return "run";
    case CommandKind::ReadBack: return "read-back";
    case CommandKind::Echo: return "echo";
  }
  return "run";
}

CommandKind command_kind(std::string_view command) {
  Quoted q = quote_line(command);
  bool reader = false, neutral = false;
  for (auto seg : segments(q.line)) {
    switch (segment_kind(seg)) {
      case SegKind::Run: return CommandKind::Run;
      case SegKind::Reader: reader = true; break;
      case SegKind::Neutral: neutral = true; break;
      case SegKind::Empty: break;
    }
  }
  if (reader) return CommandKind::ReadBack;
  if (neutral) return CommandKind::Echo;
  return CommandKind::Run;
}

std::string slurm_path(std::string_view command) {
  Quoted q = quote_line(command);
  for (auto seg : segments(q.line)) {
    auto toks = tokens(seg);
    std::string_view launcher;
    std::size_t p = program_index(toks, &launcher);
    if (!launcher.empty()) return std::string(launcher);
    if (p >= toks.size()) continue;
    std::string_view prog = basename(toks[p]);
    if (prog == "sbatch") return "sbatch";
    if (prog == "kopt-bench")
      for (std::size_t k = p + 1; k < toks.size(); ++k)
        if (toks[k] == "--slurm" || toks[k].substr(0, 8) == "--slurm=") return "kopt-bench --slurm";
  }
  return {};
}

bool matches_profile_command(std::string_view command, const std::vector<std::string>& profilers) {
  Quoted q = quote_line(command);
  ProfileScan ps{q, profilers};
  return scan_line(ps, q.line, 1, 3);
}

namespace {

// One level of backslash escaping undone (D-8): \" -> " and \\ -> \; other escapes stay.
std::string unescape_once(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\')) ++i;
    out.push_back(s[i]);
  }
  return out;
}

// JSON equality where object key order does not matter (a re-serialised payload may reorder keys).
bool same_json(const json& a, const json& b) {
  if (a.is_object() != b.is_object()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto o = b.find(it.key());
      if (o == b.end() || !same_json(it.value(), *o)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (!b.is_array() || a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_json(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// A Python dict literal written as JSON would be (`python3 -c "print(json.dumps({'a': True}))"`):
// single-quoted strings become double-quoted, bare True/False/None become true/false/null, and a
// JavaScript object's bare keys (`{latency_ms: 0.1}`) are quoted.
std::string python_literal_as_json(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\' && i + 1 < s.size()) {
        if (s[i + 1] == '\'' && quote == '\'') { out.push_back('\''); ++i; continue; }
        out.push_back(c);
        out.push_back(s[++i]);
        continue;
      }
      if (c == quote) { out.push_back('"'); quote = 0; continue; }
      if (c == '"') { out += "\\\""; continue; }  // a " inside a '…' string
      out.push_back(c);
      continue;
    }
    if (c == '\'' || c == '"') { quote = c; out.push_back('"'); continue; }
    auto word = [&](std::string_view w) {
      bool edge_before = i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_');
      std::size_t e = i + w.size();
      bool edge_after = e >= s.size() || !(std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_');
      return edge_before && edge_after && s.substr(i, w.size()) == w;
    };
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$') {  // a bare key: {latency_ms: 1}
      std::size_t k = out.find_last_not_of(" \t\n");
      std::size_t e = i;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_' || s[e] == '$')) ++e;
      std::size_t colon = s.find_first_not_of(" \t\n", e);
      if (k != std::string::npos && (out[k] == '{' || out[k] == ',') && colon != std::string_view::npos &&
          s[colon] == ':') {
        out.push_back('"');
        out.append(s, i, e - i);
        out.push_back('"');
        i = e - 1;
        continue;
      }
    }
    if (word("True")) { out += "true"; i += 3; continue; }
    if (word("False")) { out += "false"; i += 4; continue; }
    if (word("None")) { out += "null"; i += 3; continue; }
    out.push_back(c);
  }
  return out;
}

constexpr std::size_t kUnescapeLevels = 3;     // C, C', and two deeper levels (nested `bash -c`)
constexpr std::size_t kSpanCap = 20000;        // as B-3 bounds a contract payload
constexpr std::size_t kMaxSpanStarts = 4096;   // per form: bounds work on huge commands

}  // namespace

CommandSpelling::CommandSpelling(std::string_view command) {
  forms_.emplace_back(command);
  for (std::size_t level = 0; level < kUnescapeLevels; ++level) {
    std::string next = unescape_once(forms_.back());
    if (next == forms_.back()) break;
    forms_.push_back(std::move(next));
  }
}

bool CommandSpelling::spells(std::string_view payload_text, const json& payload) {
  if (!payload_text.empty())
    for (const auto& f : forms_)
      if (f.find(payload_text) != std::string::npos) return true;
  if (!records_) {
    records_.emplace();
    for (const auto& f : forms_) {
      std::size_t starts = 0;
      for (std::size_t at = f.find('{'); at != std::string::npos && starts < kMaxSpanStarts;
           at = f.find('{', at + 1), ++starts) {
        std::string_view from = std::string_view(f).substr(at);
        std::size_t end = balanced_object_end(from, kSpanCap);
        if (end == std::string_view::npos) continue;
        std::string_view span = from.substr(0, end);
        if (auto p = parse_json(span, 64); p && p->is_object()) records_->push_back(std::move(*p));
        else if (auto q = parse_json(python_literal_as_json(span), 64); q && q->is_object())
          records_->push_back(std::move(*q));
      }
    }
  }
  for (const auto& r : *records_)
    if (same_json(r, payload)) return true;
  return false;
}

WireCommand wire_command(std::string_view command) {
  std::size_t len = utf16_length(command);
  if (len <= 300) return {std::string(command), std::nullopt};
  std::string out(utf16_prefix(command, 180));
  out += " \xE2\x80\xA6 ";
  out += utf16_suffix(command, 117);
  return {std::move(out), len};
}

}  // namespace kopt

