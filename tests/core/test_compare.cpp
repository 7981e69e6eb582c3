// Comparing runs (compare.hpp): the run's facts from its log, each run's row, the comparability rule
// as vectors (same reference → speedup axis; no speedup, drift, references apart, reference files
// apart → latency with the reason), the overlay's geometry, the session's kept row, and
// `kopt report A B …` on the demo and the conformance logs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "kopt/chart.hpp"
#include "kopt/compare.hpp"
#include "kopt/events.hpp"
#include "kopt/projector.hpp"
#include "kopt/report.hpp"
#include "kopt/session.hpp"
#include "report_command.hpp"
#include "test_files.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kVectors = std::string(KOPT_FIXTURES_DIR) + "/vectors/";
const std::string kDemo = std::string(KOPT_SOURCE_DIR) + "/demo/kernel-opt-demo/session.jsonl.zstd";

using kopt_test::count;
using kopt_test::slurp;
using Scratch = kopt_test::TempDir;

// A run of evaluations: (latency ms, speedup or ≤ 0 for none, correct), with optional reference hashes.
struct Eval {
  double latency, speedup = 0;
  bool correct = true;
  const char* hash = nullptr;
};
kopt::RunSummary run(const std::string& id, const std::vector<Eval>& evals) {
  kopt::Series s;
  double seq = 10;
  for (const Eval& e : evals) {
    kopt::Iteration it;
    it.seq.raw = seq;
    it.seq.num = seq;
    seq += 10;
    it.latencyMs = e.latency;
    if (e.speedup > 0) it.speedup = e.speedup;
    it.correct = e.correct;
    it.compiled = true;
    if (e.hash) {  // measured by the plugin's evaluator (DV-13), which hashed the reference
      it.plugin = true;
      it.sources.emplace();
      it.sources->reference = kopt::SourceHash{"ref.pt", e.hash};
    }
    s.iterations.push_back(std::move(it));
  }
  // I-1: the fastest honest point.
  for (std::size_t i = 0; i < s.iterations.size(); ++i)
    if (s.iterations[i].honest_measured() && (!s.bestIndex || *s.iterations[i].latencyMs < *s.iterations[*s.bestIndex].latencyMs))
      s.bestIndex = i;
  return kopt::summarize_run(id, s, {});
}
// Evaluations against one reference of `ref` ms, each reporting its speedup.
std::vector<Eval> against(double ref, std::vector<double> latencies, const char* hash = nullptr) {
  std::vector<Eval> out;
  for (double l : latencies) out.push_back({l, ref / l, true, hash});
  return out;
}

std::vector<std::string> codes(const kopt::Comparability& c) {
  std::vector<std::string> out;
  for (const auto& r : c.reasons) out.push_back(r.code);
  return out;
}

}  // namespace

// ── the run's facts ──

TEST(Compare, RunFactsReadTitleModelsSupervisorsAndTimes) {
  const char* log = R"([
    {"type":"user/message","seq":0,"time":1000,"data":{"message":{"role":"user","source":{"kind":"user"},"content":[{"type":"text","text":"go"}]}}},
    {"type":"session/title","seq":1,"time":1001,"data":{"title":"first"}},
    {"type":"request/header","seq":2,"time":1002,"data":{"header":{"config":{"provider":"p","model":"m1"},"system":"long…"}}},
    {"type":"assistant/chunk","seq":3,"time":9999999,"data":{}},
    {"type":"request/header","seq":4,"time":1004,"data":{"header":{"config":{"provider":"p","model":"m2"}}}},
    {"type":"request/header","seq":5,"time":1005,"data":{"header":{"config":{"provider":"p","model":"m1"}}}},
    {"type":"session/title","seq":6,"time":1006,"data":{"title":"Kernel run"}},
    {"type":"user/message","seq":7,"time":1007,"data":{"message":{"role":"user","source":{"kind":"plugin","plugin":"kernel-opt","supervisor":{"provider":"q","model":"judge"}},"content":[{"type":"text","text":"next"}]}}}
  ])";
  // Through the log reader (the file path builds only the events the projection or the facts read) …
  kopt::Projector read;
  kopt::LogReadStats stats;
  ASSERT_TRUE(kopt::read_log_text(log, [&](const kopt::json& ev) { read.feed_event(ev); }, stats));
  // … and fed whole (the live path) give the same facts.
  kopt::Projector fed;
  fed.feed(*kopt::parse_json(log));
  for (const kopt::RunFacts* f : {&read.run_facts(), &fed.run_facts()}) {
    EXPECT_EQ(f->title, "Kernel run");
    EXPECT_EQ(f->models, (std::vector<std::string>{"p/m1", "p/m2"}));
    EXPECT_EQ(f->supervisors, (std::vector<std::string>{"q/judge"}));
    EXPECT_EQ(f->firstTime, 1000);
    EXPECT_EQ(f->lastTime, 1007) << "an event neither the projection nor the facts read gives no time";
  }
}

