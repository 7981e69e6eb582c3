// kopt report: escaping of hostile strings, RFC 4180 quoting, the page's structure and counts that
// match the series, the CSV / JSON exports, session.jsonl.zstd input and the command line.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "kopt/labels.hpp"
#include "kopt/report.hpp"
#include "kopt/verdict.hpp"
#include "report_command.hpp"
#include "test_events.hpp"
#include "test_files.hpp"

namespace {

const std::string kZ03 = std::string(KOPT_FIXTURES_DIR) + "/vectors/z03-large-60-evals.events.json";
const std::string kZ01 = std::string(KOPT_FIXTURES_DIR) + "/vectors/z01-large-shell-job-mix.events.json";
const std::string kHostile = std::string(KOPT_SOURCE_DIR) + "/tests/report/hostile.events.json";

using kopt_test::count;
using kopt_test::slurp;
using kopt_test::TempDir;

kopt::Report report_of(const std::string& path, long long budget = 0) {
  kopt::ReportInput in;
  std::string err;
  EXPECT_TRUE(kopt::load_report_input(path, {}, in, err)) << err;
  in.budget = budget;
  return kopt::build_report(std::move(in));
}

// A strict RFC 4180 reader: records of fields, CRLF line ends, quoted fields with doubled quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, bool& ok) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  ok = true;
  std::size_t i = 0;
  bool at_field_start = true;
  while (i < text.size()) {
    if (at_field_start && text[i] == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) return ok = false, rows;
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
      at_field_start = false;
      if (i < text.size() && text[i] != ',' && text[i] != '\r') return ok = false, rows;
      continue;
    }
    const char c = text[i];
    if (c == ',') {
      row.push_back(field), field.clear(), at_field_start = true, ++i;
    } else if (c == '\r') {
      if (i + 1 >= text.size() || text[i + 1] != '\n') return ok = false, rows;
      row.push_back(field), field.clear(), rows.push_back(row), row.clear(), at_field_start = true, i += 2;
    } else if (c == '\n' || c == '"') {
      return ok = false, rows;  // a bare LF or a quote inside an unquoted field
    } else {
      field += c, at_field_start = false, ++i;
    }
  }
  if (!row.empty() || !field.empty()) return ok = false, rows;  // last record must end with CRLF
  return rows;
}

const std::string kScript = "<script>document.title='PWNED'</script>";
const std::string kImg = "\"><img src=x onerror=\"document.title='PWNED'\">";
const std::string kStyle = "</style><style>body{display:none}</style>";

}  // namespace

// ───────────────────────────── escaping ─────────────────────────────

