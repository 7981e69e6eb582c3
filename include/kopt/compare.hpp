// Comparing runs (sessions) side by side: what each run was (title, models, dates), its figures for
// the comparison table, whether their speedups may share one axis (the comparability rule, decided
// here and nowhere else), and the overlay's geometry, so that the tab and `kopt report A B …` only
// draw. docs/mode.md (对比 / Compare) and docs/report.md say what a reader sees.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/derived.hpp"
#include "kopt/json.hpp"
#include "kopt/run_facts.hpp"
#include "kopt/row_facts.hpp"
#include "kopt/series.hpp"

namespace kopt {

// RunFacts (a run's title, models, times) is the projection's: kopt/run_facts.hpp.

// How many sessions one comparison holds at most (the tab's picker and `kopt report` say so), and
// the least (a comparison of one session is refused).
inline constexpr std::size_t kCompareMax = 8;
inline constexpr std::size_t kCompareMin = 2;
// "Evaluations to reach 90 % of the run's best": the first evaluation whose speedup is at least
// this share of the best (latency ≤ best / kNearBest).
inline constexpr double kNearBest = 0.9;

// One run's row of the comparison, as the table shows it. Speedups are against the run's own pooled
// reference (J-3), or the run's own reported speedup where it has one, as its own tab labels them.
struct RunSummary {
  std::string id;     // the session id (tab) or the log's name (report)
  std::string error;  // non-empty: the run could not be read (the row keeps the reason)
  bool loading = false;  // still being read (the tab asks again)
  RunFacts facts;
  std::size_t evaluations = 0;       // rows (every evaluation the projection drew)
  long long used = 0;                // completed optimization + over-budget evaluations (M-5)
  std::optional<long long> budget;   // the budget the last round stating one logged (DV-11)
  std::optional<std::size_t> best;   // I-1
  std::optional<double> bestSpeedup;  // as labelled (own reported, else pooled)
  // The finalized number (the chart's `final`): re-measured by the plugin, its gap to the agent's own.
  std::optional<FinalNumber> final;
  std::optional<FinalClaim> finalClaim;  // the deciding finalize call (H-8): the refusal, when refused
  bool finalSelfPlugin = false;  // the re-measured figure's first measurement was the plugin's evaluator's (DV-13)
  std::optional<std::size_t> nearBest;   // index of the first evaluation within kNearBest of the best
  std::optional<double> wallToBestMs;    // time of the best evaluation's result − the run's first time
  std::optional<double> reference;       // the pooled implied reference latency (J-3)
  std::optional<Drift> drift;            // J-4
  std::vector<std::string> referenceHashes;  // distinct reference_hash of its points, in order
  // The measured evaluations (latency positive and finite), for the overlay.
  struct Point {
    std::size_t index;
    double latency;
    std::optional<double> speedup;  // as labelled, when the run has a reference
    bool ok;                        // correct, no error (drawn filled and joined by the line)
  };
  std::vector<Point> points;
  std::vector<double> latencies;  // of the rows (NaN: none), for the table's figures
  // The latency labels of the best, the final and the near-best point as the table shows them, with the
  // point's interval where it carries one (latency_label, verdict.hpp: "1.234ms ± 0.8%"); "" when absent.
  std::string bestLabel, finalLabel, nearBestLabel;
  double fastest = 0, slowest = 0;  // of the points (0 when there are none)
  // The points as compare_text writes them, [index, latency, ok, speedup|null, label] each (the label with
  // the point's interval where it carries one, latency_label): they depend on the
  // run alone (never on the other runs or the axes), so they are written once per projection — for
  // a past session on the worker that read its log — and an answer only puts the runs' texts together.
  std::string pointsText;
};

// The SHA-256 of the reference a point was measured against, where the plugin's evaluator measured
// it (DV-13: `plugin` with its `sources`); no other point can vouch for the bytes it measured.
std::optional<std::string> reference_hash(const Iteration& it);

// Builds a row from a series (outline or full), its row facts, its phase counts and its facts.
RunSummary summarize_run(std::string id, SeriesView s, const RowTable& rows, long long used, RunFacts facts);
// The same with the phases derived here (the report; the tab's session keeps its own).
RunSummary summarize_run(std::string id, const Series& s, RunFacts facts);

// Whether the runs' speedups may share one axis. They may only when every readable run has a
// reference (reported a speedup), none drifts (J-4), their pooled references agree within
// kReferenceDriftRatio of each other, and no two reference hashes differ (a run measured against
// two reference files differs from itself). Otherwise the comparison is by latency, with the reasons.
struct CompareReason {
  std::string code;                  // "no-reference" | "drift" | "references-differ" | "hash-differs" | "hash-mixed" | "too-few"
  std::vector<std::size_t> sessions;  // the runs it names (indices into the comparison)
  double ratio = 0;                  // drift or reference ratio (max / min), when it has one
};
struct Comparability {
  bool speedup = false;
  std::vector<CompareReason> reasons;  // empty when speedup
};
Comparability comparability(const std::vector<const RunSummary*>& runs);
Comparability comparability(const std::vector<RunSummary>& runs);

// The comparison as the tab and the report read it:
//   {kind:"kopt-compare", max, axis:"speedup"|"latency", scale:"linear"|"log", reasons:[{code,
//   sessions, ratio?}], sessions:[{id, color, title?, models, supervisors, startMs?, endMs?, error?,
//   loading?, evaluations, used, budget?, best?{index, latencyMs, label, speedup?, speedupLabel?},
//   final?{index, latencyMs, label, remeasured, selfLatencyMs?, selfLabel?, selfPlugin?, gapPct?, gapFlag?},
//   nearBest?{index, latencyMs, label}, wallToBestMs?, reference?{latencyMs, label}, drift?{ratio,
//   minLabel, maxLabel, count}, referenceHashes}], chart:{width, height, plot, xTicks[{x,label}],
//   ticks[{y,label}], xLabelY, empty, frame{x0, dx, y0, dy}, series:[{session, color, reference?,
//   points:[[index, latencyMs, ok (1 | 0), speedup?]], best?{index, x, y}}]}}
// Each run keeps one colour (kComparePalette, by its place in the comparison). A point's axis value v
// is, higher is faster, reference / latency on a speedup axis (its run's own pooled reference, the
// series' `reference`) and 1 / latency on a latency axis; on a log axis log10 of that. It sits at
// x = x0 + dx·index, y = y0 + dy·v in viewBox units (as the chart's frame, docs/protocol.md). The latency
// is written to 7 significant digits, the speedup as labelled to 4. A point's item depends on its run
// alone, so it is written once per projection (RunSummary::pointsText) and an answer is put together
// in O(runs) on the host's thread, at five runs of 5k points as at five of 50.
struct CompareOptions {
  double width = 960, height = 340;
};
extern const char* const kComparePalette[kCompareMax];
json compare_json(const std::vector<RunSummary>& runs, const CompareOptions& opt = {});

// The words of a comparison that the tab and the comparison page both show, plain text (the page
// escapes them; compare_json carries them): a run's name "A · title" (its id without a title), and
// why the runs are not on one speedup axis (`why` a reason of compare_json, `sessions` its runs with
// their names and reference labels), in Chinese (`zh`) or English.
std::string compare_run_name(const std::string& title_or_id, std::size_t place);
std::string compare_reason_text(const json& why, const json& sessions, bool zh);
// The same as compact JSON text, written without building the tree (what the route sends); the runs
// by address (a session's row is not copied).
std::string compare_text(const std::vector<const RunSummary*>& runs, const CompareOptions& opt = {});

}  // namespace kopt
