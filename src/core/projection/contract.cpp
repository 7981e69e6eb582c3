#include "kopt/contract.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "kopt/anchors.hpp"
#include "kopt/utf16.hpp"

namespace kopt {

namespace {

// Byte length of a JavaScript whitespace character at the start of s, or 0.
std::size_t js_space_len(std::string_view s) {
  if (s.empty()) return 0;
  unsigned char c = static_cast<unsigned char>(s[0]);
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  auto at = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  if (c == 0xC2 && at(1) == 0xA0) return 2;
  if (c == 0xE1 && at(1) == 0x9A && at(2) == 0x80) return 3;
  if (c == 0xE2 && at(1) == 0x80) {
    unsigned char d = at(2);
    if ((d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF) return 3;
  }
  if (c == 0xE2 && at(1) == 0x81 && at(2) == 0x9F) return 3;
  if (c == 0xE3 && at(1) == 0x80 && at(2) == 0x80) return 3;
  if (c == 0xEF && at(1) == 0xBB && at(2) == 0xBF) return 3;
  return 0;
}

// Byte length of a JavaScript whitespace character ending at s.back(), or 0.
std::size_t js_space_len_back(std::string_view s) {
  for (std::size_t len = 1; len <= 3 && len <= s.size(); ++len) {
    std::string_view tail = s.substr(s.size() - len);
    if (js_space_len(tail) == len) return len;
  }
  return 0;
}

std::optional<std::vector<std::string>> string_list(const json& p, const char* key) {
  auto it = p.find(key);
  if (it == p.end() || !it->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string()) continue;
    out.push_back(utf16_cap(v.get_ref<const std::string&>(), 300));
    if (out.size() == 8) break;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool ends_with_key(const std::string& key, std::string_view name) {
  if (key == name) return true;
  return key.size() > name.size() && key.compare(key.size() - name.size(), name.size(), name) == 0 &&
         key[key.size() - name.size() - 1] == '.';
}

std::optional<double> positive_number(const json& p, const char* key) {
  auto it = p.find(key);
  if (it == p.end()) return std::nullopt;
  auto n = as_number(*it);
  if (n && *n > 0 && std::isfinite(*n)) return n;
  return std::nullopt;
}

}  // namespace

std::string_view js_trim_start(std::string_view s) {
  while (std::size_t n = js_space_len(s)) s.remove_prefix(n);
  return s;
}

std::string_view js_trim(std::string_view s) {
  s = js_trim_start(s);
  while (std::size_t n = js_space_len_back(s)) s.remove_suffix(n);
  return s;
}

namespace {

// B-1..B-3 for one line; `why` (when given) says why a line with the prefix yields no record.
std::optional<json> line_payload(std::string_view line, bool* has_prefix, std::string* why) {
  std::string_view t = js_trim_start(line);
  if (t.substr(0, kEvalPrefix.size()) != kEvalPrefix) return std::nullopt;
  if (has_prefix) *has_prefix = true;
  auto no = [&](const char* reason) -> std::optional<json> {
    if (why) *why = reason;
    return std::nullopt;
  };
  std::string_view window = utf16_prefix(t.substr(kEvalPrefix.size()), kContractScanUnits);
  std::size_t brace = window.find('{');
  if (brace == std::string_view::npos) return no("no '{' after KERNEL_EVAL= (within 20000 UTF-16 units)");
  std::string_view from = window.substr(brace);
  std::size_t end = balanced_object_end(from);
  if (end == std::string_view::npos) return no("the object's braces do not close (within 20000 UTF-16 units)");
  auto parsed = parse_json(from.substr(0, end));
  if (!parsed) return no("invalid JSON");
  if (!parsed->is_object()) return no("not a JSON object");
  return parsed;
}

}  // namespace

std::optional<json> contract_line_payload(std::string_view line) { return line_payload(line, nullptr, nullptr); }

std::vector<ContractPayload> contract_payloads(std::string_view text) {
  std::vector<ContractPayload> out;
  if (text.find(kEvalPrefix) == std::string_view::npos) return out;  // the common case, cheaply
  std::size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (auto p = contract_line_payload(line))
      out.push_back({line_no, std::move(*p), std::string(js_trim(js_trim_start(line).substr(kEvalPrefix.size())))});
    if (nl == std::string_view::npos) break;
    start = nl + 1;
    ++line_no;
  }
  return out;
}

std::optional<json> parse_result_json(std::string_view text) {
  std::string_view t = js_trim(text);
  if (auto whole = parse_json(t); whole && whole->is_object()) return whole;
  std::size_t first = t.find('{'), last = t.rfind('}');
  if (first == std::string_view::npos || last == std::string_view::npos || last <= first) return std::nullopt;
  if (auto inner = parse_json(t.substr(first, last - first + 1)); inner && inner->is_object()) return inner;
  return std::nullopt;
}

ToolResult parse_tool_result(std::string_view text) {
  ToolResult r;
  if ((r.payload = parse_result_json(text))) return r;
  // Second reading: outside JSON strings, a non-finite token or a number out of double range becomes null.
  std::string fixed;
  fixed.reserve(text.size());
  bool in_string = false;
  std::size_t i = 0;
  auto note = [&](std::string_view tok) {
    if (!r.rejected.empty()) r.rejected += ", ";
    r.rejected += utf16_cap(std::string(tok), 40);
  };
  while (i < text.size()) {
    char c = text[i];
    if (in_string) {
      fixed.push_back(c);
      if (c == '\\' && i + 1 < text.size()) fixed.push_back(text[++i]);
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      fixed.push_back(c);
      ++i;
      continue;
    }
    std::size_t j = i;
    if (text[j] == '-' || text[j] == '+') ++j;
    std::string_view rest = text.substr(j);
    std::size_t word = rest.substr(0, 8) == "Infinity" ? 8 : rest.substr(0, 3) == "NaN" ? 3 : 0;
    if (word) {
      note(text.substr(i, j - i + word));
      fixed += "null";
      i = j + word;
      continue;
    }
    if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) &&
        (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      std::size_t e = j;
      while (e < text.size() && (std::isdigit(static_cast<unsigned char>(text[e])) || text[e] == '.' ||
                                 text[e] == 'e' || text[e] == 'E' ||
                                 ((text[e] == '-' || text[e] == '+') && (text[e - 1] == 'e' || text[e - 1] == 'E'))))
        ++e;
      std::string num(text.substr(i, e - i));
      double v = std::strtod(num.c_str(), nullptr);
      if (!std::isfinite(v)) {
        note(num);
        fixed += "null";
      } else {
        fixed += num;
      }
      i = e;
      continue;
    }
    fixed.push_back(c);
    ++i;
  }
  if (r.rejected.empty()) return r;
  r.payload = parse_result_json(fixed);
  if (!r.payload) r.rejected.clear();
  return r;
}

std::string payload_artifact(const json& p) {
  auto a = p.find("artifact");
  const json* v = nullptr;
  if (a != p.end() && !a->is_null()) v = &*a;
  else if (auto ap = p.find("artifact_path"); ap != p.end()) v = &*ap;
  if (v && v->is_string()) return v->get<std::string>();
  return {};
}

std::vector<std::string> payload_point_problems(const json& p) {
  std::vector<std::string> out;
  if (!p.is_object()) return {"not a JSON object"};
  auto c = p.find("correct");
  if (c == p.end()) out.push_back("no \"correct\" (a boolean is required)");
  else if (!c->is_boolean()) out.push_back("\"correct\" is " + js_stringify(*c) + ", not a boolean");
  if (payload_artifact(p).empty()) out.push_back("no non-empty string \"artifact\" (or \"artifact_path\")");
  return out;
}

bool payload_is_point(const json& p) { return payload_point_problems(p).empty(); }

std::optional<json> workload_subset(const json& v) {
  if (!v.is_array() || v.empty()) return std::nullopt;
  for (const auto& x : v)
    if (!x.is_number()) return std::nullopt;
  return v;
}

namespace {

// `native_metrics.slurm` {job_id, node, partition, gpu}: where the point was measured. Each field a short
// printable string (job_id and gpu may also be a non-negative integer); anything else is dropped with a note.
constexpr std::size_t kSlurmFieldMax = 128;

std::optional<std::string> slurm_field(const json& v, bool integer_ok) {
  if (integer_ok && v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (integer_ok && v.is_number_integer() && v.get<long long>() >= 0) return std::to_string(v.get<long long>());
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > kSlurmFieldMax) return std::nullopt;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return std::nullopt;
  return s;
}

template <class Note>
void read_slurm(Iteration& it, const json& v, Note& note) {
  if (v.is_null()) return;
  if (!v.is_object()) {
    note("native_metrics", "slurm is not an object: ignored");
    return;
  }
  SlurmWhere w;
  std::size_t bad = 0;
  auto take = [&](const char* key, std::optional<std::string>& out, bool integer_ok) {
    auto f = v.find(key);
    if (f == v.end() || f->is_null()) return;
    out = slurm_field(*f, integer_ok);
    if (!out) ++bad;
  };
  take("job_id", w.jobId, true);
  take("node", w.node, false);
  take("partition", w.partition, false);
  take("gpu", w.gpu, true);
  if (bad)
    note("native_metrics", "slurm: " + std::to_string(bad) + " field" + (bad == 1 ? " is" : "s are") +
                               " not a short printable string: dropped");
  if (w.jobId || w.node || w.partition || w.gpu) it.slurm = std::move(w);
}

// `latency_ci_ms` / `reference_ci_ms`: [lo, hi] in ms holding its latency; `samples`: a positive whole
// number of timed trials (issue 49). Anything else is dropped with a note: absent means unknown.
template <class Note>
void read_noise(Iteration& it, const json& p, Note& note) {
  Noise n;
  auto interval = [&](const char* key, std::optional<double> latency) -> std::optional<Interval> {
    auto v = p.find(key);
    if (v == p.end() || v->is_null()) return std::nullopt;
    std::optional<Interval> out;
    if (v->is_array() && v->size() == 2)
      if (auto lo = as_number((*v)[0]), hi = as_number((*v)[1]); lo && hi)
        out = valid_interval(*lo, *hi, latency.value_or(std::numeric_limits<double>::quiet_NaN()));
    if (!out) note(key, js_stringify(*v) + " is not [lo, hi] (0 < lo <= hi, holding its latency): dropped");
    return out;
  };
  if (it.latencyMs) n.latencyCi = interval("latency_ci_ms", it.latencyMs);
  else if (auto v = p.find("latency_ci_ms"); v != p.end() && !v->is_null()) note("latency_ci_ms", "the point has no latency: dropped");
  // The reference's latency is the one the point implies (latency × speedup, J-1), known later: the
  // labels check that the interval holds it (projector.cpp).
  n.referenceCi = interval("reference_ci_ms", std::nullopt);
  if (auto s = p.find("samples"); s != p.end() && !s->is_null()) {
    auto v = as_number(*s);
    if (v && *v >= 1 && *v <= 1e9 && *v == std::floor(*v)) n.samples = static_cast<long long>(*v);
    else note("samples", js_stringify(*s) + " is not a whole number of trials (1 or more): dropped");
  }
  if (n.latencyCi || n.referenceCi || n.samples) it.noise = std::move(n);
}

}  // namespace

void apply_payload_fields(Iteration& it, const json& p, std::vector<FieldNote>* notes) {
  auto note = [&](const char* field, std::string reason) {
    if (notes) notes->push_back({field, std::move(reason)});
  };
  if (auto c = p.find("compiled"); c != p.end() && c->is_boolean()) it.compiled = c->get<bool>();
  else if (c != p.end() && !c->is_null()) note("compiled", "not a boolean (" + js_stringify(*c) + "): ignored");
  if (auto c = p.find("correct"); c != p.end() && c->is_boolean()) it.correct = c->get<bool>();

  std::optional<std::string> latency_error;
  if (auto l = p.find("latency_ms"); l != p.end()) {
    auto n = as_number(*l);
    if (n && std::isfinite(*n) && *n > 0) it.latencyMs = *n;
    else {
      latency_error = "invalid latency_ms: " + js_stringify(*l);
      note("latency_ms", js_stringify(*l) + " is not a finite positive number: dropped (the point has no latency and carries this as its error)");
    }
  }

  if (auto m = p.find("native_metrics"); m != p.end() && m->is_object()) {
    std::size_t dropped = 0, over = 0, kept = 0;
    for (auto e = m->begin(); e != m->end(); ++e) {
      if (e.key() == "slurm") {
        read_slurm(it, e.value(), note);
        continue;
      }
      auto n = as_number(e.value());
      if (!n) ++dropped;
      else if (kept < 12 || always_kept_metric(e.key())) {
        it.metrics.emplace_back(e.key(), *n);
        if (!always_kept_metric(e.key())) ++kept;
      } else {
        ++over;
      }
    }
    if (dropped) note("native_metrics", std::to_string(dropped) + " entr" + (dropped == 1 ? "y is" : "ies are") + " not a number: dropped");
    if (over) note("native_metrics", std::to_string(over) + " entr" + (over == 1 ? "y" : "ies") + " past the first 12: dropped");
  } else if (m != p.end() && !m->is_null()) {
    note("native_metrics", "not an object: ignored");
  }

  read_noise(it, p, note);

  if (auto r = p.find("reward_hack_detected"); r != p.end() && r->is_boolean() && r->get<bool>()) it.rewardHack = true;
  if (auto e = p.find("error"); e != p.end() && e->is_string() && !e->get_ref<const std::string&>().empty())
    it.error = e->get<std::string>();
  else if (latency_error)
    it.error = latency_error;

  it.blocking = string_list(p, "blocking");
  it.advisory = string_list(p, "advisory");
  it.notMeasured = string_list(p, "not_measured");
  for (const char* k : {"blocking", "advisory", "not_measured"})
    if (auto v = p.find(k); v != p.end() && !v->is_null() && !v->is_array()) note(k, "not an array of strings: ignored");
  if (auto f = p.find("evaluator_failed"); f != p.end() && f->is_boolean() && f->get<bool>()) it.evaluatorFailed = true;

  // J-1: reported speedup first, then a reference runtime over the (valid) latency.
  for (const auto& [k, v] : it.metrics)
    if (ends_with_key(k, "speedup") && v > 0) {
      it.speedup = v;
      return;
    }
  if (auto s = positive_number(p, "speedup")) {
    it.speedup = *s;
    return;
  }
  if (!it.latencyMs || *it.latencyMs <= 0) return;
  for (const auto& [k, v] : it.metrics)
    if (ends_with_key(k, "ref_runtime_ms") && v > 0) {
      it.speedup = v / *it.latencyMs;
      return;
    }
  if (auto r = positive_number(p, "ref_runtime_ms")) it.speedup = *r / *it.latencyMs;
}

void apply_contract_only_fields(Iteration& it, const json& p, std::vector<FieldNote>* notes) {
  std::string a = payload_artifact(p);
  if (!a.empty()) it.artifactPath = a;
  if (auto w = p.find("workload_indices"); w != p.end()) {
    if (auto ws = workload_subset(*w)) it.workloadSubset = *ws;
    else if (notes && !w->is_null()) notes->push_back({"workload_indices", "not a non-empty array of numbers: ignored"});
  }
}

namespace {

constexpr std::size_t kMaxSourcePath = 4096;
constexpr std::size_t kMaxSolutionFiles = 64;
// The plugin refuses an evaluation whose builds read more (lib/evaluate.mjs): a longer list is no result of ours.
constexpr std::size_t kMaxReadFiles = 10000;

bool sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::optional<SourceHash> source_hash(const json& v) {
  if (!v.is_object()) return std::nullopt;
  auto path = v.find("path");
  auto sha = v.find("sha256");
  if (path == v.end() || sha == v.end() || !path->is_string() || !sha->is_string()) return std::nullopt;
  const std::string& p = path->get_ref<const std::string&>();
  const std::string& h = sha->get_ref<const std::string&>();
  if (p.empty() || p.size() > kMaxSourcePath || !sha256_hex(h)) return std::nullopt;
  return SourceHash{p, h};
}

}  // namespace

bool is_plugin_measurement(const json& p) {
  auto m = p.find(anchors::kMeasuredByKey);
  return m != p.end() && m->is_string() && m->get_ref<const std::string&>() == anchors::kLoopPluginId;
}

std::optional<MeasuredSources> measured_sources(const json& p) {
  auto src = p.find("sources");
  if (src == p.end() || !src->is_object()) return std::nullopt;
  auto sol = src->find("solution");
  if (sol == src->end() || !sol->is_array() || sol->empty() || sol->size() > kMaxSolutionFiles) return std::nullopt;
  MeasuredSources out;
  for (const auto& f : *sol) {
    auto h = source_hash(f);
    if (!h) return std::nullopt;  // all or nothing: a partial list would bind the point to fewer bytes
    out.solution.push_back(std::move(*h));
  }
  if (auto r = src->find("reference"); r != src->end()) out.reference = source_hash(*r);
  if (auto i = src->find("inputs"); i != src->end()) out.inputs = source_hash(*i);
  if (auto rd = src->find("read"); rd != src->end() && rd->is_array() && rd->size() <= kMaxReadFiles) {
    for (const auto& f : *rd) {
      auto h = source_hash(f);
      if (!h) {  // all or nothing, as for the solution: a partial list would claim fewer bytes
        out.read.clear();
        break;
      }
      out.read.push_back(std::move(*h));
    }
  }
  return out;
}

std::vector<ContractLineReport> contract_line_reports(std::string_view text) {
  std::vector<ContractLineReport> out;
  if (text.find(kEvalPrefix) == std::string_view::npos) return out;
  std::size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    bool has_prefix = false;
    std::string why;
    auto p = line_payload(line, &has_prefix, &why);
    if (has_prefix) {
      ContractLineReport r;
      r.line = line_no;
      if (!p) {
        r.reason = why;
      } else if (auto problems = payload_point_problems(*p); !problems.empty()) {
        for (const auto& pr : problems) r.reason += (r.reason.empty() ? "" : "; ") + pr;
        r.payload = std::move(*p);
      } else {
        Iteration it;
        apply_payload_fields(it, *p, &r.notes);
        apply_contract_only_fields(it, *p, &r.notes);
        r.kind = r.notes.empty() ? ContractLineReport::Kind::Point : ContractLineReport::Kind::Degraded;
        r.payload = std::move(*p);
      }
      out.push_back(std::move(r));
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
    ++line_no;
  }
  return out;
}

std::size_t balanced_object_end(std::string_view text, std::size_t cap) {
  int depth = 0;
  bool in_string = false;
  const std::size_t n = std::min(text.size(), cap);
  for (std::size_t i = 0; i < n; ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace kopt