TEST(Report, HtmlEscapeMarkupCharacters) {
  EXPECT_EQ(kopt::html_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(kopt::html_escape(kScript), "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;");
  EXPECT_EQ(kopt::html_escape(kImg), "&quot;&gt;&lt;img src=x onerror=&quot;document.title=&#39;PWNED&#39;&quot;&gt;");
  EXPECT_EQ(kopt::html_escape("&amp;"), "&amp;amp;") << "already-escaped text is escaped again, not trusted";
  EXPECT_EQ(kopt::html_escape(""), "");
}

TEST(Report, HtmlEscapeKeepsTextAndWhitespace) {
  EXPECT_EQ(kopt::html_escape("最佳 Best ×1.5 µs 🚀"), "最佳 Best ×1.5 µs 🚀");
  EXPECT_EQ(kopt::html_escape("a\tb\nc\r\n"), "a\tb\nc\r\n");
}

TEST(Report, HtmlEscapeControlsAndInvalidUtf8BecomeReplacement) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(kopt::html_escape(std::string("a\0b", 3)), "a" + fffd + "b");
  EXPECT_EQ(kopt::html_escape("\x01\x1b[31m\x7f"), fffd + fffd + "[31m" + fffd);
  EXPECT_EQ(kopt::html_escape("\xff"), fffd);
  EXPECT_EQ(kopt::html_escape("\xC0\xBC"), fffd + fffd) << "an overlong '<' must not decode to '<'";
  EXPECT_EQ(kopt::html_escape("\xED\xA0\x80"), fffd + fffd + fffd) << "UTF-16 surrogates are not UTF-8";
  EXPECT_EQ(kopt::html_escape("\xE4\xB8"), fffd + fffd) << "truncated sequence";
  EXPECT_EQ(kopt::html_escape("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd) << "beyond U+10FFFF";
}

TEST(Report, HtmlEscapeShowsBidiControls) {
  EXPECT_EQ(kopt::html_escape("rm \u202E#txt.exe"), "rm [U+202E]#txt.exe");
  EXPECT_EQ(kopt::html_escape("\u2066x\u2069"), "[U+2066]x[U+2069]");
  EXPECT_EQ(kopt::html_escape("\u200F"), "\u200F") << "marks that cannot reorder a run are kept";
}

// ───────────────────────────── CSV ─────────────────────────────

TEST(Report, CsvFieldQuotingRfc4180) {
  EXPECT_EQ(kopt::csv_field("plain"), "plain");
  EXPECT_EQ(kopt::csv_field(""), "");
  EXPECT_EQ(kopt::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(kopt::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(kopt::csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(kopt::csv_field("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(kopt::csv_field(" padded "), "\" padded \"");
  EXPECT_EQ(kopt::csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(kopt::csv_field("中文,逗号"), "\"中文,逗号\"");
}

TEST(Report, CsvTextGuardsSpreadsheetFormulas) {
  EXPECT_EQ(kopt::csv_text("=1+1"), "'=1+1");
  EXPECT_EQ(kopt::csv_text("+x"), "'+x");
  EXPECT_EQ(kopt::csv_text("-x"), "'-x");
  EXPECT_EQ(kopt::csv_text("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(kopt::csv_text("=HYPERLINK(\"u\",\"x\")"), "\"'=HYPERLINK(\"\"u\"\",\"\"x\"\")\"");
  EXPECT_EQ(kopt::csv_text("python bench.py"), "python bench.py");
  EXPECT_EQ(kopt::csv_text("a=b"), "a=b");
}

TEST(Report, CsvOfZ03IsStrictRfc4180WithOneRecordPerEvaluation) {
  const auto r = report_of(kZ03);
  bool ok = false;
  const auto rows = parse_csv(kopt::report_csv(r), ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(rows.size(), r.in.series.iterations.size() + 1);
  const auto& head = rows[0];
  EXPECT_EQ(head[0], "index");
  for (const auto& row : rows) ASSERT_EQ(row.size(), head.size());
  auto col = [&](const char* name) {
    for (std::size_t k = 0; k < head.size(); ++k)
      if (head[k] == name) return k;
    ADD_FAILURE() << name;
    return std::size_t{0};
  };
  const auto phases = kopt::evaluation_phases(r.in.series, r.budget);
  std::size_t best_rows = 0;
  for (std::size_t i = 0; i < r.in.series.iterations.size(); ++i) {
    const auto& it = r.in.series.iterations[i];
    const auto& row = rows[i + 1];
    EXPECT_EQ(row[col("index")], std::to_string(i + 1));
    EXPECT_EQ(row[col("phase")], phases[i]);
    EXPECT_EQ(row[col("latencyMs")], it.latencyMs ? kopt::js_number(*it.latencyMs) : "");
    EXPECT_EQ(row[col("command")], it.fullCommand);
    EXPECT_EQ(row[col("trust")], it.is_replay() ? "replay" : it.channel ? (it.jobId ? "job" : "self-reported") : "tool");
    best_rows += row[col("best")] == "true";
  }
  EXPECT_EQ(best_rows, r.in.series.bestIndex ? 1u : 0u);
}

// ───────────────────────────── the page ─────────────────────────────

// Spec S: the report's curve draws each point's interval as the tab does (one path of whiskers in frame
// units, under the line's transform), and a point's tooltip names its interval.
TEST(Report, CurveDrawsTheIntervalsAsWhiskers) {
  const auto r = report_of(std::string(KOPT_FIXTURES_DIR) + "/vectors/s01-compare-rule-labels.events.json");
  std::size_t with_ci = 0;
  for (const auto& p : r.chart["points"]) with_ci += p.contains("ci");
  ASSERT_GT(with_ci, 0u);
  const std::string html = kopt::report_html(r);
  EXPECT_NE(html.find("data-kopt=\"whiskers\" data-n=\"" + std::to_string(with_ci) + "\""), std::string::npos);
  EXPECT_EQ(count(html, "<path class=\"whisker\""), 1u);
  const auto first = std::find_if(r.chart["points"].begin(), r.chart["points"].end(), [](const kopt::json& p) { return p.contains("ciLabel"); });
  ASSERT_NE(first, r.chart["points"].end());
  EXPECT_NE(html.find("[" + (*first)["ciLabel"].get<std::string>() + "]"), std::string::npos);
  // A run without intervals draws none.
  EXPECT_EQ(kopt::report_html(report_of(kZ03)).find("data-kopt=\"whiskers\""), std::string::npos);
}

TEST(Report, HtmlStructureIsSelfContained) {
  const auto r = report_of(kZ03);
  const std::string html = kopt::report_html(r);
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(html.find("<html lang=\"zh-CN\">"), std::string::npos);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "<link"), 0u);
  EXPECT_EQ(count(html, "<img"), 0u);
  EXPECT_EQ(count(html, "url("), 0u);
  EXPECT_EQ(count(html, "@import"), 0u);
  EXPECT_EQ(count(html, "src="), 0u);
  // The only absolute URL is the SVG namespace.
  EXPECT_EQ(count(html, "http://") + count(html, "https://"), 1u);
  EXPECT_EQ(count(html, "http://www.w3.org/2000/svg"), 1u);
  EXPECT_EQ(count(html, "<style>"), 1u);
  EXPECT_EQ(count(html, "</style>"), 1u);
  EXPECT_NE(html.find("Noto Sans CJK SC"), std::string::npos) << "system font stack with CJK fonts";
  for (const char* part : {"data-kopt=\"chips\"", "data-kopt=\"curve\"", "data-kopt=\"chart\"", "data-kopt=\"records\"",
                           "data-kopt=\"env\"", "data-kopt=\"plans\"", "data-kopt=\"reviews\"", "data-kopt=\"task\"",
                           "data-kopt=\"denominator\"", "</html>"})
    EXPECT_NE(html.find(part), std::string::npos) << part;
  EXPECT_NE(html.find("最佳 Best"), std::string::npos);
}

TEST(Report, HtmlCountsMatchTheSeries) {
  const auto r = report_of(kZ03);
  const auto& s = r.in.series;
  const std::string html = kopt::report_html(r);
  ASSERT_EQ(s.iterations.size(), 57u) << "z03: 60 evaluations, identical failure lines merge (G-4)";
  EXPECT_EQ(r.budget, 60) << "the budget comes from the rounds' counters";
  EXPECT_EQ(count(html, "data-kopt=\"point\""), s.iterations.size());
  EXPECT_EQ(count(html, "data-kopt=\"row\""), s.iterations.size());
  EXPECT_NE(html.find("data-kopt=\"points\" data-n=\"57\""), std::string::npos);
  for (std::size_t i = 1; i <= s.iterations.size(); ++i) {
    EXPECT_NE(html.find("<tr id=\"e" + std::to_string(i) + "\""), std::string::npos) << i;
    EXPECT_NE(html.find("href=\"#e" + std::to_string(i) + "\""), std::string::npos) << i;
  }
  // Chips: the counts of the chart's phase split (M-5), which must agree with evaluation_phases.
  const auto phases = kopt::evaluation_phases(s, r.budget);
  long long opt = 0, over = 0, wrap = 0;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (s.iterations[i].pending) continue;
    (phases[i] == "wrap-up" ? wrap : phases[i] == "over-budget" ? over : opt)++;
  }
  auto chip = [&](const std::string& name) {
    const std::regex re("data-kopt=\"" + name + "\"[^>]*><b>([^<]*)</b>");
    std::smatch m;
    EXPECT_TRUE(std::regex_search(html, m, re)) << name;
    return m.size() > 1 ? m[1].str() : std::string();
  };
  EXPECT_EQ(chip("chip-opt"), std::to_string(opt));
  EXPECT_EQ(chip("chip-over"), std::to_string(over));
  EXPECT_EQ(chip("chip-wrap"), std::to_string(wrap));
  EXPECT_EQ(opt + over + wrap, static_cast<long long>(s.iterations.size()));
  ASSERT_TRUE(s.bestIndex.has_value());
  EXPECT_NE(chip("chip-best").find(kopt::format_latency(*s.iterations[*s.bestIndex].latencyMs)), std::string::npos);
  const auto& fin = r.chart["final"];
  ASSERT_TRUE(fin.is_object());
  EXPECT_NE(chip("chip-final").find(fin["label"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find(fin["remeasured"].get<bool>() ? "data-kopt=\"remeasured\"" : "data-kopt=\"not-remeasured\""),
            std::string::npos);
  // Trust levels, one tag per row.
  std::size_t tool = 0, self = 0, replay = 0, job = 0;
  for (const auto& it : s.iterations) (it.is_replay() ? replay : it.channel ? (it.jobId ? job : self) : tool)++;
  EXPECT_EQ(count(html, "data-kopt=\"trust-job\""), job);
  EXPECT_EQ(count(html, "data-kopt=\"trust-tool\""), tool);
  EXPECT_EQ(count(html, "data-kopt=\"trust-self-reported\""), self);
  EXPECT_EQ(count(html, "data-kopt=\"trust-replay\""), replay);
  EXPECT_GT(tool, 0u);
  EXPECT_GT(self, 0u);
  // Supervision records: one per reviewed round, a failed review included.
  std::size_t reviewed = 0;
  for (const auto& rd : s.rounds) reviewed += rd.reviewed();
  EXPECT_EQ(count(html, "data-kopt=\"review\""), reviewed);
}

TEST(Report, BudgetOverrideMovesThePhaseSplit) {
  // --budget N is a what-if over the whole log: it overrides the budgets the rounds state (60).
  const auto r = report_of(kZ03, 20);
  EXPECT_EQ(r.budget, 20);
  const auto phases = kopt::evaluation_phases_fixed(r.in.series, 20);
  EXPECT_EQ(r.chart["phases"], kopt::json(phases));
  EXPECT_EQ(report_of(kZ03).chart["phases"], kopt::json(kopt::evaluation_phases(r.in.series, 0)));
  long long over = 0;
  for (const auto& p : phases) over += p == "over-budget";
  ASSERT_GT(over, 0);
  EXPECT_EQ(r.chart["counts"]["overBudget"].get<long long>(), over);
  const std::string html = kopt::report_html(r);
  EXPECT_NE(html.find("data-kopt=\"band-over-budget\""), std::string::npos);
}

TEST(Report, DriftWarningAndDenominatorNote) {
  // z01 mixes channels whose implied references disagree; the page says so when the core does.
  for (const auto& path : {kZ01, kZ03}) {
    const auto r = report_of(path);
    const std::string html = kopt::report_html(r);
    EXPECT_EQ(html.find("data-kopt=\"drift\"") != std::string::npos, r.chart["drift"].is_object()) << path;
    EXPECT_EQ(html.find("data-kopt=\"denominator\"") != std::string::npos, r.chart["reference"].is_object()) << path;
  }
}

TEST(Report, EnglishPageHasNoChineseLabels) {
  const auto r = report_of(kZ03);
  const std::string html = kopt::report_html(r, kopt::ReportLang::En);
  EXPECT_NE(html.find("<html lang=\"en\">"), std::string::npos);
  EXPECT_NE(html.find("Kernel optimization report"), std::string::npos);
  for (const char* zh : {"最佳", "评测", "优化", "监督", "环境"}) EXPECT_EQ(html.find(zh), std::string::npos) << zh;
}

TEST(Report, EmptyLogStillRenders) {
  const auto r = report_of(std::string(KOPT_FIXTURES_DIR) + "/vectors/a01-empty-log.events.json");
  const std::string html = kopt::report_html(r);
  EXPECT_EQ(count(html, "data-kopt=\"point\""), 0u);
  EXPECT_EQ(count(html, "data-kopt=\"row\""), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(kopt::report_csv(r).find("\r\n") + 2, kopt::report_csv(r).size()) << "header only";
}

// ───────────────────────────── hostile logs ─────────────────────────────

TEST(Report, AbsurdTimesAndBudgetsRender) {
  kopt::ReportInput in;
  in.source = "t";
  in.firstTimeMs = -1e300;
  in.lastTimeMs = 1e300;
  in.generatedAtMs = 1e19;
  in.budget = 9223372036854775807LL;
  const std::string html = kopt::report_html(kopt::build_report(std::move(in)));
  EXPECT_NE(html.find("?"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(Report, HostileStringsAreEscapedEverywhere) {
  const auto r = report_of(kHostile);
  const auto& s = r.in.series;
  ASSERT_EQ(s.iterations.size(), 4u);
  ASSERT_EQ(s.plans.size(), 1u);
  ASSERT_EQ(s.envs.size(), 1u);
  ASSERT_EQ(s.rounds.size(), 2u);
  for (auto lang : {kopt::ReportLang::Zh, kopt::ReportLang::En}) {
    const std::string html = kopt::report_html(r, lang);
    EXPECT_EQ(count(html, "<script"), 0u);
    EXPECT_EQ(count(html, "<img"), 0u);
    EXPECT_EQ(count(html, "</style>"), 1u);
    EXPECT_EQ(count(html, "<style>"), 1u);
    EXPECT_EQ(count(html, "<!--"), 0u);
    EXPECT_EQ(count(html, "<b>explore"), 0u);
    EXPECT_EQ(count(html, "<i>2.6"), 0u);
    EXPECT_EQ(count(html, "onerror=\"document"), 0u);
    EXPECT_EQ(count(html, "\u202E"), 0u);
    EXPECT_NE(html.find("[U+202E]"), std::string::npos);
    // Each hostile value shows up, escaped, where it belongs.
    EXPECT_NE(html.find(kopt::html_escape(kScript)), std::string::npos);
    EXPECT_NE(html.find(kopt::html_escape(kImg)), std::string::npos);
    EXPECT_NE(html.find(kopt::html_escape(kStyle)), std::string::npos);
    EXPECT_NE(html.find("&lt;b&gt;explore&lt;/b&gt;"), std::string::npos) << "plan phase";
    EXPECT_NE(html.find("&lt;b&gt;torch&lt;/b&gt; &lt;i&gt;2.6&lt;/i&gt;"), std::string::npos) << "env versions";
    EXPECT_NE(html.find("&lt;e1&gt;"), std::string::npos) << "evaluation id";
    EXPECT_NE(html.find("&lt;x&gt; 1"), std::string::npos) << "metric key";
    // Every attribute value is closed by the quote that opened it: no quote-breaking sequence survives.
    EXPECT_EQ(count(html, "' onmouseover='"), 0u);
    EXPECT_EQ(count(html, "\"><img"), 0u);
  }
}

TEST(Report, HostileCsvAndJsonRoundTrip) {
  const auto r = report_of(kHostile);
  const auto& s = r.in.series;
  bool ok = false;
  const auto rows = parse_csv(kopt::report_csv(r), ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(rows.size(), s.iterations.size() + 1);
  std::size_t cmd = 0, err = 0, review = 0;
  for (std::size_t k = 0; k < rows[0].size(); ++k) {
    if (rows[0][k] == "command") cmd = k;
    if (rows[0][k] == "error") err = k;
    if (rows[0][k] == "review") review = k;
  }
  EXPECT_EQ(rows[1][cmd], s.iterations[0].fullCommand) << "commas, quotes and markup survive quoting";
  ASSERT_TRUE(s.iterations[1].error.has_value());
  EXPECT_EQ(rows[2][err], "'" + *s.iterations[1].error) << "a formula is neutralised";
  EXPECT_EQ(rows[3][cmd], s.iterations[2].fullCommand) << "bidi controls are data in CSV";
  EXPECT_EQ(rows[2][review], *s.rounds[0].review) << "multi-line advice in one field";

  const auto j = kopt::parse_json(kopt::js_stringify(kopt::report_json(r)));
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["series"]["iterations"].size(), s.iterations.size());
  EXPECT_EQ((*j)["rows"].size(), s.iterations.size());
  EXPECT_EQ((*j)["rows"][0]["command"], s.iterations[0].fullCommand);
  EXPECT_EQ((*j)["rows"][3]["trust"], "replay");
  EXPECT_EQ((*j)["summary"]["final"]["remeasured"], true);
  EXPECT_EQ((*j)["source"]["task"].get<std::string>().find("<script>"), 9u);
}

// ───────────────────────────── input and command line ─────────────────────────────

TEST(Report, ReadsSessionJsonlZstd) {
  const auto events = kopt::parse_json(slurp(kZ03));
  ASSERT_TRUE(events && events->is_array());
  std::string jsonl;
  for (const auto& ev : *events) jsonl += ev.dump() + "\n";
  // Two frames, as DSH appends them.
  std::string packed;
  const std::size_t half = jsonl.find('\n', jsonl.size() / 2) + 1;
  for (const std::string& part : {jsonl.substr(0, half), jsonl.substr(half)}) {
    std::string buf(ZSTD_compressBound(part.size()), '\0');
    const std::size_t n = ZSTD_compress(buf.data(), buf.size(), part.data(), part.size(), 3);
    ASSERT_FALSE(ZSTD_isError(n));
    packed.append(buf.data(), n);
  }
  TempDir dir;
  const auto path = (dir.path / "session.jsonl.zstd").string();
  std::ofstream(path, std::ios::binary) << packed;
  const auto from_zstd = report_of(path);
  const auto from_json = report_of(kZ03);
  EXPECT_EQ(from_zstd.in.source, "session.jsonl.zstd");
  EXPECT_EQ(from_zstd.in.series.iterations.size(), from_json.in.series.iterations.size());
  EXPECT_EQ(kopt::report_csv(from_zstd), kopt::report_csv(from_json));
  EXPECT_TRUE(from_zstd.in.task.has_value());
  EXPECT_EQ(from_zstd.in.firstTimeMs, from_json.in.firstTimeMs);
}

TEST(Report, CommandWritesTheThreeFiles) {
  TempDir dir;
  const auto html = (dir.path / "run.html").string(), csv = (dir.path / "run.csv").string(),
             js = (dir.path / "run.json").string();
  ASSERT_EQ(kopt::report_command({kZ03, "-o", html, "--csv", csv, "--json", js, "--lang", "en"}), 0);
  const std::string page = slurp(html);
  EXPECT_NE(page.find("<html lang=\"en\">"), std::string::npos);
  EXPECT_EQ(count(page, "data-kopt=\"point\""), 57u);
  bool ok = false;
  EXPECT_EQ(parse_csv(slurp(csv), ok).size(), 58u);
  EXPECT_TRUE(ok);
  const auto j = kopt::parse_json(slurp(js));
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["kind"], "kopt-report");
  EXPECT_EQ((*j)["rows"].size(), 57u);
}

TEST(Report, CommandRejectsBadArguments) {
  EXPECT_EQ(kopt::report_command({}), 2);
  EXPECT_EQ(kopt::report_command({kZ03, "--lang", "fr"}), 2);
  EXPECT_EQ(kopt::report_command({kZ03, "--budget", "0"}), 2);
  EXPECT_EQ(kopt::report_command({kZ03, "--budget", "x"}), 2);
  EXPECT_EQ(kopt::report_command({kZ03, "--bogus"}), 2);
  EXPECT_EQ(kopt::report_command({"/nonexistent/session.jsonl", "-o", "/tmp/x.html"}), 1);
  TempDir dir;
  EXPECT_EQ(kopt::report_command({kZ03, "-o", (dir.path / "no/such/dir/run.html").string()}), 1);
}

// Layout at the edges, over every project vector and every prefix of the small ones: ⚑ (about 14 units wide)
// never passes the chart's right edge, the log-scale label sits at the right end (clear of the best label
// at the left), and a hollow point is clickable on its whole disc.
TEST(Report, MarkersAndLabelsStayClearOfTheEdges) {
  std::size_t flags = 0, logs = 0, frames = 0;
  double right_most = 0;
  // Every prefix of the small vectors too: a log cut right after a finalize puts ⚑ on the last point, at the
  // right edge.
  std::vector<std::string> logs_to_draw;
  const std::string cut = std::filesystem::temp_directory_path().string() + "/kopt-report-edge-" +
                          std::to_string(::getpid());
  std::filesystem::create_directories(cut);
  for (const auto& e : std::filesystem::directory_iterator(std::string(KOPT_FIXTURES_DIR) + "/vectors")) {
    const std::string path = e.path().string();
    if (path.size() < 12 || path.compare(path.size() - 12, 12, ".events.json") != 0) continue;
    logs_to_draw.push_back(path);
    const auto events = nlohmann::json::parse(slurp(path), nullptr, false);
    if (!events.is_array() || events.size() > 100) continue;
    for (std::size_t k = 1; k < events.size(); ++k) {
      const std::string p = cut + "/" + e.path().filename().string() + "." + std::to_string(k) + ".events.json";
      std::ofstream(p) << nlohmann::json(events.begin(), events.begin() + static_cast<long>(k)).dump();
      logs_to_draw.push_back(p);
    }
  }
  for (const auto& path : logs_to_draw) {
    const auto r = report_of(path);
    const std::string html = kopt::report_html(r);
    std::smatch vb;
    if (!std::regex_search(html, vb, std::regex("class=\"curve\" data-kopt=\"chart\" viewBox=\"0 0 ([0-9.]+) ")))
      continue;  // no points, no chart
    const double W = std::stod(vb[1]);
    const std::regex flag("data-kopt=\"finalized\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\">");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), flag); it != std::sregex_iterator(); ++it) {
      const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
      ++flags;
      right_most = std::max(right_most, x);
      EXPECT_LE(x + 14, W) << path << ": ⚑ at " << x << " passes the edge " << W;
      EXPECT_GE(y - 12, 0) << path << ": ⚑ at y " << y << " passes the top";
    }
    // The line is drawn under the chart's frame: a transform with a zero scale (one point) draws nothing.
    const std::regex frame("<g transform=\"matrix\\(([-0-9.e]+) 0 0 ([-0-9.e]+) ");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), frame); it != std::sregex_iterator(); ++it) {
      ++frames;
      EXPECT_NE(std::stod((*it)[1]), 0) << path;
      EXPECT_NE(std::stod((*it)[2]), 0) << path;
    }
    const std::regex log("data-kopt=\"log-scale\" x=\"([-0-9.]+)\" y=\"[-0-9.]+\" text-anchor=\"end\"");
    const auto anchored = std::distance(std::sregex_iterator(html.begin(), html.end(), log), std::sregex_iterator());
    EXPECT_EQ(anchored, static_cast<long>(count(html, "data-kopt=\"log-scale\""))) << path;
    logs += static_cast<std::size_t>(anchored);
  }
  EXPECT_GT(flags, 0u) << "some vector has a finalized point";
  EXPECT_GT(right_most, 900) << "some prefix puts ⚑ on the last point, at the right edge";
  EXPECT_GT(logs, 0u) << "some vector is drawn on a log scale";
  EXPECT_GT(frames, 0u) << "some chart has a line";
  std::filesystem::remove_all(cut);
  const std::string html = kopt::report_html(report_of(kZ03));
  EXPECT_NE(html.find("svg.curve .pt{pointer-events:all}"), std::string::npos);
}

// The finalize gap in the report's ⚑ chip, read from the core's chart.final: within 10 % shown plainly,
// beyond it flagged ⚠ (h08: 1.0 ms re-measured at 1.25 ms; the same log with the replay at 1.008 ms).
TEST(Report, FinalGapChip) {
  const std::string path = std::string(KOPT_FIXTURES_DIR) + "/vectors/h08-final-replay-gap.events.json";
  const std::string far = kopt::report_html(report_of(path));
  EXPECT_NE(far.find("data-kopt=\"final-gap\" data-flag=\"1\" class=\"nre\">⚠ "), std::string::npos);
  EXPECT_NE(far.find("+25%"), std::string::npos);  // 1.25 / 1.0 − 1
  std::string text = slurp(path);
  const std::string from = "\\\"latency_ms\\\":1.25,", to = "\\\"latency_ms\\\":1.008,";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), to);
  const std::string cut = std::filesystem::temp_directory_path().string() + "/kopt-report-gap-" +
                          std::to_string(::getpid()) + ".events.json";
  std::ofstream(cut) << text;
  const std::string near = kopt::report_html(report_of(cut));
  std::filesystem::remove(cut);
  EXPECT_NE(near.find("data-kopt=\"final-gap\" data-flag=\"0\">"), std::string::npos);
  EXPECT_NE(near.find("+0.8%"), std::string::npos);
}

// A refused finalize (H-8): the report's ⚑ chip says it was refused and why, and shows no number.
TEST(Report, RefusedFinalChip) {
  const std::string path = std::string(KOPT_FIXTURES_DIR) + "/vectors/h04-final-refused-wrong.events.json";
  const std::string html = kopt::report_html(report_of(path));
  EXPECT_NE(html.find("data-kopt=\"final-refused\""), std::string::npos);
  EXPECT_NE(html.find(kopt::final_refusal_words("wrong").en), std::string::npos);
  EXPECT_EQ(html.find("⚑ 1.000ms"), std::string::npos);
}

// ───────────────────────────── issue 49: intervals in the exports ─────────────────────────────

namespace {

const std::string kS01 = std::string(KOPT_FIXTURES_DIR) + "/vectors/s01-compare-rule-labels.events.json";

// The CSV as records keyed by the header's names.
struct Csv {
  std::vector<std::vector<std::string>> rows;
  std::string at(std::size_t row, const char* name) const {
    for (std::size_t k = 0; k < rows[0].size(); ++k)
      if (rows[0][k] == name) return rows[row + 1][k];
    ADD_FAILURE() << "no column " << name;
    return "?";
  }
};
Csv csv_of(const kopt::Report& r) {
  bool ok = false;
  Csv c{parse_csv(kopt::report_csv(r), ok)};
  EXPECT_TRUE(ok);
  for (const auto& row : c.rows) EXPECT_EQ(row.size(), c.rows[0].size());
  return c;
}

// Two evaluations through kernel_evaluate: one whose native_metrics carry the bandwidth and compute
// fractions, one that carries none of them.
kopt::Report fractions_report() {
  using kopt::json;
  namespace t = kopt::test;
  json events = json::array();
  events.push_back(t::call(1, "c1", "kernel_evaluate", json::object()));
  events.push_back(t::result(2, "c1", R"({"evaluation_id":"e1","correct":true,"latency_ms":0.5,"latency_ci_ms":[0.49,0.51],"samples":31,)"
                                      R"("native_metrics":{"bandwidth_fraction":0.6234,"bandwidth_gbps":812.5,"bytes_moved":406250000,"compute_fraction":0.125}})"));
  events.push_back(t::call(3, "c2", "kernel_evaluate", json::object()));
  events.push_back(t::result(4, "c2", R"({"evaluation_id":"e2","correct":true,"latency_ms":0.4,"native_metrics":{"trials":9}})"));
  kopt::Projector p;
  p.feed(events);
  kopt::ReportInput in;
  in.series = p.series();
  in.source = "fractions";
  return kopt::build_report(std::move(in));
}

}  // namespace

// s01: every point's interval and samples, its label against the ★ before it (which one, by the CSV's
// 1-based index) and against its reference, with the effect and its ± in percent; a point without an
// interval has empty cells, never zeros.
TEST(ReportExports, CsvCarriesIntervalsAndLabels) {
  const auto r = report_of(kS01);
  ASSERT_EQ(r.in.series.iterations.size(), 7u);
  const Csv c = csv_of(r);
  EXPECT_EQ(c.at(0, "latencyCiLo"), "1.98");
  EXPECT_EQ(c.at(0, "latencyCiHi"), "2.02");
  EXPECT_EQ(c.at(0, "samples"), "19");
  EXPECT_EQ(c.at(0, "vsBest"), "") << "the first measured point has nothing to compare with";
  EXPECT_EQ(c.at(1, "vsBest"), "faster");
  EXPECT_EQ(c.at(1, "vsBestOf"), "1");
  EXPECT_EQ(c.at(1, "vsBestPct"), "25");
  EXPECT_EQ(c.at(1, "vsBestPm"), "1");
  EXPECT_EQ(c.at(1, "vsReference"), "faster");
  EXPECT_EQ(c.at(1, "vsReferencePct"), "50");
  EXPECT_EQ(c.at(1, "referenceCiLo"), "2.97");
  EXPECT_EQ(c.at(1, "referenceCiHi"), "3.03");
  EXPECT_EQ(c.at(2, "vsBest"), "same");
  for (const char* k : {"latencyCiLo", "latencyCiHi", "samples", "vsBest", "vsBestOf", "vsBestPct", "vsReference"})
    EXPECT_EQ(c.at(3, k), "") << k << ": the point carries no interval";
  EXPECT_EQ(c.at(4, "vsBest"), "unsure");
  EXPECT_EQ(c.at(4, "vsBestOf"), "4");
  EXPECT_EQ(c.at(4, "vsBestPm"), "") << "unsure has no ±";
  EXPECT_EQ(c.at(5, "vsBest"), "") << "a wrong result is not labelled";
  EXPECT_EQ(c.at(5, "latencyCiLo"), "0.99");
  EXPECT_EQ(c.at(6, "vsBest"), "slower");
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(c.at(i, "bandwidthFraction"), "");
}

TEST(ReportExports, JsonRowsCarryIntervalsAndLabels) {
  const auto r = report_of(kS01);
  const auto j = kopt::parse_json(kopt::js_stringify(kopt::report_json(r)));
  ASSERT_TRUE(j.has_value());
  const auto& rows = (*j)["rows"];
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0]["latencyCi"], kopt::json::array({1.98, 2.02}));
  EXPECT_EQ(rows[0]["samples"], 19);
  EXPECT_EQ(rows[0]["latencyLabel"], "2.000ms ± 1.0%");
  EXPECT_FALSE(rows[0].contains("vsBest"));
  EXPECT_EQ(rows[1]["vsBest"], "faster");
  EXPECT_EQ(rows[1]["vsBestOf"], 0) << "0-based, as rows[i].index and the series' vsBestOf";
  EXPECT_EQ(rows[1]["vsBestPct"], 25);
  EXPECT_EQ(rows[1]["vsReference"], "faster");
  EXPECT_EQ(rows[1]["referenceCi"], kopt::json::array({2.97, 3.03}));
  EXPECT_EQ(rows[3]["latencyLabel"], "1.300ms");
  for (const char* k : {"latencyCi", "samples", "vsBest", "vsReference", "bandwidthFraction"}) EXPECT_FALSE(rows[3].contains(k)) << k;
  EXPECT_EQ(rows[4]["vsBest"], "unsure");
  EXPECT_FALSE(rows[4].contains("vsBestPm"));
  EXPECT_EQ(rows[6]["vsBest"], "slower");
}

// native_metrics' bandwidth_fraction / compute_fraction / bandwidth_gbps where a point carries them;
// absent means unknown: an empty cell and no key, never 0.
TEST(ReportExports, FractionsWhereCarriedEmptyWhereNot) {
  const auto r = fractions_report();
  ASSERT_EQ(r.in.series.iterations.size(), 2u);
  const Csv c = csv_of(r);
  EXPECT_EQ(c.at(0, "bandwidthFraction"), "0.6234");
  EXPECT_EQ(c.at(0, "computeFraction"), "0.125");
  EXPECT_EQ(c.at(0, "bandwidthGbps"), "812.5");
  EXPECT_EQ(c.at(0, "samples"), "31");
  for (const char* k : {"bandwidthFraction", "computeFraction", "bandwidthGbps", "samples", "latencyCiLo"}) EXPECT_EQ(c.at(1, k), "") << k;
  const auto j = kopt::report_json(r);
  EXPECT_EQ(j["rows"][0]["bandwidthFraction"], 0.6234);
  EXPECT_EQ(j["rows"][0]["computeFraction"], 0.125);
  EXPECT_EQ(j["rows"][0]["bandwidthGbps"], 812.5);
  for (const char* k : {"bandwidthFraction", "computeFraction", "bandwidthGbps"}) EXPECT_FALSE(j["rows"][1].contains(k)) << k;
  const std::string md = kopt::report_markdown(r, kopt::ReportLang::En);
  EXPECT_NE(md.find("| 500µs | ± 2.0% | 31 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 62.3% · 812 GB/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 ★ |  | 400µs |  |  |"), std::string::npos) << md;
}

TEST(ReportExports, MarkdownCellEscapesWhatMarkdownReads) {
  EXPECT_EQ(kopt::markdown_cell("tiled | 2x"), "tiled \\| 2x");
  EXPECT_EQ(kopt::markdown_cell("a\nb\tc\rd"), "a b c d");
  EXPECT_EQ(kopt::markdown_cell("[x](http://e) ![i](u) <b>`c`</b> *e* _f_ ~g~ &amp; #h \\"),
            "\\[x\\](http://e) \\!\\[i\\](u) \\<b\\>\\`c\\`\\</b\\> \\*e\\* \\_f\\_ \\~g\\~ \\&amp; \\#h \\\\");
  EXPECT_EQ(kopt::markdown_cell("rtl\xE2\x80\xAEtxt"), "rtl[U+202E]txt");
  EXPECT_EQ(kopt::markdown_cell("bad\xFFutf"), "bad\xEF\xBF\xBDutf");
  EXPECT_EQ(kopt::markdown_cell("向量化内核", 3), "向量化…");
  EXPECT_EQ(kopt::markdown_cell("abc", 3), "abc");
}

// The markdown table of s01: one row per measured point, ★ on the best, the labels in the shared words,
// in English without a Chinese character and in Chinese with the table's words.
TEST(ReportExports, MarkdownTableOfS01) {
  const auto r = report_of(kS01);
  const std::string en = kopt::report_markdown(r, kopt::ReportLang::En);
  EXPECT_EQ(en.rfind("### Kernel optimization run · s01-compare-rule-labels.events.json\n\n", 0), 0u) << en;
  EXPECT_NE(en.find("| # | approach | latency (median) | interval | samples | vs ★ | vs reference | speedup | bandwidth |\n"
                    "|--:|---|--:|--:|--:|---|---|--:|--:|\n"),
            std::string::npos)
      << en;
  EXPECT_NE(en.find("| 1 |  | 2.000ms | ± 1.0% | 19 |  |  | (×1.5) |  |\n"), std::string::npos) << "pooled speedup in parentheses" << en;
  EXPECT_NE(en.find("| 2 |  | 1.500ms | ± 0.1% | 25 | faster 25.0% ± 1.0 · #1 | faster 50.0% ± 1.0 | ×2 |  |\n"), std::string::npos) << en;
  EXPECT_NE(en.find("| 3 |  | 1.490ms | ± 0.1% | 25 | same within noise 0.7% ± 0.1 · #2 |"), std::string::npos) << en;
  EXPECT_NE(en.find("| 5 ★ |  | 1.200ms | ± 0.8% |  | unsure · #4 | unsure | ×2.5 |  |\n"), std::string::npos) << en;
  EXPECT_NE(en.find("| 6 | wrong result | 1.000ms |"), std::string::npos) << en;
  EXPECT_NE(en.find("| 7 |  | 1.400ms | ± 0.7% |  | slower"), std::string::npos) << en;
  std::size_t rows = 0;
  for (std::size_t at = en.find("\n| "); at != std::string::npos; at = en.find("\n| ", at + 1)) ++rows;
  EXPECT_EQ(rows, 1u + 7u) << "the header and one row per measured point";
  for (unsigned char ch : en) EXPECT_LT(ch, 0xE4) << "no CJK in the English table";
  const std::string zh = kopt::report_markdown(r);
  EXPECT_NE(zh.find("| # | 方案 | 延迟（中位数） | 区间 | 样本数 | 对比 ★ | 对比参考 | 加速比 | 带宽占比 |"), std::string::npos) << zh;
  EXPECT_NE(zh.find("| 更快 25.0% ± 1.0 · #1 | 更快 50.0% ± 1.0 |"), std::string::npos) << zh;
  EXPECT_NE(zh.find("| 6 | 结果错误 |"), std::string::npos) << zh;
  // An empty run says so instead of an empty table.
  const auto empty = report_of(std::string(KOPT_FIXTURES_DIR) + "/vectors/a01-empty-log.events.json");
  EXPECT_NE(kopt::report_markdown(empty, kopt::ReportLang::En).find(kopt::word("md.none", false)), std::string::npos);
}

// Nothing from a hostile log can end a cell, open a link, an image or a tag in the markdown table.
TEST(ReportExports, HostileMarkdownKeepsItsCells) {
  const auto r = report_of(kHostile);
  const std::string md = kopt::report_markdown(r, kopt::ReportLang::En);
  std::istringstream lines(md);
  std::string line;
  std::size_t rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0 && line.rfind("|--", 0) != 0) continue;
    ++rows;
    // Unescaped: the table's own bars only; no `<`, backtick, `!`, or `](` that markdown would read.
    std::size_t bars = 0;
    for (std::size_t k = 0; k < line.size(); ++k) {
      const bool escaped = k > 0 && line[k - 1] == '\\';
      if (line[k] == '|' && !escaped) ++bars;
      if (line[k] == '<' || line[k] == '`' || line[k] == '!') {
        EXPECT_TRUE(escaped) << line;
      }
      if (line[k] == ']' && k + 1 < line.size() && line[k + 1] == '(') {
        EXPECT_TRUE(escaped) << line;
      }
    }
    EXPECT_EQ(bars, 10u) << line;
  }
  EXPECT_GT(rows, 2u);
}