TEST(Compare, RunFactsAreBounded) {
  kopt::RunFacts f;
  for (int i = 0; i < 50; ++i)
    f.take(kopt::json{{"type", "request/header"}, {"seq", i}, {"data", {{"header", {{"config", {{"model", "m" + std::to_string(i)}}}}}}}});
  EXPECT_EQ(f.models.size(), kopt::RunFacts::kModelsMax);
  f.take(kopt::json{{"type", "session/title"}, {"seq", 99}, {"data", {{"title", std::string(5000, 'x')}}}});
  ASSERT_TRUE(f.title);
  EXPECT_LE(f.title->size(), kopt::RunFacts::kTitleMax + 3);
  f.take(kopt::json::array());  // not an event: nothing
  f.take(kopt::json{{"type", "session/title"}, {"data", "not an object"}});
}

// ── each run's row ──

TEST(Compare, RowFigures) {
  // Reference 10 ms; best 2 ms at #5; the first within 90 % of it (≤ 2.22 ms) is #4 (2.2 ms).
  auto evals = against(10, {8, 5, 4, 2.2, 2, 3});
  evals.insert(evals.begin() + 2, Eval{1.0, 10, false});  // wrong: never the best, nor near it
  kopt::RunSummary r = run("a", evals);
  EXPECT_EQ(r.evaluations, 7u);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, 5u);
  ASSERT_TRUE(r.nearBest);
  EXPECT_EQ(*r.nearBest, 4u);
  ASSERT_TRUE(r.reference);
  EXPECT_NEAR(*r.reference, 10, 1e-9);
  ASSERT_TRUE(r.bestSpeedup);
  EXPECT_NEAR(*r.bestSpeedup, 5, 1e-9);
  EXPECT_FALSE(r.drift);
  EXPECT_EQ(r.points.size(), 7u);
  EXPECT_FALSE(r.points[2].ok);
}

TEST(Compare, WallTimeToBestAndFinalGapFromALog) {
  std::string err;
  // Any project vector with a replay of a self-reported finalized point will do; find one.
  bool found = false;
  for (const auto& e : fs::directory_iterator(kVectors)) {
    const std::string p = e.path().string();
    if (p.size() < 12 || p.substr(p.size() - 12) != ".events.json") continue;
    kopt::ReportInput cand;
    if (!kopt::load_report_input(p, {}, cand, err)) continue;
    kopt::RunSummary r = kopt::summarize_run("x", cand.series, cand.facts);
    if (!r.final || !r.final->self) continue;
    found = true;
    EXPECT_TRUE(r.final->remeasured) << p;
    const double self = r.latencies[*r.final->self], re = r.final->latency;
    EXPECT_NEAR(r.final->gapPct, std::round((re / self - 1) * 1000) / 10, 1e-9) << p;
    break;
  }
  EXPECT_TRUE(found) << "a vector with a re-measured self-reported final";
  // The demo: its best has a time, after the run began.
  kopt::ReportInput demo;
  ASSERT_TRUE(kopt::load_report_input(kDemo, {}, demo, err)) << err;
  kopt::RunSummary r = kopt::summarize_run("demo", demo.series, demo.facts);
  ASSERT_TRUE(r.best);
  ASSERT_TRUE(r.wallToBestMs);
  EXPECT_GT(*r.wallToBestMs, 0);
  ASSERT_TRUE(demo.facts.firstTime && demo.facts.lastTime);
  EXPECT_LE(*r.wallToBestMs, *demo.facts.lastTime - *demo.facts.firstTime);
  EXPECT_FALSE(r.facts.models.empty()) << "the demo's request headers name its model";
  EXPECT_TRUE(r.facts.title.has_value());
}

