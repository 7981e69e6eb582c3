// The report's run as data: CSV (one line per evaluation, RFC 4180) and JSON.
#include <cmath>
#include <string>

#include "kopt/chart.hpp"
#include "kopt/report.hpp"
#include "kopt/verdict.hpp"
#include "report_parts.hpp"

namespace kopt {

using report_parts::seq_text;

namespace {
// A comparison's effect or half-width for the data exports: percent, two decimals.
double effect_figure(double pct) { return std::round(pct * 100.0) / 100.0; }
}  // namespace

std::string report_csv(const Report& r) {
  const auto& s = r.in.series;
  static const char* kCols[] = {"index",         "seq",     "tool",          "phase",        "verdict",       "trust",
                                "compiled",      "correct", "latencyMs",     "speedup",      "pooledSpeedup", "best",
                                "finalized",     "channel", "jobId",         "evaluationId", "artifactPath",  "command",
                                "commandLength", "error",   "approachPhase", "approach",     "round",         "review",
                                "changes",       "metrics",
                                // Issue 49: the interval, the labels against ★ and the reference, the fractions.
                                "latencyCiLo", "latencyCiHi", "referenceCiLo", "referenceCiHi", "samples", "vsBest",
                                "vsBestOf", "vsBestPct", "vsBestPm", "vsReference", "vsReferencePct", "vsReferencePm",
                                "bandwidthFraction", "computeFraction", "bandwidthGbps"};
  std::string o;
  for (std::size_t k = 0; k < std::size(kCols); ++k) {
    if (k) o += ',';
    o += kCols[k];
  }
  o += "\r\n";
  auto b = [](const std::optional<bool>& v) { return v ? std::string(*v ? "true" : "false") : std::string(); };
  auto d = [](const std::optional<double>& v) { return v ? js_number(*v) : std::string(); };
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    const Iteration& it = s.iterations[i];
    const ReportRow& row = r.rows[i];
    std::vector<std::string> f;
    f.push_back(std::to_string(i + 1));
    f.push_back(csv_text(seq_text(it.seq)));
    f.push_back(csv_text(it.tool));
    f.push_back(row.phase);
    f.push_back(row.verdict);
    f.push_back(row.trust);
    f.push_back(b(it.compiled));
    f.push_back(b(it.correct));
    f.push_back(d(it.latencyMs));
    f.push_back(d(it.speedup));
    f.push_back(d(row.pooledSpeedup));
    f.push_back(s.bestIndex == i ? "true" : "");
    f.push_back(it.finalized ? "true" : "");
    f.push_back(it.channel ? csv_text(*it.channel) : "tool");
    f.push_back(it.jobId ? csv_text(*it.jobId) : "");
    f.push_back(it.evaluationId ? csv_text(*it.evaluationId) : "");
    f.push_back(it.artifactPath ? csv_text(*it.artifactPath) : "");
    f.push_back(csv_text(!it.fullCommand.empty() ? it.fullCommand : it.command.value_or("")));
    f.push_back(it.commandLength ? std::to_string(*it.commandLength) : "");
    f.push_back(it.error ? csv_text(*it.error) : "");
    f.push_back(row.plan ? csv_text(s.plans[*row.plan].phase) : "");
    f.push_back(row.plan ? csv_text(s.plans[*row.plan].approach) : "");
    f.push_back(row.round && s.rounds[*row.round].round ? std::to_string(*s.rounds[*row.round].round) : "");
    f.push_back(row.round && s.rounds[*row.round].review ? csv_text(*s.rounds[*row.round].review) : "");
    f.push_back(std::to_string(it.changes.size()));
    if (it.metrics.empty()) {
      f.push_back("");
    } else {
      json m = json::object();
      for (const auto& [k, v] : it.metrics) m[k] = v;
      f.push_back(csv_field(js_stringify(m)));
    }
    const Noise* noise = it.noise ? &*it.noise : nullptr;
    auto interval = [&](const std::optional<Interval> Noise::*which) {
      const std::optional<Interval>* v = noise ? &(noise->*which) : nullptr;
      f.push_back(v && *v ? js_number((*v)->lo) : "");
      f.push_back(v && *v ? js_number((*v)->hi) : "");
    };
    interval(&Noise::latencyCi);
    interval(&Noise::referenceCi);
    f.push_back(noise && noise->samples ? std::to_string(*noise->samples) : "");
    f.push_back(row.vsBest ? versus_name(row.vsBest->verdict) : "");
    f.push_back(row.vsBest && it.bestBefore < s.iterations.size() ? std::to_string(it.bestBefore + 1) : "");
    auto figures = [&](const std::optional<Comparison>& c) {
      f.push_back(c ? js_number(effect_figure(c->effectPct)) : "");
      f.push_back(c && c->verdict != Versus::unsure ? js_number(effect_figure(c->pmPct)) : "");
    };
    figures(row.vsBest);
    f.push_back(row.vsReference ? versus_name(row.vsReference->verdict) : "");
    figures(row.vsReference);
    f.push_back(d(row.bandwidthFraction));
    f.push_back(d(row.computeFraction));
    f.push_back(d(row.bandwidthGbps));
    for (std::size_t k = 0; k < f.size(); ++k) {
      if (k) o += ',';
      o += f[k];
    }
    o += "\r\n";
  }
  return o;
}