// The report's record table shows each point's interval beside its latency (latency_label) and its
// labels in the shared sentences; a point without an interval shows the latency alone.
TEST(ReportExports, RecordTableShowsIntervals) {
  const auto r = report_of(kS01);
  const std::string en = kopt::report_html(r, kopt::ReportLang::En);
  EXPECT_EQ(count(en, "data-kopt=\"row-ci\""), 6u);
  EXPECT_NE(en.find("<span data-kopt=\"row-ci\">2.000ms ± 1.0%</span>"), std::string::npos);
  EXPECT_NE(en.find("1.300ms"), std::string::npos);
  EXPECT_EQ(en.find("1.300ms ±"), std::string::npos);
  EXPECT_NE(en.find(kopt::versus_text("best.faster", 25, 1.00125, false)), std::string::npos);
  EXPECT_NE(en.find("data-kopt=\"row-vs\" data-v=\"slower\""), std::string::npos);
  const std::string zh = kopt::report_html(r);
  EXPECT_NE(zh.find(kopt::versus_text("ref.faster", 50, 1.0006, true)), std::string::npos);
}

TEST(ReportExports, CommandWritesTheMarkdownTable) {
  TempDir dir;
  const auto md = (dir.path / "run.md").string();
  ASSERT_EQ(kopt::report_command({kS01, "--md", md, "--lang", "en"}), 0);
  EXPECT_EQ(slurp(md), kopt::report_markdown(report_of(kS01), kopt::ReportLang::En));
  EXPECT_EQ(kopt::report_command({kS01, kZ03, "--md", md}), 2) << "one log only";
}
