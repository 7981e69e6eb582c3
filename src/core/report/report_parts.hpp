// What the report's formats share (private to src/core/report/): the words and formatters
// (html_text.cpp), and the parts report_html assembles: the curve card (html_curve.cpp), the record
// table and the cards (html_tables.cpp).
#pragma once
#include "kopt/labels.hpp"
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "kopt/report.hpp"

namespace kopt::report_parts {

// Words: the text for `key` in `lang` ("" when unknown), with {name} placeholders to fill.
// The report's own words first, then the shared table's (kopt/labels.hpp: verdicts, provenance, the page words
// the tab shows too), the Chinese with the English beside as each word says.
const char* T(ReportLang lang, std::string_view key);
// A shared word (kopt/labels.hpp) without the English beside it: where the page has no room for both.
const char* word_alone(ReportLang lang, std::string_view key);
std::string fill(std::string s, std::initializer_list<std::pair<const char*, std::string>> subs);
// Formatters.
std::string num(double v);             // as JavaScript writes it
std::string utc_time(double ms);       // "?" outside ±100 000 years
std::string seq_text(const Seq& s);
std::string round_label(ReportLang lang, const Round& r);
// Reading the chart object.
double jnum(const json& j, const char* k, double dflt = 0);
std::string jstr(const json& j, const char* k);

// The page around the cards: doctype, CSP, style sheet, `<main>` (page_open), the footer (page_close).
void page_open(std::string& o, ReportLang lang, const std::string& title);
void page_close(std::string& o, ReportLang lang);

// The chips of the run's figures (phase split, best, final) and the curve card (the SVG curve, the
// reference note, the finalize gap).
void chips(std::string& o, const Report& r, ReportLang lang);
void curve_card(std::string& o, const Report& r, ReportLang lang);
// The record table and the cards.
void record_table(std::string& o, const Report& r, ReportLang lang);
void env_card(std::string& o, const Report& r, ReportLang lang);
void plans_card(std::string& o, const Report& r, ReportLang lang);
void reviews_card(std::string& o, const Report& r, ReportLang lang);
void notes_card(std::string& o, const Report& r, ReportLang lang);

}  // namespace kopt::report_parts