// ── the comparability rule (vectors) ──

TEST(CompareRule, SameReferenceSharesTheSpeedupAxis) {
  const auto c = kopt::comparability({run("a", against(10, {8, 4, 2})), run("b", against(10.5, {9, 3}))});
  EXPECT_TRUE(c.speedup);
  EXPECT_TRUE(c.reasons.empty());
}

TEST(CompareRule, ARunWithoutSpeedupIsComparedByLatency) {
  std::vector<Eval> plain{{8}, {4}};
  const auto c = kopt::comparability({run("a", against(10, {8, 4})), run("b", plain)});
  EXPECT_FALSE(c.speedup);
  ASSERT_EQ(codes(c), std::vector<std::string>{"no-reference"});
  EXPECT_EQ(c.reasons[0].sessions, std::vector<std::size_t>{1});
}

TEST(CompareRule, ReferencesApartAreComparedByLatency) {
  // 10 ms and 11.4 ms: within J-4's 1.15 → one axis; 10 and 11.6: not.
  EXPECT_TRUE(kopt::comparability({run("a", against(10, {8, 4})), run("b", against(11.4, {8, 4}))}).speedup);
  const auto c = kopt::comparability({run("a", against(10, {8, 4})), run("b", against(13, {8})), run("c", against(11.6, {8, 4}))});
  EXPECT_FALSE(c.speedup);
  ASSERT_EQ(codes(c), std::vector<std::string>{"references-differ"});
  EXPECT_EQ(c.reasons[0].sessions, (std::vector<std::size_t>{0, 1})) << "the widest pair: slowest reference and fastest";
  EXPECT_NEAR(c.reasons[0].ratio, 1.3, 1e-9);
}

TEST(CompareRule, ARunThatDriftsIsComparedByLatency) {
  // Its own implied references spread by 40 % (J-4: ≥ 4 of them, ≥ 1.15).
  std::vector<Eval> drifting{{10, 1}, {5, 2.2}, {4, 3.5}, {2, 5}};
  const auto c = kopt::comparability({run("a", against(10, {8, 4})), run("b", drifting)});
  EXPECT_FALSE(c.speedup);
  ASSERT_FALSE(c.reasons.empty());
  EXPECT_EQ(c.reasons[0].code, "drift");
  EXPECT_EQ(c.reasons[0].sessions, std::vector<std::size_t>{1});
}

TEST(CompareRule, ReferenceHashesWhereThePluginsEvaluatorMeasured) {
  // The same reference file: one axis. Another file with the same latency: not, by its hash.
  EXPECT_TRUE(kopt::comparability({run("a", against(10, {8, 4}, "h1")), run("b", against(10, {9}, "h1"))}).speedup);
  auto c = kopt::comparability({run("a", against(10, {8, 4}, "h1")), run("b", against(10, {9}, "h2"))});
  EXPECT_FALSE(c.speedup);
  EXPECT_EQ(codes(c), std::vector<std::string>{"hash-differs"});
  // A run measured against two files differs from itself.
  auto mixed = against(10, {8}, "h1");
  mixed.push_back({4, 2.5, true, "h2"});
  c = kopt::comparability({run("a", mixed), run("b", against(10, {9}, "h1"))});
  EXPECT_FALSE(c.speedup);
  EXPECT_EQ(codes(c), std::vector<std::string>{"hash-mixed"});
  // A run without hashes (measured by a shell command) is judged by its implied reference alone.
  EXPECT_TRUE(kopt::comparability({run("a", against(10, {8}, "h1")), run("b", against(10, {9}))}).speedup);
}

