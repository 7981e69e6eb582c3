// The labels the user reads, made once for the tab and the report (issue 48): numbers (a latency, a
// speedup, a duration), the verdict's tone, and one table of words (zh and en) for the verdict and
// the provenance of a row. The tab reads them from the body (`words` in the chart, `speedupLabel` per
// row); the report (src/core/report) reads the same functions and table. A base room: nothing here
// includes anything above src/core/base.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kopt {

// Number#toPrecision(p), as JavaScript writes it.
std::string to_precision(double v, int p);
// toPrecision(3) without trailing zeros: 2.50 → 2.5, 3.00 → 3 (axis values).
std::string short_number(double v);
// O-1: µs below 1 ms (3 significant digits), ms below 1 000 ms (4), else s (3), as toPrecision.
std::string format_latency(double ms);
// A speedup as the user reads it: three significant digits, written as a plain number
// (1234.5 → "×1230", 2.504 → "×2.5", 0.0001234 → "×0.000123").
std::string speedup_label(double v);
// A duration ("time to best", a session's span): "42s", "7 min", "2 h 5 min"; "?" past ±100 000 years.
std::string duration_label(double ms);
// The tone of a verdict's tag: ok, dim (pending, unknown), warn (evaluator), bad (anything else).
std::string_view verdict_tone(std::string_view verdict);

// One word of the shared table: `key` is "verdict.<v>" or "trust.<t>".
struct Word {
  const char* key;
  const char* zh;
  const char* en;
};
const std::vector<Word>& words();
// The word for `key` in zh or en; "" where the table has none.
const char* word(std::string_view key, bool zh);
// The verdicts, in table order, whose tone words_json lists.
const std::vector<const char*>& verdict_names();
// The table as one JSON object, {"zh":{key:word…},"en":{…},"tone":{verdict:tone…}} (js_stringify form).
std::string words_json();

}  // namespace kopt
