#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace kopt::bench {

using nlohmann::json;

std::string fixed4(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4f", v);
  return b;
}

static double round_to(double v, int digits) {
  double p = std::pow(10.0, digits);
  return std::round(v * p) / p;
}

std::string truncate_error(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  // cut on a UTF-8 boundary
  size_t n = max - 3;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

json Result::to_json() const {
  json j = {{"artifact", artifact}, {"compiled", compiled}, {"correct", correct}, {"backend", backend},
            {"timer", timer}, {"timer_note", timer_note}, {"ref_source", ref_source},
            {"sentinel", sentinel}, {"tolerance_rule", tolerance_rule}, {"trials", trials},
            {"rel_iqr", rel_iqr}, {"rel_ci", rel_ci}, {"stop_reason", stop_reason}, {"noisy", noisy},
            {"hacks", hacks}, {"advisory", advisory}, {"notes", notes}, {"error", error},
            {"evaluator_failed", evaluator_failed}, {"extra_metrics", extra_metrics}};
  if (runtime_ms) j["runtime_ms"] = *runtime_ms;
  if (ref_runtime_ms) j["ref_runtime_ms"] = *ref_runtime_ms;
  if (kernel_ms) j["kernel_ms"] = *kernel_ms;
  if (launches) j["launches"] = *launches;
  if (latency_ci) j["latency_ci"] = {latency_ci->first, latency_ci->second};
  if (ref_ci) j["ref_ci"] = {ref_ci->first, ref_ci->second};
  if (deviation)
    j["deviation"] = {{"max_abs", deviation->max_abs}, {"avg_abs", deviation->avg_abs},
                      {"max_rel", deviation->max_rel}, {"failed_trials", deviation->failed_trials},
                      {"trials", deviation->trials}};
  return j;
}

// NaN and infinity travel as null in JSON; read them back as infinity (a deviation too large to state).
static double num_or_inf(const json& j, const char* k, double dflt = 0.0) {
  if (!j.contains(k)) return dflt;
  if (j[k].is_number()) return j[k].get<double>();
  return INFINITY;
}

Result Result::from_json(const json& j) {
  Result r;
  r.artifact = j.value("artifact", "");
  r.compiled = j.value("compiled", false);
  r.correct = j.value("correct", false);
  r.backend = j.value("backend", "cpu");
  r.timer = j.value("timer", "");
  r.timer_note = j.value("timer_note", "");
  r.ref_source = j.value("ref_source", "");
  r.sentinel = j.value("sentinel", "NOT_RUN");
  r.tolerance_rule = j.value("tolerance_rule", "");
  r.trials = j.value("trials", size_t(0));
  r.rel_iqr = num_or_inf(j, "rel_iqr");
  r.rel_ci = num_or_inf(j, "rel_ci");
  r.stop_reason = j.value("stop_reason", "");
  r.noisy = j.value("noisy", false);
  r.hacks = j.value("hacks", std::vector<std::string>{});
  r.advisory = j.value("advisory", std::vector<std::string>{});
  r.notes = j.value("notes", std::vector<std::string>{});
  r.error = j.value("error", "");
  r.evaluator_failed = j.value("evaluator_failed", false);
  r.extra_metrics = j.value("extra_metrics", json::object());
  if (j.contains("runtime_ms")) r.runtime_ms = num_or_inf(j, "runtime_ms");
  if (j.contains("ref_runtime_ms")) r.ref_runtime_ms = num_or_inf(j, "ref_runtime_ms");
  if (j.contains("kernel_ms")) r.kernel_ms = num_or_inf(j, "kernel_ms");
  auto pair_of = [&](const char* k) -> std::optional<std::pair<double, double>> {
    if (!j.contains(k) || !j[k].is_array() || j[k].size() != 2) return std::nullopt;
    auto at = [&](size_t i) { return j[k][i].is_number() ? j[k][i].get<double>() : double(INFINITY); };
    return std::make_pair(at(0), at(1));
  };
  r.latency_ci = pair_of("latency_ci");
  r.ref_ci = pair_of("ref_ci");
  if (j.contains("launches")) r.launches = j["launches"].get<long>();
  if (j.contains("deviation")) {
    const auto& d = j["deviation"];
    r.deviation = Deviation{num_or_inf(d, "max_abs"), num_or_inf(d, "avg_abs"), num_or_inf(d, "max_rel"),
                            d.value("failed_trials", size_t(0)), d.value("trials", size_t(0))};
  }
  return r;
}

// An interval printed at the payload's 6 decimals, outward (lo down, hi up): it still holds every
// figure it held before rounding, in particular the printed latency (rounded to nearest).
static std::optional<json> outward6(double lo, double hi) {
  const double p = 1e6;
  const double l = std::floor(lo * p) / p, h = std::ceil(hi * p) / p;
  if (!(l > 0) || !std::isfinite(h) || h < l) return std::nullopt;
  return json::array({l, h});
}

static std::string sci(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3e", v);
  return b;
}

json kernel_eval_payload(const Result& r) {
  json j = json::object();
  j["artifact"] = r.artifact;
  j["compiled"] = r.compiled;
  j["correct"] = r.correct;
  if (r.correct && r.runtime_ms) j["latency_ms"] = round_to(*r.runtime_ms, 6);
  json m = json::object();
  if (r.correct && r.runtime_ms && r.ref_runtime_ms && *r.runtime_ms > 0)
    m["speedup"] = round_to(*r.ref_runtime_ms / *r.runtime_ms, 4);
  // The intervals (issue 49): each holds its printed figure exactly (outward rounding). The
  // reference's is widened, if need be, to hold latency_ms x speedup as printed (the reference figure
  // a reader recovers; the speedup's 4 decimals move it by up to 5e-5 relative).
  if (r.correct && r.runtime_ms) {
    const double lat = j["latency_ms"].get<double>();
    if (r.latency_ci && r.latency_ci->first <= *r.runtime_ms && *r.runtime_ms <= r.latency_ci->second)
      if (auto ci = outward6(r.latency_ci->first, r.latency_ci->second); ci && (*ci)[0] <= lat && lat <= (*ci)[1])
        j["latency_ci_ms"] = *ci;
    if (r.trials >= 1) j["samples"] = r.trials;
    if (r.ref_ci && m.contains("speedup") && r.ref_ci->first <= *r.ref_runtime_ms && *r.ref_runtime_ms <= r.ref_ci->second) {
      const double implied = lat * m["speedup"].get<double>();
      if (auto ci = outward6(std::min(r.ref_ci->first, implied), std::max(r.ref_ci->second, implied)))
        j["reference_ci_ms"] = *ci;
    }
  }
  if (r.ref_runtime_ms) m["ref_runtime_ms"] = round_to(*r.ref_runtime_ms, 6);
  if (r.correct && r.runtime_ms) {
    m["trials"] = r.trials;
    m["rel_iqr"] = round_to(r.rel_iqr, 5);
    m["rel_ci95"] = round_to(r.rel_ci, 5);
    m["stop"] = r.stop_reason;
    if (r.noisy) m["noisy"] = true;
  }
  if (r.kernel_ms) m["kernel_ms"] = round_to(*r.kernel_ms, 6);
  if (r.launches) m["launches"] = *r.launches;
  if (!r.backend.empty()) m["backend"] = r.backend;
  if (!r.timer.empty()) m["timer"] = r.timer;
  if (!r.tolerance_rule.empty()) m["tolerance"] = r.tolerance_rule;
  if (r.sentinel != "NOT_RUN") m["mutation_sentinel"] = r.sentinel;
  if (!r.ref_source.empty()) m["ref_source"] = r.ref_source;
  if (r.deviation) {
    m["max_abs_diff"] = r.deviation->max_abs;
    m["avg_abs_diff"] = r.deviation->avg_abs;
    m["failed_trials"] = r.deviation->failed_trials;
  }
  for (auto it = r.extra_metrics.begin(); it != r.extra_metrics.end(); ++it) m[it.key()] = it.value();
  // The files the build read: their count and digest here, the list on its own line (format_output).
  if (m.contains("files_read") && m["files_read"].is_object()) m["files_read"].erase("files");
  j["native_metrics"] = m;
  if (!r.hacks.empty()) {
    j["reward_hack_detected"] = true;
    j["reward_hacks"] = r.hacks;
  }
  std::vector<std::string> adv = r.advisory;
  if (!adv.empty()) j["advisory"] = adv;
  if (!r.error.empty()) j["error"] = truncate_error(r.error);
  if (r.evaluator_failed) j["evaluator_failed"] = true;
  return j;
}

std::string format_output(const Result& r) {
  std::ostringstream o;
  auto tf = [](bool b) { return b ? "True" : "False"; };
  o << "COMPILED: " << tf(r.compiled) << "\n";
  o << "CORRECT: " << tf(r.correct) << "\n";
  if (!r.correct && r.deviation && r.deviation->failed_trials > 0)
    o << "DEVIATION: max_abs=" << sci(r.deviation->max_abs) << " avg_abs=" << sci(r.deviation->avg_abs)
      << " max_rel=" << sci(r.deviation->max_rel) << " failed_trials=" << r.deviation->failed_trials << "/"
      << r.deviation->trials << "\n";
  if (!r.tolerance_rule.empty()) o << "TOLERANCE: " << r.tolerance_rule << "\n";
  o << "BACKEND: " << r.backend << "\n";
  if (!r.timer.empty())
    o << "TIMER: " << r.timer << (r.timer_note.empty() ? "" : " (" + r.timer_note + ")") << "\n";
  if (r.correct && r.runtime_ms) o << "RUNTIME: " << fixed4(*r.runtime_ms) << "\n";
  if (r.ref_runtime_ms) o << "REF_RUNTIME: " << fixed4(*r.ref_runtime_ms) << "\n";
  if (r.correct && r.runtime_ms && r.ref_runtime_ms && *r.runtime_ms > 0)
    o << "SPEEDUP: " << fixed4(*r.ref_runtime_ms / *r.runtime_ms) << "x\n";
  if (r.correct && r.runtime_ms) {
    char b[160];
    std::snprintf(b, sizeof b, "TRIALS: %zu (stop=%s, rel_iqr=%.2f%%, ci95=%.2f%%)%s\n", r.trials,
                  r.stop_reason.c_str(), 100 * r.rel_iqr, 100 * r.rel_ci, r.noisy ? " NOISY" : "");
    o << b;
  }
  if (r.kernel_ms) o << "KERNEL_TIME: " << fixed4(*r.kernel_ms) << (r.launches ? " (" + std::to_string(*r.launches) + " launches)" : "") << "\n";
  if (!r.ref_source.empty()) o << "REF_SOURCE: " << r.ref_source << "\n";
  o << "MUTATION_SENTINEL: " << r.sentinel << "\n";
  for (const auto& n : r.notes) o << "NOTE: " << n << "\n";
  for (const auto& h : r.hacks) o << "REWARD_HACK: " << h << "\n";
  for (const auto& a : r.advisory) o << "ADVISORY: " << a << "\n";
  if (!r.error.empty()) {
    std::string e = truncate_error(r.error);
    for (auto& c : e)
      if (c == '\n' || c == '\r') c = ' ';
    o << "ERROR: " << e << "\n";
  }
  // Every file the build read with its SHA-256 (compile_cache.hpp, files_read_record), however many:
  // one line of its own, bound to the payload by native_metrics.files_read.sha256.
  if (auto fr = r.extra_metrics.find("files_read"); fr != r.extra_metrics.end() && fr->is_object() && fr->contains("files"))
    o << "KOPT_FILES_READ=" << json{{"workspace", fr->value("workspace", "")}, {"files", (*fr)["files"]}}.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  o << "KERNEL_EVAL=" << kernel_eval_payload(r).dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  return o.str();
}

std::string input_error_output(const std::string& artifact, const std::string& error) {
  Result r;
  r.artifact = artifact;
  r.compiled = false;
  r.correct = false;
  r.evaluator_failed = true;
  r.error = error;
  return format_output(r);
}

}  // namespace kopt::bench