TEST(CompareRule, UnreadableAndLoadingRunsKeepTheirRowsAndDoNotVote) {
  kopt::RunSummary bad, loading;
  bad.id = "gone";
  bad.error = "no such log";
  loading.id = "later";
  loading.loading = true;
  std::vector<kopt::RunSummary> runs{run("a", against(10, {8, 4})), bad, run("b", against(10, {9})), loading};
  EXPECT_TRUE(kopt::comparability(runs).speedup);
  const kopt::json j = kopt::compare_json(runs);
  ASSERT_EQ(j["sessions"].size(), 4u);
  EXPECT_EQ(j["sessions"][1]["error"], "no such log");
  EXPECT_EQ(j["sessions"][3]["loading"], true);
  EXPECT_EQ(j["chart"]["series"].size(), 2u);
}

// ── the overlay ──

TEST(CompareChart, SpeedupAxisPlacesEveryPointInThePlot) {
  std::vector<kopt::RunSummary> runs{run("a", against(10, {8, 4, 2, 1.5})), run("b", against(10, {9, 6, 5}))};
  const kopt::json j = kopt::compare_json(runs);
  EXPECT_EQ(j["axis"], "speedup");
  const auto& c = j["chart"];
  const double left = c["plot"]["left"], right = c["plot"]["right"], top = c["plot"]["top"], bottom = c["plot"]["bottom"];
  std::set<std::string> colours;
  ASSERT_EQ(c["series"].size(), 2u);
  const double x0 = c["frame"]["x0"], dx = c["frame"]["dx"], y0 = c["frame"]["y0"], dy = c["frame"]["dy"];
  ASSERT_EQ(j["scale"], "linear");
  // A linear speedup axis: v = the run's reference / latency.
  auto y_of_in = [&](const kopt::json& s, const kopt::json& p) { return y0 + dy * (s["reference"].get<double>() / p[1].get<double>()); };
  for (const auto& s : c["series"]) {
    colours.insert(s["color"].get<std::string>());
    double last_x = -1;
    for (const auto& p : s["points"]) {  // [index, latency, ok, speedup|null, label, speedup's label?]
      ASSERT_EQ(p.size(), p[3].is_null() ? 5u : 6u);
      if (!p[3].is_null()) {
        EXPECT_EQ(p[5], kopt::speedup_label(p[3].get<double>())) << "the speedup's label is the core's";
      }
      EXPECT_EQ(p[4], kopt::format_latency(p[1].get<double>())) << "the latency's label is the core's";
      const double x = x0 + dx * p[0].get<double>(), y = y_of_in(s, p);
      EXPECT_GE(x, left);
      EXPECT_LE(x, right);
      EXPECT_GE(y, top);
      EXPECT_LE(y, bottom);
      EXPECT_GT(x, last_x) << "x follows the evaluation's index";
      last_x = x;
      EXPECT_TRUE(p[3].is_number()) << "a speedup on a speedup axis";
    }
  }
  EXPECT_EQ(colours.size(), 2u);
  // Higher is faster: the 1.5 ms point of A sits above every point of B.
  const auto &sa = c["series"][0], &sb = c["series"][1];
  const double top_a = y_of_in(sa, sa["points"][3]);
  for (const auto& p : sb["points"]) EXPECT_LT(top_a, y_of_in(sb, p));
  // The best marker sits where the frame puts the best point.
  const auto& best = c["series"][0]["best"];
  EXPECT_NEAR(best["y"].get<double>(), y_of_in(sa, sa["points"][3]), 0.06);
  EXPECT_NEAR(best["x"].get<double>(), x0 + dx * 3, 0.06);
  for (const auto& t : c["ticks"]) EXPECT_EQ(t["label"].get<std::string>().rfind("×", 0), 0u);
}

