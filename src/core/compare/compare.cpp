// Comparing runs: each run's facts and figures, and the comparability rule (compare.hpp).
#include "kopt/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "kopt/chart.hpp"
#include "kopt/events.hpp"
#include "kopt/utf16.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

std::optional<std::string> reference_hash(const Iteration& it) {
  if (!it.plugin || !it.sources || !it.sources->reference || it.sources->reference->sha256.empty()) return std::nullopt;
  return it.sources->reference->sha256;
}

RunSummary summarize_run(std::string id, SeriesView s, const RowTable& rows, long long used, RunFacts facts) {
  RunSummary r;
  r.id = std::move(id);
  r.facts = std::move(facts);
  const auto& rs = rows.rows;
  const std::size_t n = rs.size();
  r.evaluations = n;
  r.used = used;
  for (auto it = s.rounds.rbegin(); it != s.rounds.rend(); ++it)
    if (it->budget) {
      r.budget = *it->budget;
      break;
    }
  ImpliedReferences refs;
  refs.update(rows, 0);
  r.reference = refs.median();
  if (r.reference && !(*r.reference > 0)) r.reference.reset();
  r.drift = refs.drift(rows);
  r.latencies.assign(n, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    const RowFacts& f = rs[i];
    if (i < s.iterations.size())
      if (const auto h = reference_hash(s.iterations[i]);
          h && std::find(r.referenceHashes.begin(), r.referenceHashes.end(), *h) == r.referenceHashes.end())
        r.referenceHashes.push_back(*h);
    if (!f.measured()) continue;
    r.latencies[i] = f.latency;
    r.fastest = r.points.empty() ? f.latency : std::min(r.fastest, f.latency);
    r.slowest = std::max(r.slowest, f.latency);
    RunSummary::Point p{i, f.latency, std::nullopt, !f.has(RowFacts::kBad) && f.has(RowFacts::kCorrect)};
    if (r.reference) p.speedup = labelled_speedup(f, *r.reference);
    r.points.push_back(p);
  }
  r.finalClaim = final_claim(s.iterations, s.finalize);
  r.final = final_number(s.iterations, r.finalClaim);
  r.finalSelfPlugin = r.final && r.final->self && *r.final->self < s.iterations.size() && s.iterations[*r.final->self].plugin;
  // The overlay's items (compare_text): [index, latency to 7 significant digits, ok, speedup to 4
  // or null, the latency's label (latency_label: the tab shows it, never formats one of its own), and
  // the speedup's label (speedup_label) where there is a speedup].
  r.pointsText.reserve(r.points.size() * 44);
  char buf[32];
  for (const auto& p : r.points) {
    if (!r.pointsText.empty()) r.pointsText += ',';
    r.pointsText += '[';
    r.pointsText += std::to_string(p.index);
    int n = std::snprintf(buf, sizeof buf, ",%.7g,%d", p.latency, p.ok ? 1 : 0);
    r.pointsText.append(buf, static_cast<std::size_t>(std::clamp(n, 0, 31)));
    if (p.speedup) {
      n = std::snprintf(buf, sizeof buf, ",%.4g", *p.speedup);
      r.pointsText.append(buf, static_cast<std::size_t>(std::clamp(n, 0, 31)));
    } else {
      r.pointsText += ",null";
    }
    r.pointsText += ",\"";
    // Digits, a unit, a dot, "± " and "%": nothing JSON escapes. With the point's interval where it has one.
    r.pointsText += p.index < s.iterations.size() && s.iterations[p.index].latencyMs ? latency_label(s.iterations[p.index]) : format_latency(p.latency);
    r.pointsText += '"';
    if (p.speedup) {
      r.pointsText += ",\"";
      r.pointsText += speedup_label(*p.speedup);  // "×", digits, a dot, an exponent: nothing JSON escapes
      r.pointsText += '"';
    }
    r.pointsText += ']';
  }
  if (s.bestIndex && *s.bestIndex < n && rs[*s.bestIndex].measured()) {
    const std::size_t b = *s.bestIndex;
    r.best = b;
    if (r.reference) r.bestSpeedup = labelled_speedup(rs[b], *r.reference);
    // The first honest evaluation (I-1's kind: correct, measured, not a replay) within kNearBest of the best.
    const double reach = rs[b].latency / kNearBest;
    for (std::size_t i = 0; i <= b; ++i) {
      const RowFacts& f = rs[i];
      if (f.measured() && !f.replay() && !f.pending() && !f.has(RowFacts::kBad) && f.has(RowFacts::kCorrect) && f.latency <= reach) {
        r.nearBest = i;
        break;
      }
    }
    if (b < s.iterations.size() && std::isfinite(s.iterations[b].time) && r.facts.firstTime)
      r.wallToBestMs = std::max(0.0, s.iterations[b].time - *r.facts.firstTime);
  }
  // The table's latency labels, the point's interval with it (issue 49).
  auto label_of = [&](std::size_t i, double latency) {
    if (i < s.iterations.size() && s.iterations[i].latencyMs && *s.iterations[i].latencyMs == latency) return latency_label(s.iterations[i]);
    return format_latency(latency);
  };
  if (r.best) r.bestLabel = label_of(*r.best, r.latencies[*r.best]);
  if (r.nearBest) r.nearBestLabel = label_of(*r.nearBest, r.latencies[*r.nearBest]);
  if (r.final) r.finalLabel = label_of(r.final->index, r.final->latency);
  return r;
}

