// Geometry of the evaluation curve (spec O, J): where every point, marker, tick and line goes, so the
// browser only draws. Higher is faster: ×speedup against the pooled reference when the run reports
// one, else 1/latency with latency labels; a log axis when measured latencies span more than 20×.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/derived.hpp"
#include "kopt/json.hpp"
#include "kopt/series.hpp"

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

// The finalize gap (re-measured vs self-reported latency) is flagged beyond this many percent.
inline constexpr double kFinalGapFlagPct = 10.0;

// O-1: µs below 1 ms (3 significant digits), ms below 1 000 ms (4), else s (3), as toPrecision.
std::string format_latency(double ms);

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
//   speedupLabel?}] (v: log10(latency) on a log scale, 1/latency on a linear one, for measured
//   points only: a point's item does not depend on the axes, so moving them changes only `frame`),
//   line (SVG path through the ok points in iteration order in frame units "M i v L i v …", to be
//   drawn under the frame's transform; "" when none),
//   markers {best {index, x, y} | null, finalized [{index, x, y}], profiled [{seq, x}]},
//   bestLine {y, label} | null, reference {latencyMs, label} | null, drift {min, max, ratio, count,
//   minLabel, maxLabel} | null, baselineY (where unmeasured points sit, below the axis),
//   phases ["optimization" | "over-budget" | "wrap-up" per iteration], rowRounds [index into the
//   series' rounds of the loop message in force for each iteration, or null], counts {optimization,
//   overBudget, wrapUp}, final {index, latencyMs, label, remeasured, selfReported? {index, latencyMs,
//   label}, gapPct?, gapFlag?} | null (the finalized number: the plugin's replay when there is one, else
//   the finalized point as reported; with a replay of a self-reported finalized point, that point and
//   the gap (replay / self − 1, in %), flagged beyond kFinalGapFlagPct).
json chart_json(const Series& s, const ChartOptions& opt = {});
// The same object as compact JSON text, exactly as js_stringify(chart_json(s, opt)) writes it,
// without building the tree (the /series body embeds it once per revision).
std::string chart_json_text(const Series& s, const ChartOptions& opt = {});
void write_chart_json(std::string& out, const Series& s, const ChartOptions& opt = {});  // appends

// Where the per-iteration arrays (points, phases, rowRounds) and the `line` member sit in a
// chart's text, in bytes from its first `{`: so that the next chart can be compared item by item
// and sent from the first item that changed (docs/protocol.md, `chart.append`).
struct ChartLayout {
  struct Items {
    std::size_t open = 0;            // just after `[`
    std::size_t close = 0;           // at `]`
    std::vector<std::size_t> ends;   // just after item i
    std::size_t start(std::size_t i) const;  // where item i (< ends.size()) begins
    std::string_view item(std::string_view text, std::size_t i) const;
  };
  Items points, phases, rowRounds;
  Items profiled;  // markers.profiled: one item per profile, not per point (appended on its own)
  std::size_t line_begin = 0, line_end = 0;  // the `,"line":"…"` member
};
void write_chart_json(std::string& out, const Series& s, const ChartOptions& opt, ChartLayout& layout);
// What the last chart written with it was made of, so that the next write formats only the points
// whose inputs changed and copies the others' text from the previous chart (a session keeps one).
struct ChartMemo {
  struct Point {
    double seq = 0, latency = 0, speedup = 0;  // NaN where absent; speedup as labelled (own or pooled)
    std::string seq_text;                       // the seq when it is not a number
    unsigned flags = 0;
    bool operator==(const Point& o) const;
  };
  std::vector<Point> points;
  std::vector<std::size_t> line_at;  // where each point's piece of `line` starts in its text (n + 1)
  bool log_scale = false;            // the scale the frame values were written for
  std::vector<Phase> phases;        // each iteration's phase code
  std::vector<long long> row_rounds;  // each iteration's round in force, -1 for none
  bool valid = false;
  // Set by each write: the first iteration whose item (point, phase or round in force) may differ
  // from the previous chart's, or kUnknown when the scale changed (then compare the texts:
  // chart_first_change). Never after the true first change.
  static constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);
  std::size_t first_change = kUnknown;
};
// The same chart as write_chart_json; `prev_text` and `prev_layout` must be the chart last written
// with `memo` (ignored while memo.valid is false). Updates `memo`.
// `rows` must be the row facts of s.iterations (a session keeps them up to date: RowTable::update).
void write_chart_json(std::string& out, const Series& s, const RowTable& rows, const ChartOptions& opt, ChartLayout& layout,
                      ChartMemo& memo, std::string_view prev_text, const ChartLayout& prev_layout);
// The first iteration at which chart `b` differs from chart `a` in any per-iteration item; the
// shorter length when one is a prefix of the other (`b` only appended).
std::size_t chart_first_change(std::string_view a, const ChartLayout& la, std::string_view b, const ChartLayout& lb);
// The first profile mark of chart b that differs from chart a's; the shorter count when one list is a
// prefix of the other (a's when b only adds marks).
std::size_t profiled_first_change(std::string_view a, const ChartLayout& la, std::string_view b, const ChartLayout& lb);
// Chart `b` for a reader holding a chart that agrees with it before iteration `from` (> 0) and
// before profile mark `profiled_from`: the same object with "append":from and
// "appendProfiled":profiled_from first, the three per-iteration arrays from `from` on,
// markers.profiled from `profiled_from` on, and no `line` (the reader keeps its first items and
// draws the line through the points of kind "ok").
void write_chart_append(std::string& out, std::string_view b, const ChartLayout& lb, std::size_t from,
                        std::size_t profiled_from);

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