TEST(CompareChart, LatencyAxisLabelsLatencies) {
  std::vector<Eval> plain{{8}, {4}};
  const kopt::json j = kopt::compare_json({run("a", against(10, {8, 4})), run("b", plain)});
  EXPECT_EQ(j["axis"], "latency");
  ASSERT_FALSE(j["chart"]["ticks"].empty());
  for (const auto& t : j["chart"]["ticks"]) EXPECT_NE(t["label"].get<std::string>().find("ms"), std::string::npos) << t;
  ASSERT_EQ(j["reasons"].size(), 1u);
  EXPECT_EQ(j["reasons"][0]["code"], "no-reference");
  // The words the tab shows come with the object: the runs' names and the reason in both languages.
  EXPECT_EQ(j["sessions"][0]["name"], "A · a");
  EXPECT_EQ(j["sessions"][1]["name"], "B · b");
  EXPECT_EQ(j["reasons"][0]["text"]["en"], "B · b reports no speedup: no reference to compare against");
  EXPECT_EQ(j["reasons"][0]["text"]["zh"], "B · b 没有报告加速比，没有可比的参考");
}

TEST(CompareChart, PaletteColoursAreDistinct) {
  std::set<std::string> seen(std::begin(kopt::kComparePalette), std::end(kopt::kComparePalette));
  EXPECT_EQ(seen.size(), kopt::kCompareMax);
}

// ── the session's kept row ──

TEST(Compare, SessionSummaryFollowsTheProjection) {
  kopt::ReportInput demo;
  std::string err;
  ASSERT_TRUE(kopt::load_report_input(kDemo, {}, demo, err)) << err;
  std::vector<kopt::json> events;
  kopt::LogReadStats stats;
  ASSERT_TRUE(kopt::read_log_file(kDemo, [&](const kopt::json& ev) { events.push_back(ev); }, stats));
  kopt::Projector p;
  kopt::Session s(p, "demo");
  const std::size_t half = events.size() / 2;
  for (std::size_t i = 0; i < half; ++i) s.feed(events[i]);
  const std::size_t early = s.summary().evaluations;
  for (std::size_t i = half; i < events.size(); ++i) s.feed(events[i]);
  const kopt::RunSummary& late = s.summary();
  const kopt::RunSummary whole = kopt::summarize_run("demo", demo.series, demo.facts);
  EXPECT_LE(early, late.evaluations);
  EXPECT_EQ(late.evaluations, whole.evaluations);
  EXPECT_EQ(late.best, whole.best);
  EXPECT_EQ(late.nearBest, whole.nearBest);
  EXPECT_EQ(late.used, whole.used);
  EXPECT_EQ(late.facts.title, whole.facts.title);
  EXPECT_EQ(late.facts.models, whole.facts.models);
  EXPECT_EQ(kopt::js_stringify(kopt::compare_json({late, late})), kopt::js_stringify(kopt::compare_json({whole, whole})));
}

// ── kopt report A B … ──

