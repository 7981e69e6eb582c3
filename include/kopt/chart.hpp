// Geometry of the evaluation curve (spec O, J): where every point, marker, tick and line goes, so the
// browser only draws. Higher is faster: ×speedup against the pooled reference when the run reports
// one, else 1/latency with latency labels; a log axis when measured latencies span more than 20×.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kopt/derived.hpp"
#include "kopt/json.hpp"
#include "kopt/labels.hpp"
#include "kopt/row_facts.hpp"
#include "kopt/series.hpp"
#include "kopt/text_rope.hpp"

namespace kopt {

struct ChartOptions {
  double width = 960;   // viewBox units
  double height = 300;
  // The phase split (M-5) judges each row against the budget its run logged (DV-11); `budget` is
  // used only when no round states one (0 = none), or for every row when `fixedBudget` (a what-if).
  long long budget = 0;
  bool fixedBudget = false;
  static ChartOptions from_json(const json& j);  // {width?, height?}, clamped to sane sizes
};

// The number formatters (format_latency, short_number, speedup_label) are the base's (kopt/labels.hpp).
// The axis helpers the chart and the comparison (compare.hpp) share:
// Y ticks of a displayed quantity q in [qlo, qhi] (×speedup when `speedup`, else a latency): round
// values at least 30 units apart (evenly spaced round steps on a linear speedup axis); `y_of` places
// q. (y, q) pairs from the bottom up.
std::vector<std::pair<double, double>> quantity_ticks(double qlo, double qhi, bool speedup, bool log_scale,
                                                      const std::function<double(double)>& y_of, double top, double bottom);
// The evaluation numbers (1-based) an x axis of `axis_n` evaluations labels: about ten at most.
std::vector<std::size_t> evaluation_ticks(std::size_t axis_n);

// The axes are stable so that a live chart only appends: above kExactSpan points the x axis spans
// a round number of iterations (…, 100, 125, 160, 200, 250, 320, 400, 500, 640, 800, 1000, …), and
// the y axis is a function of the fastest and slowest latency snapped outward to round values (log:
// eighths of a decade; linear: steps of 1, 2, 2.5, 5 × 10^k), never of the pooled reference. A new
// point that stays inside both leaves every earlier point where it was.
inline constexpr std::size_t kExactSpan = 64;

// The chart object (keys camelCase):
//   width, height, plot {left, top, right, bottom}, xStep (units per iteration),
//   frame {x0, dx, y0, dy} (point i with frame value v sits at x0 + dx·i, y0 + dy·v in viewBox
//   units; an unmeasured one at baselineY), empty,
//   mode "speedup" | "latency", scale "linear" | "log", ticks [{y, label}], xTicks [{x, label}],
//   points [{index, seq, v?, kind "ok" | "failed" | "unmeasured", pending?, failed?, label?,
//   speedupLabel?, bandwidthLabel?, computeLabel? (S-5: "62.3%" of the probed limits)}] (v: log10(latency) on a log scale, 1/latency on a linear one, for measured
//   points only: a point's item does not depend on the axes, so moving them changes only `frame`),
//   line (SVG path through the ok points in iteration order in frame units "M i v L i v …", to be
//   drawn under the frame's transform; "" when none),
//   markers {best {index, x, y} | null, finalized [{index, x, y}], profiled [{seq, x}]},
//   bestLine {y, label} | null, limitLine {y, latencyMs, label, index, above?, below?} (S-5, only when ★
//   carries native_metrics.bandwidth_fraction: the latency at which its bytes would move at the probed
//   bandwidth, held at the plot's edge when outside it), reference {latencyMs, label} | null, drift {min, max, ratio, count,
//   minLabel, maxLabel} | null, baselineY (where unmeasured points sit, below the axis),
//   phases ["optimization" | "over-budget" | "wrap-up" per iteration], rowRounds [index into the
//   series' rounds of the loop message in force for each iteration, or null], counts {optimization,
//   overBudget, wrapUp}, final {index, latencyMs, label, remeasured, selfReported? {index, latencyMs,
//   label}, gapPct?, gapFlag?} | null (the finalized number: the plugin's replay when there is one, else
//   the finalized point as reported; with a replay of a self-reported finalized point, that point and
//   the gap (replay / self − 1, in %), flagged beyond kFinalGapFlagPct), reviews [{round, key, n}: the
//   last kReviewsShown rounds with Round::reviewed(), newest first: index into the series' rounds, the
//   word that names it (kopt/labels.hpp) and the text of its {n} (Round::round_text: the number, or "—")].
// How many reviews the tab's card lists (the chart's `reviews`).
inline constexpr std::size_t kReviewsShown = 40;
json chart_json(const Series& s, const ChartOptions& opt = {});
// The same object as compact JSON text, exactly as js_stringify(chart_json(s, opt)) writes it,
// without building the tree.
std::string chart_json_text(const Series& s, const ChartOptions& opt = {});
void write_chart_json(std::string& out, const Series& s, const ChartOptions& opt = {});  // appends

// The chart of a series that moves on revision by revision (a session keeps one). Each write
// derives the axes and the short members again; the per-iteration lists (points, the line through
// the ok points, phases, rowRounds) are kept as TextRopes and rewritten only from the first item
// whose inputs changed, so an append formats only the new items and the text is handed out as
// shared pieces, never copied whole (docs/protocol.md, `chart.append`).
class ChartWriter {
 public:
  // `rows` must be the row facts of s.iterations; rows before `rows_same_before` must be those of
  // the previous write (0 when that is not known: every row is compared again; ignored on a
  // first write). `phases` must be updated for these rows, s.rounds and opt's budget; the write
  // takes its changes (the chart's phases and rounds in force are rewritten from them).
  void write(SeriesView s, const RowTable& rows, RowPhases& phases, const ChartOptions& opt, std::size_t rows_same_before = 0);
  // After a write: the first iteration whose item (point, phase or round in force) may differ from
  // the previous write's (never after the true first change; 0 after the first write or a change
  // of scale), and the first profile mark that differs (the shorter count when one list of marks is
  // a prefix of the other).
  std::size_t first_change() const { return first_change_; }
  std::size_t profiled_first_change() const { return profiled_first_change_; }
  // The chart as pieces to write in order (each immutable: valid for as long as it is held).
  void pieces(std::vector<TextPiece>& out);
  void write_to(std::string& out) const;
  // The chart for a reader holding one that agrees with it before iteration `from` (> 0) and
  // before profile mark `profiled_from`: the same object with "append":from and
  // "appendProfiled":profiled_from first, the three per-iteration arrays from `from` on,
  // markers.profiled from `profiled_from` on, and no `line` (the reader keeps its first items and
  // draws the line through the points of kind "ok").
  void write_append(std::string& out, std::size_t from, std::size_t profiled_from) const;
  std::size_t approx_bytes() const;

