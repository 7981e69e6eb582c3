// Offline report of a past session (`kopt report`): one self-contained HTML page (inline CSS, the
// curve as inline SVG from chart_json, no script, no external resource), and the run as CSV / JSON.
// Everything taken from the log is untrusted and goes through html_escape / csv_field.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/compare.hpp"
#include "kopt/config.hpp"
#include "kopt/events.hpp"
#include "kopt/json.hpp"
#include "kopt/projector.hpp"
#include "kopt/series.hpp"

namespace kopt {

// Text for HTML content and quoted attribute values: & < > " ' as entities; C0 controls other than
// tab / LF / CR, DEL and invalid UTF-8 become U+FFFD; bidi embedding / override / isolate controls
// (U+202A..U+202E, U+2066..U+2069) become a visible "[U+202E]" so a command cannot display reordered.
std::string html_escape(std::string_view s);

// One RFC 4180 field: quoted (quotes doubled) when it holds `,` `"` CR or LF, or has leading/trailing
// spaces; as is otherwise.
std::string csv_field(std::string_view s);
// A text field from the log for spreadsheets: a value starting with = + - @ tab or CR gets a
// leading ' so a spreadsheet does not evaluate it as a formula; then csv_field.
std::string csv_text(std::string_view s);
// A text from the log as one markdown table cell (GitHub-flavoured): invalid UTF-8 → U+FFFD, control
// characters (tab, CR, LF too) → a space, bidi controls → a visible "[U+202E]", ASCII punctuation that
// markdown reads (\ ` * _ [ ] < > | ~ ! & #) escaped with a backslash, so it cannot end the cell,
// open a link, an image, a tag or code; cut to `max_chars` code points with "…".
std::string markdown_cell(std::string_view s, std::size_t max_chars = 80);

enum class ReportLang { Zh, En };  // Zh: 中文 with English beside the labels; En: English only

struct ReportInput {
  Series series;
  std::string source;    // shown as the source (usually the log's file name)
  long long budget = 0;  // the loop budget for the phase split; 0 = the last round that states one
  LogReadStats read;     // how reading the log went (skipped lines, truncation)
  std::size_t malformedEvents = 0;
  std::optional<double> firstTimeMs, lastTimeMs;  // `time` of the first / last event read
  std::optional<std::string> task;                // the first user message (M-16), capped
  double generatedAtMs = 0;                       // 0: not shown
  RunFacts facts;                                 // title, models, times (for a comparison)
};

// Builds the input from a log file (a JSON array, session.jsonl or session.jsonl.zstd).
// False with `error` set when the file cannot be read.
bool load_report_input(const std::string& path, const ProjectionConfig& config, ReportInput& out, std::string& error);

// Per-row facts the three formats share.
struct ReportRow {
  std::string phase;                    // "optimization" | "over-budget" | "wrap-up"
  std::string verdict;                  // pending | hack | evaluator | compile | error | ok | wrong | unknown
  std::string trust;                    // "plugin" | "tool" | "self-reported" | "job" | "replay" (verdict.hpp)
  std::optional<std::size_t> plan;      // index into plans: the approach in force (the last plan logged before)
  std::optional<std::size_t> round;     // index into rounds: the loop round the evaluation ran in
  std::optional<double> pooledSpeedup;  // pooled reference latency (J-3) / latency, when both exist
  // Issue 49, spec S: the point against the ★ before it (Iteration::bestBefore) and against its own
  // reference, with the figures (versus_best / versus_reference, derived.hpp); absent where the point has
  // no label (no interval, not an honest measurement, nothing to compare).
  std::optional<Comparison> vsBest, vsReference;
  std::string latencyLabel;  // latency_label (verdict.hpp): "1.234ms ± 0.8%"; "" without a latency
  // From the point's native_metrics (bandwidth_fraction, compute_fraction, bandwidth_gbps), where it
  // carries them: absent means unknown (an empty cell), never zero.
  std::optional<double> bandwidthFraction, computeFraction, bandwidthGbps;
};

struct Report {
  ReportInput in;
  long long budget = 0;  // effective
  json chart;            // chart_json(series)
  std::vector<ReportRow> rows;
};

Report build_report(ReportInput in);

std::string report_html(const Report& r, ReportLang lang = ReportLang::Zh);
// Header line plus one line per evaluation, CRLF line ends (RFC 4180).
std::string report_csv(const Report& r);
// {kind, version, source, budget, summary, series, chart, rows}.
json report_json(const Report& r);
// The measured points as one markdown table (nvbench's style), to paste into a pull request: a title
// line, one row per evaluation with a latency (#, approach, latency, interval, samples, vs ★, vs
// reference, speedup, bandwidth) and a legend; the words are the shared table's (kopt/labels.hpp, md.*
// and versus.*). docs/report.md.
std::string report_markdown(const Report& r, ReportLang lang = ReportLang::Zh);

// Several runs compared on one self-contained page (`kopt report A B …`): compare_json's overlay,
// legend, verdict of the comparability rule and table, drawn as the tab draws them; inert like
// report_html. `generated_at_ms` 0: not shown.
std::string compare_html(const json& comparison, ReportLang lang = ReportLang::Zh, double generated_at_ms = 0);
// A comparison's words (a run's name, why the runs are not on one axis) are compare's (compare.hpp).

}  // namespace kopt