TEST(CompareCommand, DemoAgainstConformanceLogs) {
  Scratch dir;
  const std::string html = (dir.path / "compare.html").string(), js = (dir.path / "compare.json").string();
  const std::string z03 = kVectors + "z03-large-60-evals.events.json", z01 = kVectors + "z01-large-shell-job-mix.events.json";
  ASSERT_EQ(kopt::report_command({kDemo, z03, z01, "-o", html, "--json", js, "--lang", "en"}), 0);
  const std::string page = slurp(html);
  EXPECT_EQ(count(page, "data-kopt=\"compare-row\""), 3u);
  EXPECT_EQ(count(page, "data-kopt=\"compare-series\""), 3u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  const auto j = kopt::parse_json(slurp(js));
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["kind"], "kopt-compare");
  std::size_t points = 0;
  for (const auto& s : (*j)["chart"]["series"]) points += s["points"].size();
  EXPECT_EQ(count(page, "data-kopt=\"compare-point\""), points);
  // Each axis comes with what the rule said: the speedup axis, or the latency axis with its reasons.
  if ((*j)["axis"] == "latency") {
    EXPECT_FALSE((*j)["reasons"].empty());
    EXPECT_EQ(count(page, "data-kopt=\"reason\""), (*j)["reasons"].size());
  }
  // Chinese page by default.
  ASSERT_EQ(kopt::report_command({kDemo, z03, "-o", html}), 0);
  EXPECT_NE(slurp(html).find("运行对比"), std::string::npos);
}

// The demo session and its second recording (demo/kernel-opt-demo-b: another model name and budget).
TEST(CompareCommand, DemoAgainstItsSecondRecording) {
  const std::string second = std::string(KOPT_SOURCE_DIR) + "/demo/kernel-opt-demo-b/session.jsonl.zstd";
  Scratch dir;
  const std::string js = (dir.path / "ab.json").string();
  ASSERT_EQ(kopt::report_command({kDemo, second, "--json", js}), 0);
  const auto j = kopt::parse_json(slurp(js));
  ASSERT_TRUE(j.has_value());
  const auto& s = (*j)["sessions"];
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0]["models"], kopt::json::array({"deepseek-official/deepseek-v4-flash"}));
  EXPECT_EQ(s[1]["models"], kopt::json::array({"deepseek-official/deepseek-v4-pro"}));
  EXPECT_EQ(s[1]["budget"], 3);
  for (const auto& r : s) {
    EXPECT_TRUE(r.contains("best")) << r;
    EXPECT_EQ(r["final"]["remeasured"], true) << r;
  }
  EXPECT_EQ((*j)["chart"]["series"].size(), 2u);
  // Both measured by the plugin's evaluator (DV-13) against the same ref.pt: one reference file, the
  // same in both, so no reason names the files.
  ASSERT_EQ(s[0]["referenceHashes"].size(), 1u);
  EXPECT_EQ(s[0]["referenceHashes"], s[1]["referenceHashes"]);
  EXPECT_EQ(s[0]["referenceHashes"][0].get<std::string>().size(), 64u);
  for (const auto& why : (*j)["reasons"]) EXPECT_NE(why["code"].get<std::string>().rfind("hash", 0), 0u) << why;
  // Their finalize gaps are between two of the plugin's own measurements, and say so.
  for (const auto& r : s) {
    if (r["final"].contains("gapPct")) {
      EXPECT_EQ(r["final"]["selfPlugin"], true) << r;
    }
  }
  // Whatever the two recordings measured, the axis says so: speedup with no reason, or latency with one.
  EXPECT_EQ((*j)["axis"] == "speedup", (*j)["reasons"].empty());
}

TEST(CompareCommand, EveryPairOfConformanceLogsRenders) {
  std::vector<std::string> logs;
  for (const auto& e : fs::directory_iterator(kVectors)) {
    const std::string p = e.path().string();
    if (p.size() > 12 && p.substr(p.size() - 12) == ".events.json") logs.push_back(p);
  }
  std::sort(logs.begin(), logs.end());
  ASSERT_GT(logs.size(), 10u);
  Scratch dir;
  const std::string js = (dir.path / "c.json").string();
  for (std::size_t i = 0; i + 1 < logs.size(); i += 2) {
    ASSERT_EQ(kopt::report_command({logs[i], logs[i + 1], "--json", js}), 0) << logs[i];
    const auto j = kopt::parse_json(slurp(js));
    ASSERT_TRUE(j.has_value()) << logs[i];
    EXPECT_EQ((*j)["sessions"].size(), 2u);
    EXPECT_EQ((*j)["axis"] == "speedup", (*j)["reasons"].empty() && !(*j)["chart"]["series"].empty()) << logs[i];
  }
}