json report_json(const Report& r) {
  const auto& s = r.in.series;
  json o = json::object();
  o["kind"] = "kopt-report";
  o["version"] = 1;
  json src = json::object();
  src["log"] = r.in.source;
  src["lines"] = r.in.read.lines;
  src["events"] = r.in.read.events;
  src["skippedLines"] = r.in.read.skipped;
  src["malformedEvents"] = r.in.malformedEvents;
  src["truncated"] = r.in.read.truncated;
  if (!r.in.read.error.empty()) src["error"] = r.in.read.error;
  if (r.in.firstTimeMs) src["firstTimeMs"] = *r.in.firstTimeMs;
  if (r.in.lastTimeMs) src["lastTimeMs"] = *r.in.lastTimeMs;
  if (r.in.task) src["task"] = *r.in.task;
  o["source"] = std::move(src);
  o["budget"] = r.budget;
  json sum = json::object();
  sum["evaluations"] = s.iterations.size();
  sum["counts"] = r.chart["counts"];
  if (s.bestIndex && *s.bestIndex < s.iterations.size()) {
    const auto& best = s.iterations[*s.bestIndex];
    json bj = {{"index", *s.bestIndex}};
    if (best.latencyMs) bj["latencyMs"] = *best.latencyMs, bj["label"] = format_latency(*best.latencyMs);
    if (best.speedup) bj["speedup"] = *best.speedup;
    if (*s.bestIndex < r.rows.size() && r.rows[*s.bestIndex].pooledSpeedup)
      bj["pooledSpeedup"] = *r.rows[*s.bestIndex].pooledSpeedup;
    sum["best"] = std::move(bj);
  } else {
    sum["best"] = nullptr;
  }
  sum["final"] = r.chart["final"];
  if (r.chart.contains("finalClaim")) sum["finalClaim"] = r.chart["finalClaim"];
  sum["reference"] = r.chart["reference"];
  sum["drift"] = r.chart["drift"];
  sum["uncollected"] = s.uncollectedSeqs.size();
  sum["echoed"] = s.echoedSeqs.size();
  o["summary"] = std::move(sum);
  o["series"] = to_json(s, r.in.source, r.in.generatedAtMs);
  o["chart"] = r.chart;
  json rows = json::array();
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const ReportRow& row = r.rows[i];
    json j = {{"index", i}, {"phase", row.phase}, {"verdict", row.verdict}, {"trust", row.trust}};
    if (!s.iterations[i].fullCommand.empty()) j["command"] = s.iterations[i].fullCommand;
    if (row.plan) j["plan"] = *row.plan;
    if (row.round) j["round"] = *row.round;
    if (row.pooledSpeedup) j["pooledSpeedup"] = *row.pooledSpeedup;
    // Issue 49: the interval, the labels with their figures, the fractions; absent means unknown.
    const Iteration& it = s.iterations[i];
    if (!row.latencyLabel.empty()) j["latencyLabel"] = row.latencyLabel;
    if (it.noise) {
      if (const auto& c = it.noise->latencyCi) j["latencyCi"] = json::array({c->lo, c->hi});
      if (const auto& c = it.noise->referenceCi) j["referenceCi"] = json::array({c->lo, c->hi});
      if (it.noise->samples) j["samples"] = *it.noise->samples;
    }
    auto versus = [&](const char* key, const std::optional<Comparison>& c) {
      if (!c) return;
      j[key] = versus_name(c->verdict);
      j[std::string(key) + "Pct"] = effect_figure(c->effectPct);
      if (c->verdict != Versus::unsure) j[std::string(key) + "Pm"] = effect_figure(c->pmPct);
    };
    versus("vsBest", row.vsBest);
    if (row.vsBest && it.bestBefore < s.iterations.size()) j["vsBestOf"] = it.bestBefore;
    versus("vsReference", row.vsReference);
    if (row.bandwidthFraction) j["bandwidthFraction"] = *row.bandwidthFraction;
    if (row.computeFraction) j["computeFraction"] = *row.computeFraction;
    if (row.bandwidthGbps) j["bandwidthGbps"] = *row.bandwidthGbps;
    rows.push_back(std::move(j));
  }
  o["rows"] = std::move(rows);
  return o;
}

}  // namespace kopt