 private:
  // The stages of write(), in order (chart.cpp).
  struct Frame;  // one write's geometry and scale
  struct PointsWritten {
    std::size_t first_point;  // the first point whose item changed
    bool same_scale;          // the scale of the last write (its point texts could be kept)
    const char* before_line;  // the text between the points and the line
  };
  struct PhasesWritten {
    std::size_t first_phase, first_round;  // the first rows whose phase, round in force changed
  };
  Frame frame(const RowTable& rows, const ChartOptions& opt, std::size_t rows_same_before, std::string& head);
  PointsWritten points(SeriesView s, const RowTable& rows, const Frame& f, std::size_t rows_same_before);
  void ticks(const Frame& f, std::string& marks) const;
  void markers(SeriesView s, const Frame& f, std::string& marks) const;
  std::size_t profile(SeriesView s, const Frame& f);  // the first mark that changed
  PhasesWritten phases_and_rounds(const RowTable& rows, RowPhases& phases, const Frame& f, std::string& after_marks);
  std::string final_number(SeriesView s, const RowPhases& phases) const;

  // What a point's item is made of: equal inputs give equal text.
  struct Point {
    double seq = 0, latency = 0, speedup = 0;  // NaN where absent; speedup as labelled (own or pooled)
    std::string seq_text;                       // the seq when it is not a number
    unsigned flags = 0;                         // 1 measured, 2 ok, 4 pending, 8 bad
    // S: the latency's interval (NaN where none) and the point's labels with their figures (noise.hpp).
    double ci_lo = 0, ci_hi = 0;
    Versus vs_best = Versus::none, vs_ref = Versus::none;
    double best_pct = 0, best_pm = 0, ref_pct = 0, ref_pm = 0;
    std::uint32_t best_of = 0;
    double bw = 0, cf = 0;  // S-5: bandwidth_fraction, compute_fraction (NaN where absent)
    bool operator==(const Point& o) const;
  };
  std::vector<Point> points_;             // of the last write
  std::vector<std::size_t> ok_before_;    // ok points before each iteration (n + 1): items of line_
  std::vector<std::uint32_t> ci_before_;  // points with an interval before each iteration (n + 1)
  // Per-row facts in prefix form ([i] covers rows before i; n + 1 entries), taken on from the first
  // row that changed: the fastest and slowest measured latency.
  std::vector<double> lat_min_before_, lat_max_before_;
  std::vector<std::size_t> finalized_;  // the finalized rows, in order
  std::vector<double> suffix_min_;      // the smallest seq from each row on (for the profile marks)
  bool written_ = false, log_scale_ = false;
  double reference_ = 0;                  // the pooled reference of the last write (0: none)
  ImpliedReferences refs_;                // the pooled reference and its drift, kept up to date with the rows
  std::size_t first_pooled_ = 0;          // the first point labelled by the pooled reference (SIZE_MAX: none)
  std::size_t first_change_ = 0, profiled_first_change_ = 0;
  TextRope point_text_{","}, line_text_{" L"}, phase_text_{","}, round_text_{","};
  // The short parts around the lists: `{…"points":[`, `],"line":"M` (no M without a line),
  // `","ticks":…"profiled":[`, the marks, `]},"reference":…"phases":[`, `],"counts":…}`.
  TextPiece head_, before_line_, before_profiled_, profiled_, before_phases_, tail_;
  std::vector<std::size_t> profiled_ends_;  // just after each mark in profiled_
  // Each mark's seq and the row its search ended at (the first whose suffix minimum is at least
  // its seq), and the x axis the marks were placed on: a mark is placed again only when these move.
  std::vector<double> mark_seq_;
  std::vector<std::size_t> mark_at_;
  std::array<double, 6> marks_axis_{};
};

// The same from a series as it travels on the wire (the /series body or a vectors `series`).
// Reads the fields the chart needs, rounds with their counters included; tolerant of anything else.
// The in-memory loop state (`control`) is not read: the phases are the log's, so a live view and a
// replay after a restart draw the same.
json chart_json_from_wire(const json& series, const ChartOptions& opt = {});

// Where a chart object (chart_json) draws its points, in viewBox units.
struct ChartFrame {
  double x0 = 0, dx = 0, y0 = 0, dy = 0, baseline = 0;
  static ChartFrame of(const json& chart);
  double x(std::size_t index) const { return x0 + dx * static_cast<double>(index); }
  double y(const json& point) const;  // baseline for a point without a frame value
};

}  // namespace kopt
