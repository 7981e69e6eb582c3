// The report's input (a log file read and projected) and the per-row facts its formats share.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <utility>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "kopt/report.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

// ───────────────────────────── loading ─────────────────────────────

namespace {

// Cut at most `max` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

constexpr std::size_t kTaskCap = 4000;

}  // namespace

bool load_report_input(const std::string& path, const ProjectionConfig& config, ReportInput& out, std::string& error) {
  Projector projector(config);
  bool ok = read_log_file(
      path,
      [&](const json& ev) {
        projector.feed_event(ev);
        if (!ev.is_object()) return;
        if (auto t = ev.find("time"); t != ev.end())
          if (auto v = as_number(*t); v && std::isfinite(*v)) {
            if (!out.firstTimeMs || *v < *out.firstTimeMs) out.firstTimeMs = *v;
            if (!out.lastTimeMs || *v > *out.lastTimeMs) out.lastTimeMs = *v;
          }
        if (out.task) return;
        auto ty = ev.find("type");
        if (ty == ev.end() || !ty->is_string() || *ty != "user/message") return;
        auto d = ev.find("data");
        if (d == ev.end() || !d->is_object()) return;
        const MessageFrom from = message_from(*d);
        if (from.sender != Sender::user) return;
        std::string text = result_text(*from.message);
        if (!text.empty()) out.task = cut_utf8(text, kTaskCap);
      },
      out.read);
  if (!ok) {
    error = path + ": " + out.read.error;
    return false;
  }
  out.series = projector.series();
  out.facts = projector.run_facts();
  out.malformedEvents = projector.stats().skipped;
  out.source = path.substr(path.find_last_of('/') + 1);
  return true;
}

// ───────────────────────────── the rows ─────────────────────────────

namespace {

template <class T>
std::optional<std::size_t> last_before(const std::vector<T>& list, double seq) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].seq.num < seq) found = i;
  return found;
}

}  // namespace

Report build_report(ReportInput in) {
  Report r;
  r.in = std::move(in);
  const Series& s = r.in.series;
  r.budget = r.in.budget;
  if (r.budget <= 0)
    for (const auto& rd : s.rounds)
      if (rd.budget && *rd.budget > 0) r.budget = *rd.budget;
  ChartOptions opt;
  opt.width = 1000;
  opt.height = 320;
  opt.budget = r.budget;
  opt.fixedBudget = r.in.budget > 0;  // --budget N: a what-if over the whole log
  r.chart = chart_json(s, opt);
  const auto& phases = r.chart["phases"];
  const std::optional<double> ref = reference_latency(s);
  r.rows.reserve(s.iterations.size());
  const auto row_rounds = rounds_in_force(s);
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    const Iteration& it = s.iterations[i];
    ReportRow row;
    row.phase = i < phases.size() ? phases[i].get<std::string>() : "optimization";
    row.verdict = verdict_of(it);
    row.trust = trust_of(it);
    row.plan = last_before(s.plans, it.seq.num);
    row.round = row_rounds[i];
    if (ref && *ref > 0 && it.latencyMs && *it.latencyMs > 0) row.pooledSpeedup = *ref / *it.latencyMs;
    row.vsBest = versus_best(s.iterations, i);
    row.vsReference = versus_reference(it);
    row.latencyLabel = latency_label(it);
    for (const auto& [k, v] : it.metrics) {
      if (!std::isfinite(v)) continue;
      if (k == "bandwidth_fraction") row.bandwidthFraction = v;
      else if (k == "compute_fraction") row.computeFraction = v;
      else if (k == "bandwidth_gbps") row.bandwidthGbps = v;
    }
    r.rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace kopt
