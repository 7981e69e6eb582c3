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
// A latency's interval [lo, hi] as the user reads it beside the latency (issue 49): "± 0.8%", the wider
// side of the interval around `ms` in % of `ms`, one decimal ("± <0.1%" below 0.05 %). An asymmetric
// interval is read as its wider side, so `ms ± x%` always holds the whole interval.
std::string interval_label(double ms, double lo, double hi);
// The latency with its interval: "1.234ms ± 0.8%" (format_latency, then interval_label).
std::string latency_interval_label(double ms, double lo, double hi);
// An effect between two measurements as the exports write it: "3.1% ± 0.8" (|pct| and pm, one decimal).
std::string effect_label(double pct, double pm);
// A fraction as a percentage, three significant digits: 0.6234 → "62.3%", 1.05 → "105%".
std::string fraction_label(double f);
// The tone of a verdict's tag: ok, dim (pending, unknown), warn (evaluator), bad (anything else).
std::string_view verdict_tone(std::string_view verdict);

// One word of the shared table: `key` is "verdict.<v>", "trust.<t>", "limit.<part>" (distance to the
// machine's limit, issue 49: the popover's "{pct} of memory bandwidth", the curve's limit line), "versus.<v>"
// (a comparison's short word, faster / same / slower / unsure), "md.<part>" (the markdown export's headers
// and notes), or a page word (`page`): a legend, header, chip, phase or review word that the tab and the
// HTML report both show (the tab's bundle carries them, written in at build time from page_words_json).
struct Word {
  const char* key;
  const char* zh;
  const char* en;
  // How the Chinese report puts the English beside the word: the separator between them, or nullptr for
  // the Chinese alone (a sentence, a tooltip).
  const char* beside = " ";
  bool page = false;
};
const std::vector<Word>& words();
// The word for `key` in zh or en; "" where the table has none.
const char* word(std::string_view key, bool zh);
// `text` with every `key` (a word's placeholder, e.g. limit.bandwidth's "{pct}") replaced by `value`.
std::string fill_word(std::string text, std::string_view key, std::string_view value);
// The verdicts, in table order, whose tone words_json lists.
const std::vector<const char*>& verdict_names();
// The words the tab draws (verdict.*, trust.* and limit.*) as one JSON object, {"zh":{key:word…},"en":{…},
// "tone":{verdict:tone…}} (js_stringify form); the export words (versus.*, md.*) are written by the core
// alone and stay out of the chart.
std::string words_json();
// The page words (Word::page) as {"zh":{key:word…},"en":{…}} (js_stringify form): what
// scripts/build-client.mjs writes into the tab's bundle, so the tab and the report read one table.
std::string page_words_json();

}  // namespace kopt