RunSummary summarize_run(std::string id, const Series& s, RunFacts facts) {
  const RowTable rows(s.iterations);
  RowPhases phases;
  phases.update(rows, s.rounds, 0, false, 0);
  return summarize_run(std::move(id), s, rows, phases.completed(), std::move(facts));
}

Comparability comparability(const std::vector<RunSummary>& runs) {
  std::vector<const RunSummary*> at;
  for (const auto& r : runs) at.push_back(&r);
  return comparability(at);
}

Comparability comparability(const std::vector<const RunSummary*>& at) {
  // By reference below: the rule reads each run's reference, drift, hashes and whether it drew.
  struct View {
    const std::vector<const RunSummary*>& at;
    const RunSummary& operator[](std::size_t i) const { return *at[i]; }
    std::size_t size() const { return at.size(); }
  } runs{at};
  Comparability c;
  // The runs the rule reads: read, and with at least one measured evaluation (a run with none has
  // nothing on either axis and cannot disagree).
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].error.empty() && !runs[i].loading && !runs[i].points.empty()) in.push_back(i);
  auto& why = c.reasons;
  for (std::size_t i : in)
    if (!runs[i].reference) why.push_back({"no-reference", {i}, 0});
  for (std::size_t i : in)
    if (runs[i].drift) why.push_back({"drift", {i}, runs[i].drift->ratio});
  for (std::size_t i : in)
    if (runs[i].referenceHashes.size() > 1) why.push_back({"hash-mixed", {i}, 0});
  // Two runs each measured against one reference file, and not the same one.
  for (std::size_t a = 0; a < in.size(); ++a)
    for (std::size_t b = a + 1; b < in.size(); ++b) {
      const auto &ha = runs[in[a]].referenceHashes, &hb = runs[in[b]].referenceHashes;
      if (ha.size() == 1 && hb.size() == 1 && ha[0] != hb[0]) why.push_back({"hash-differs", {in[a], in[b]}, 0});
    }
  // The pooled references, widest pair: they must agree as a run's own references must (J-4).
  std::optional<std::size_t> lo, hi;
  for (std::size_t i : in) {
    if (!runs[i].reference) continue;
    if (!lo || *runs[i].reference < *runs[*lo].reference) lo = i;
    if (!hi || *runs[i].reference > *runs[*hi].reference) hi = i;
  }
  if (lo && hi && *lo != *hi) {
    const double ratio = *runs[*hi].reference / *runs[*lo].reference;
    if (ratio >= kReferenceDriftRatio) why.push_back({"references-differ", {*lo, *hi}, ratio});
  }
  c.speedup = why.empty();
  return c;
}

}  // namespace kopt