TEST(CompareCommand, BadInput) {
  Scratch dir;
  const std::string html = (dir.path / "c.html").string(), z03 = kVectors + "z03-large-60-evals.events.json";
  // An unreadable log keeps its row with the reason.
  ASSERT_EQ(kopt::report_command({z03, "/nonexistent/session.jsonl", "-o", html}), 0);
  const std::string page = slurp(html);
  EXPECT_EQ(count(page, "data-kopt=\"compare-row\""), 2u);
  EXPECT_NE(page.find("data-kopt=\"row-error\""), std::string::npos);
  EXPECT_NE(page.find("/nonexistent/session.jsonl"), std::string::npos);
  // None readable; too many; one-log options.
  EXPECT_EQ(kopt::report_command({"/nonexistent/a", "/nonexistent/b", "-o", html}), 1);
  std::vector<std::string> nine(kopt::kCompareMax + 1, z03);
  nine.push_back("-o");
  nine.push_back(html);
  EXPECT_EQ(kopt::report_command(nine), 2);
  EXPECT_EQ(kopt::report_command({z03, z03, "--csv", html}), 2);
  EXPECT_EQ(kopt::report_command({z03, z03, "--budget", "5"}), 2);
}

// Issue 49: the comparison shows each point's interval where it carries one, in the label the core makes
// (latency_label: "1.200ms ± 0.8%"): the overlay's points (the tab's popover, the page's titles) and the
// table's best; a point without an interval keeps the latency alone.
TEST(Compare, LabelsCarryThePointsInterval) {
  std::string err;
  kopt::ReportInput s01;
  ASSERT_TRUE(kopt::load_report_input(kVectors + "s01-compare-rule-labels.events.json", {}, s01, err)) << err;
  const kopt::RunSummary r = kopt::summarize_run("s01", s01.series, s01.facts);
  ASSERT_EQ(r.best, std::optional<std::size_t>(4));
  EXPECT_EQ(r.bestLabel, "1.200ms ± 0.8%");
  EXPECT_EQ(r.nearBestLabel, "1.300ms") << "the near-best point (#4) has no interval";
  EXPECT_NE(r.pointsText.find("\"2.000ms ± 1.0%\""), std::string::npos) << r.pointsText;
  EXPECT_NE(r.pointsText.find("\"1.300ms\""), std::string::npos) << r.pointsText;
  kopt::ReportInput z03;
  ASSERT_TRUE(kopt::load_report_input(kVectors + "z03-large-60-evals.events.json", {}, z03, err)) << err;
  const std::vector<kopt::RunSummary> runs = {r, kopt::summarize_run("z03", z03.series, z03.facts)};
  const kopt::json cmp = kopt::compare_json(runs);
  EXPECT_EQ(cmp["sessions"][0]["best"]["label"], "1.200ms ± 0.8%");
  EXPECT_EQ(cmp["sessions"][0]["nearBest"]["label"], "1.300ms");
  EXPECT_EQ(cmp["chart"]["series"][0]["points"][0][4], "2.000ms ± 1.0%");
  for (const auto& p : cmp["chart"]["series"][1]["points"])
    EXPECT_EQ(p[4].get<std::string>().find("±"), std::string::npos) << "z03 carries no intervals";
  const std::string page = kopt::compare_html(cmp, kopt::ReportLang::En);
  EXPECT_NE(page.find("· #1 · 2.000ms ± 1.0%"), std::string::npos) << "the page's point title";
  EXPECT_NE(page.find("1.200ms ± 0.8%"), std::string::npos) << "the table's best";
}
