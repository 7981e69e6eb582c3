// Chart geometry (spec O, J-3/J-4 for the notes): formatLatency vectors and the o0x chart cases.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "kopt/chart.hpp"

namespace {

kopt::json load(const std::string& name) {
  std::ifstream f(std::string(KOPT_FIXTURES_DIR) + "/vectors/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  auto j = kopt::parse_json(ss.str());
  EXPECT_TRUE(j.has_value()) << name;
  return j.value_or(kopt::json());
}

kopt::json chart_of(const std::string& vector_case) {
  return kopt::chart_json_from_wire(load(vector_case + ".expected.json")["series"]);
}

double num(const kopt::json& j) { return j.get<double>(); }

// Where chart c draws point i, in viewBox units (the points carry frame values).
double px(const kopt::json& c, std::size_t i) { return kopt::ChartFrame::of(c).x(i); }
double py(const kopt::json& c, std::size_t i) { return kopt::ChartFrame::of(c).y(c["points"][i]); }

}  // namespace

TEST(Chart, O1_FormatLatencyUnitVectors) {
  const auto unit = load("unit.expected.json");
  ASSERT_TRUE(unit["formatLatency"].is_array());
  ASSERT_FALSE(unit["formatLatency"].empty());
  for (const auto& c : unit["formatLatency"])
    EXPECT_EQ(kopt::format_latency(c["ms"].get<double>()), c["text"].get<std::string>()) << c.dump();
}

TEST(Chart, O1_FormatLatencyExponentForms) {
  EXPECT_EQ(kopt::format_latency(2e6), "2.00e+3s");
  EXPECT_EQ(kopt::format_latency(0.25), "250µs");
  EXPECT_EQ(kopt::format_latency(10), "10.00ms");
}

TEST(Chart, O2_LinearLatencyLabelsHigherIsFaster) {
  const auto c = chart_of("o01-chart-linear-latency-labels");
  EXPECT_EQ(c["mode"], "latency");
  EXPECT_EQ(c["scale"], "linear");
  const auto& p = c["points"];
  ASSERT_EQ(p.size(), 4u);
  for (std::size_t i = 1; i < p.size(); ++i) {
    EXPECT_EQ(p[i]["kind"], "ok");
    EXPECT_LT(py(c, i), py(c, i - 1)) << "faster points sit higher";
    EXPECT_GT(px(c, i), px(c, i - 1));
    EXPECT_GE(py(c, i), num(c["plot"]["top"]));
    EXPECT_LE(py(c, i), num(c["plot"]["bottom"]));
  }
  EXPECT_EQ(c["markers"]["best"]["index"], 3);
  EXPECT_NEAR(num(c["bestLine"]["y"]), py(c, 3), 0.051) << "the marker sits on the point (to a tenth)";
  EXPECT_NEAR(num(c["markers"]["best"]["x"]), px(c, 3), 0.051);
  ASSERT_GE(c["ticks"].size(), 2u);
  for (const auto& t : c["ticks"]) {
    const auto label = t["label"].get<std::string>();
    EXPECT_EQ(label.substr(label.size() - 2), "ms") << label;
    EXPECT_GE(num(t["y"]), num(c["plot"]["top"]));
    EXPECT_LE(num(t["y"]), num(c["plot"]["bottom"]));
  }
  EXPECT_TRUE(c["reference"].is_null());
  EXPECT_TRUE(c["drift"].is_null());
  EXPECT_EQ(c["line"].get<std::string>().substr(0, 1), "M");
}

TEST(Chart, O2_SpeedupModeUsesPooledReference) {
  const auto c = chart_of("o02-chart-outlier-band");
  EXPECT_EQ(c["mode"], "speedup");
  EXPECT_EQ(c["scale"], "log") << "2 ms against 0.039 ms spans more than 20x";
  EXPECT_NEAR(num(c["reference"]["latencyMs"]), 0.2006, 1e-9);
  EXPECT_EQ(c["reference"]["label"], "201µs");
  // The point's own reported speedup is its label; the pooled reference places it.
  EXPECT_EQ(c["points"][1]["speedupLabel"], "×4");
  for (const auto& t : c["ticks"]) EXPECT_EQ(t["label"].get<std::string>().rfind("×", 0), 0u);
  EXPECT_EQ(c["markers"]["best"]["index"], 5);
}

TEST(Chart, O3_LogAxisWhenLatenciesSpanOver20x) {
  const auto c = chart_of("o03-chart-log-axis");
  EXPECT_EQ(c["scale"], "log");
  EXPECT_EQ(c["mode"], "latency");
  EXPECT_GE(c["ticks"].size(), 3u);
}

TEST(Chart, O4_UnmeasuredBelowAxisAndProfileAfterLastRow) {
  const auto c = chart_of("o04-chart-single-and-unmeasured");
  const auto& p = c["points"];
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0]["kind"], "unmeasured");
  EXPECT_EQ(p[0]["failed"], true);
  EXPECT_FALSE(p[0].contains("v")) << "unmeasured: no frame value";
  EXPECT_EQ(py(c, 0), num(c["baselineY"]));
  EXPECT_GT(py(c, 0), num(c["plot"]["bottom"]));
  EXPECT_EQ(p[1]["kind"], "ok");
  EXPECT_EQ(p[2]["kind"], "unmeasured");
  EXPECT_EQ(p[2]["pending"], true);
  ASSERT_EQ(c["markers"]["profiled"].size(), 1u);
  EXPECT_GT(num(c["markers"]["profiled"][0]["x"]), px(c, 2));
  EXPECT_EQ(c["markers"]["best"]["index"], 1);
}

TEST(Chart, O5_NothingMeasured) {
  const auto c = chart_of("o05-chart-none");
  EXPECT_EQ(c["empty"], false);
  EXPECT_EQ(c["line"], "");
  EXPECT_TRUE(c["ticks"].empty());
  EXPECT_TRUE(c["markers"]["best"].is_null());
  EXPECT_TRUE(c["bestLine"].is_null());
  EXPECT_EQ(c["points"][0]["kind"], "unmeasured");
}

TEST(Chart, J4_DriftFlag) {
  const auto c = chart_of("j01-drift-wide");
  ASSERT_FALSE(c["drift"].is_null());
  EXPECT_EQ(c["drift"]["count"], 5);
  EXPECT_NEAR(num(c["drift"]["ratio"]), 3.11 / 2.03, 1e-9);
  EXPECT_TRUE(chart_of("j02-drift-quiet-jitter")["drift"].is_null());
}

TEST(Chart, FailedPointsKeepTheirPlaceOffTheLine) {
  kopt::Series s;
  auto add = [&](double seq, double lat, bool correct) {
    kopt::Iteration it;
    it.seq = {kopt::json(seq), seq};
    it.tool = "bash";
    it.latencyMs = lat;
    it.correct = correct;
    s.iterations.push_back(it);
  };
  add(1, 4, true);
  add(2, 2, false);
  add(3, 3, true);
  s.bestIndex = 2;
  const auto c = kopt::chart_json(s, {});
  EXPECT_EQ(c["points"][1]["kind"], "failed");
  EXPECT_LT(py(c, 1), py(c, 2)) << "a fast wrong answer still sits where its latency says";
  const auto line = c["line"].get<std::string>();
  EXPECT_EQ(std::count(line.begin(), line.end(), 'L'), 1) << line;
}

// The reviews the tab's card lists: the core's, newest first, a failed review among them, each named
// by its loop message's word (an audit outranks a wrap-up), at most kReviewsShown; the report lists
// the same rounds (all of them) with the same words.
TEST(Chart, ReviewsAreListedOnceWithTheirWords) {
  kopt::Series s;
  kopt::Iteration it;
  it.seq = {kopt::json(1), 1};
  it.tool = "bash";
  it.latencyMs = 1;
  it.correct = true;
  s.iterations.push_back(it);
  s.bestIndex = 0;
  auto round = [&](double seq, std::optional<long long> n) {
    kopt::Round r;
    r.seq = {kopt::json(seq), seq};
    r.round = n;
    s.rounds.push_back(r);
    return &s.rounds.back();
  };
  round(2, 1)->review = "ok";
  round(3, 2);  // not reviewed
  round(4, 3)->reviewFailed = true;
  {
    kopt::Round* r = round(5, std::nullopt);
    r->wrapUp = r->audit = true;
    r->review = "tighten the tail";
  }
  const auto c = kopt::chart_json(s, {});
  const kopt::json want = kopt::json::parse(R"([{"round":3,"key":"rev.audit","n":"—"},
    {"round":2,"key":"rev.round","n":"3"},{"round":0,"key":"rev.round","n":"1"}])");
  EXPECT_EQ(c["reviews"], want);
  for (long long k = 0; k < 50; ++k) round(10 + k, 10 + k)->review = "ok";
  const auto many = kopt::chart_json(s, {})["reviews"];
  ASSERT_EQ(many.size(), kopt::kReviewsShown);
  EXPECT_EQ(many[0]["n"], "59");
  EXPECT_EQ(many.back()["n"], std::to_string(59 - static_cast<long long>(kopt::kReviewsShown) + 1));
}

TEST(Chart, EmptySeriesAndOptions) {
  const auto c = kopt::chart_json_from_wire(kopt::json::object(), kopt::ChartOptions::from_json({{"width", 500}, {"height", 10}}));
  EXPECT_EQ(c["empty"], true);
  EXPECT_EQ(c["width"], 500);
  EXPECT_EQ(c["height"], 160) << "height clamped";
}

TEST(Chart, ThousandPointsStaySmall) {
  kopt::Series s;
  for (int i = 0; i < 1000; ++i) {
    kopt::Iteration it;
    it.seq = {kopt::json(i * 2), static_cast<double>(i * 2)};
    it.tool = "kernel_evaluate";
    it.latencyMs = 1.0 + (i % 37) * 0.01;
    it.correct = true;
    s.iterations.push_back(it);
  }
  s.bestIndex = 0;
  const auto c = kopt::chart_json(s, {});
  EXPECT_EQ(c["points"].size(), 1000u);
  EXPECT_LE(c["xTicks"].size(), 12u);
  EXPECT_LT(kopt::js_stringify(c).size(), 200000u);
  for (const auto& t : c["ticks"]) EXPECT_EQ(t["label"].get<std::string>().find('e'), std::string::npos) << t.dump();
}

TEST(Chart, M5_PhaseCountsAndFinalNumber) {
  const auto c = chart_of("m03-budget-phases");
  const auto expected = load("m03-budget-phases.expected.json");
  // The vector's phases were computed with its loop budget; ours reads no control, so compare
  // with the budget given explicitly.
  const auto budget = expected["derived"]["loopInputs"]["state"]["budget"].get<long long>();
  kopt::ChartOptions opt;
  opt.budget = budget;
  const auto c2 = kopt::chart_json_from_wire(expected["series"], opt);
  // Non-pending rows as the vector says (the pending row's label is the core's business).
  const auto& its = expected["series"]["iterations"];
  ASSERT_EQ(c2["phases"].size(), its.size());
  for (std::size_t i = 0; i < its.size(); ++i)
    if (!its[i].contains("pending")) {
      EXPECT_EQ(c2["phases"][i], expected["derived"]["evaluationPhases"][i]) << i;
    }
  const auto& counts = c2["counts"];
  EXPECT_EQ(counts["optimization"].get<long long>() + counts["overBudget"].get<long long>() +
                counts["wrapUp"].get<long long>(),
            static_cast<long long>(c["points"].size()) -
                static_cast<long long>(std::count_if(expected["series"]["iterations"].begin(),
                                                     expected["series"]["iterations"].end(),
                                                     [](const kopt::json& it) { return it.contains("pending"); })));
  // H-8: the latest finalize call decides; h03's last kernel_finalize printed no replay, so its Final is the
  // artifact's point as reported; h08's call carries its own re-measurement.
  const auto r = chart_of("h03-finalize-replay");
  ASSERT_FALSE(r["final"].is_null());
  EXPECT_EQ(r["final"]["remeasured"], false);
  const auto g = chart_of("h08-final-replay-gap");
  ASSERT_FALSE(g["final"].is_null());
  EXPECT_EQ(g["final"]["remeasured"], true);
  const auto a = chart_of("h06-final-latest-call-wins");
  ASSERT_FALSE(a["final"].is_null());
  EXPECT_EQ(a["final"]["remeasured"], false);
  // h02's latest finalize names an artifact with no verified point: refused, no number.
  const auto refused = chart_of("h02-finalize-by-artifact");
  EXPECT_TRUE(refused["final"].is_null());
  EXPECT_EQ(refused["finalClaim"]["refused"], "not-found");
}

// The finalize gap: a self-reported finalized point and the plugin's replay of it. Within 10 % it is
// shown, not flagged; beyond, flagged (the demo's ×2.21 self-reported against ×1.64 re-measured).
TEST(Chart, FinalGapBetweenSelfReportedAndReplay) {
  // h08: two equal shell points for k.py (the earlier is the artifact's, H-3), then kernel_finalize's replay.
  auto series = load("h08-final-replay-gap.expected.json")["series"];
  const auto far = kopt::chart_json_from_wire(series)["final"];
  ASSERT_TRUE(far.is_object());
  EXPECT_EQ(far["remeasured"], true);
  EXPECT_EQ(far["index"], 2);
  EXPECT_EQ(far["selfReported"]["index"], 0);
  EXPECT_DOUBLE_EQ(far["selfReported"]["latencyMs"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(far["gapPct"].get<double>(), 25.0);  // 1.25 / 1.0 − 1
  EXPECT_EQ(far["gapFlag"], true);
  EXPECT_EQ(far["label"], kopt::format_latency(1.25));
  for (auto& it : series["iterations"]) it["latencyMs"] = it["channel"] == "replay" ? 1.31 : 1.3;
  const auto near = kopt::chart_json_from_wire(series)["final"];
  EXPECT_DOUBLE_EQ(near["gapPct"].get<double>(), 0.8);  // 1.31 / 1.3 − 1
  EXPECT_EQ(near["gapFlag"], false);
  // Only a self-reported finalized point: no gap fields.
  const auto self_only = chart_of("h06-final-latest-call-wins")["final"];
  EXPECT_FALSE(self_only.contains("gapPct"));
  EXPECT_FALSE(self_only.contains("selfReported"));
}

namespace {
// 200 correct evaluations whose implied references (latency × speedup) are half 2 ms, half 3 ms.
kopt::Series steady_run(bool spread) {
  kopt::Series s;
  for (int i = 0; i < 200; ++i) {
    kopt::Iteration it;
    it.seq = {kopt::json(i * 2), static_cast<double>(i * 2)};
    it.tool = "kernel_evaluate";
    it.latencyMs = spread ? 1.0 + (i % 50) * 0.5 : 1.0 + (i % 37) * 0.01;
    it.speedup = (i % 2 ? 2.0 : 3.0) / *it.latencyMs;
    it.correct = true;
    s.iterations.push_back(it);
  }
  s.bestIndex = 0;
  return s;
}
// A chart writer and the row phases it reads, kept from write to write as a session keeps them.
struct KeptChart {
  kopt::ChartWriter w;
  kopt::RowPhases phases;
  void write(const kopt::Series& s, const kopt::ChartOptions& opt, std::size_t rows_same_before = 0) {
    const kopt::RowTable rows(s.iterations);
    phases.update(rows, s.rounds, opt.budget, opt.fixedBudget, rows_same_before);
    w.write(s, rows, phases, opt, rows_same_before);
  }
  std::size_t first_change() const { return w.first_change(); }
  std::size_t profiled_first_change() const { return w.profiled_first_change(); }
  void write_to(std::string& out) const { w.write_to(out); }
  void write_append(std::string& out, std::size_t from, std::size_t profiled_from) const { w.write_append(out, from, profiled_from); }
};
}  // namespace

// A live chart only appends: a new point inside the axes moves no earlier point, even when it
// moves the pooled reference (here from 2.5 to 3 ms); past kExactSpan points the x axis spans a
// round number of iterations.
TEST(Chart, AxesStayPutAsAPointArrives) {
  for (bool spread : {false, true}) {
    kopt::Series s = steady_run(spread);
    s.profileSeqs = {{kopt::json(11), 11}, {kopt::json(151), 151}};  // marks between points
    KeptChart live;
    live.write(s, {});
    const kopt::Series s_a = s;
    std::string a_text;
    live.write_to(a_text);
    const auto a = *kopt::parse_json(a_text);
    EXPECT_EQ(a["scale"], spread ? "log" : "linear");
    kopt::Iteration it = s.iterations[3];
    it.seq = {kopt::json(999), 999};
    it.speedup = 3.0 / *it.latencyMs;
    s.iterations.push_back(it);
    s.profileSeqs.push_back({kopt::json(1000), 1000});  // a profile after the new point
    live.write(s, {}, 200);  // the first 200 rows are vouched for
    std::string b_text;
    live.write_to(b_text);
    EXPECT_EQ(b_text, kopt::chart_json_text(s)) << "the same text as a chart written at once";
    const auto b = *kopt::parse_json(b_text);
    EXPECT_NE(a["reference"]["latencyMs"], b["reference"]["latencyMs"]);
    EXPECT_NE(a["ticks"], b["ticks"]) << "the labels follow the reference";
    EXPECT_EQ(a["frame"], b["frame"]);
    for (std::size_t i = 0; i < 200; ++i) ASSERT_EQ(a["points"][i], b["points"][i]) << i;
    // 201 points: the axis spans 200 iterations, numbered to #201.
    const double w = num(b["plot"]["right"]) - num(b["plot"]["left"]) - 28;
    EXPECT_NEAR(num(b["xStep"]), w / 200, 1e-3);
    EXPECT_EQ(b["xTicks"].back()["label"], "#200");
    EXPECT_NEAR(num(b["xTicks"].back()["x"]), px(b, 199), 0.051);

    // Only the new point differs, and the append form carries it.
    EXPECT_EQ(live.first_change(), 200u);
    // The profile marks compare on their own: the two earlier ones stay, the new one is appended.
    EXPECT_EQ(live.profiled_first_change(), 2u);
    {
      KeptChart back;  // b, then a: a shorter chart changed at its end, fewer marks at theirs
      back.write(s, {});
      back.write(s_a, {});
      EXPECT_EQ(back.first_change(), 200u);
      EXPECT_EQ(back.profiled_first_change(), 2u);
      std::string text;
      back.write_to(text);
      EXPECT_EQ(text, a_text);
      back.write(s_a, {}, 200);  // nothing changed
      EXPECT_EQ(back.first_change(), 200u);
      EXPECT_EQ(back.profiled_first_change(), 2u);
    }
    std::string app;
    live.write_append(app, 200, 2);
    auto c = *kopt::parse_json(app);
    EXPECT_EQ(c["append"], 200);
    EXPECT_EQ(c["appendProfiled"], 2);
    EXPECT_FALSE(c.contains("line"));
    EXPECT_EQ(c["points"].size(), 1u);
    EXPECT_EQ(c["phases"].size(), 1u);
    EXPECT_EQ(c["rowRounds"].size(), 1u);
    ASSERT_EQ(c["markers"]["profiled"].size(), 1u);
    EXPECT_EQ(c["markers"]["profiled"][0]["seq"], 1000);
    kopt::json merged = c;
    merged.erase("append");
    merged.erase("appendProfiled");
    for (const char* k : {"points", "phases", "rowRounds"}) {
      kopt::json arr = kopt::json::array();
      for (std::size_t i = 0; i < 200; ++i) arr.push_back(a[k][i]);
      for (const auto& x : c[k]) arr.push_back(x);
      merged[k] = arr;
    }
    kopt::json marks = kopt::json::array();
    for (std::size_t i = 0; i < 2; ++i) marks.push_back(a["markers"]["profiled"][i]);
    for (const auto& x : c["markers"]["profiled"]) marks.push_back(x);
    merged["markers"]["profiled"] = marks;
    kopt::json whole = b;
    whole.erase("line");
    EXPECT_EQ(merged, whole);
  }
}

// Up to kExactSpan points the axis spans them exactly (the curve fills the plot).
TEST(Chart, SmallRunsFillTheAxis) {
  kopt::Series s = steady_run(false);
  s.iterations.resize(kopt::kExactSpan);
  const auto c = kopt::chart_json(s, {});
  EXPECT_NEAR(px(c, kopt::kExactSpan - 1), num(c["plot"]["right"]) - 14, 1e-9);
  s.iterations.resize(kopt::kExactSpan + 2);
  const auto d = kopt::chart_json(s, {});
  EXPECT_LT(px(d, kopt::kExactSpan + 1), num(d["plot"]["right"]) - 14) << "66 points: the axis spans 80";
  // One point: no spacing, in the middle of the plot, under a frame that is still invertible
  // (every reader draws under matrix(dx 0 0 dy x0 y0) and picks by dividing by dx).
  s.iterations.resize(1);
  const auto e = kopt::chart_json(s, {});
  EXPECT_EQ(num(e["xStep"]), 0);
  EXPECT_NE(num(e["frame"]["dx"]), 0);
  EXPECT_NE(num(e["frame"]["dy"]), 0);
  EXPECT_EQ(px(e, 0), (num(e["plot"]["left"]) + num(e["plot"]["right"])) / 2);
  EXPECT_GE(py(e, 0), num(e["plot"]["top"]));
  EXPECT_LE(py(e, 0), num(e["plot"]["bottom"]));
}

// The axes moving (a new fastest point past the snapped y domain, a longer x axis) changes the
// frame and nothing in the earlier points: their items, and the line through them, stay as they
// were, so a live chart still only appends. Only a change of scale (linear ↔ log) rewrites them.
TEST(Chart, AxesMovingChangesOnlyTheFrame) {
  for (bool spread : {false, true}) {
    kopt::Series s = steady_run(spread);
    KeptChart w;
    w.write(s, {});
    std::string a_text;
    w.write_to(a_text);
    const auto a = *kopt::parse_json(a_text);
    // Faster than any point so far, by a factor that keeps the scale (spread: 1…25.5 ms, log).
    kopt::Iteration it = s.iterations[3];
    it.seq = {kopt::json(999), 999};
    it.latencyMs = spread ? 0.5 : 0.9;
    for (int k = 0; k < 30; ++k) s.iterations.push_back(it);  // 230 points: the x axis grows to 250
    w.write(s, {});  // nothing vouched for: every row compared
    std::string b_text;
    w.write_to(b_text);
    EXPECT_EQ(b_text, kopt::chart_json_text(s));
    const auto b = *kopt::parse_json(b_text);
    ASSERT_EQ(a["scale"], b["scale"]);
    EXPECT_NE(a["frame"]["dx"], b["frame"]["dx"]) << "the x axis grew";
    EXPECT_NE(a["frame"]["y0"], b["frame"]["y0"]) << "the y axis stretched";
    EXPECT_NE(a["ticks"], b["ticks"]);
    for (std::size_t i = 0; i < 200; ++i) ASSERT_EQ(a["points"][i], b["points"][i]) << i;
    EXPECT_EQ(w.first_change(), 200u);
    const auto line_a = a["line"].get<std::string>(), line_b = b["line"].get<std::string>();
    EXPECT_EQ(line_b.substr(0, line_a.size()), line_a) << "the line only grows";
    // Still inside the plot, the new fastest point at its top.
    for (std::size_t i = 0; i < b["points"].size(); ++i) {
      EXPECT_GE(py(b, i), num(b["plot"]["top"])) << i;
      EXPECT_LE(py(b, i), num(b["plot"]["bottom"])) << i;
      EXPECT_GT(px(b, i), num(b["plot"]["left"])) << i;
      EXPECT_LT(px(b, i), num(b["plot"]["right"])) << i;
    }
    EXPECT_LT(py(b, 229), py(b, 0)) << "faster sits higher";
  }
  // A change of scale rewrites every point's frame value.
  kopt::Series s = steady_run(false);
  const auto a = kopt::chart_json(s, {});
  kopt::Iteration it = s.iterations[3];
  it.latencyMs = 0.01;  // 100× faster than the rest: log
  s.iterations.push_back(it);
  const auto b = kopt::chart_json(s, {});
  ASSERT_EQ(b["scale"], "log");
  EXPECT_NE(a["points"][0]["v"], b["points"][0]["v"]);
}

// A chart kept from write to write is the chart written at once, whatever happens between writes:
// points appended or changed in place (pending answered, marked finalized, a seq that is no number),
// rounds appended after the points or before some of them, with and without a budget, wrap-ups,
// rows with a seq below earlier rows', profile marks anywhere, several updates of the row phases between two writes; and every item before
// first_change() is the previous write's. The row phases' count of completed evaluations is
// completed_evals at every step.
TEST(Chart, KeptWriterEqualsAFreshChart) {
  std::mt19937 rng(17);
  auto seq_of = [](double v) { return kopt::Seq{kopt::json(v), v}; };
  for (int trial = 0; trial < 8; ++trial) {
    kopt::Series s;
    kopt::ChartWriter w;
    kopt::RowPhases phases;
    std::size_t chart_first = 0;  // the first row changed since the last write
    kopt::ChartOptions opt;
    opt.budget = trial % 3 == 0 ? 0 : 40;
    opt.fixedBudget = trial % 4 == 1;
    double at = 0;
    kopt::json prev;
    for (int step = 0; step < 100; ++step) {
      std::size_t first = s.iterations.size();  // the first row changed this step
      const unsigned what = rng() % 10;
      if (what < 6 || s.iterations.empty()) {
        for (unsigned k = 1 + rng() % (rng() % 8 == 0 ? 200 : 3); k-- > 0;) {
          kopt::Iteration it;
          at += 1 + rng() % 3;
          // Now and then a seq below earlier rows' (the profile marks before it move).
          it.seq = rng() % 97 == 0   ? kopt::Seq{kopt::json("x"), std::numeric_limits<double>::quiet_NaN()}
                   : rng() % 15 == 0 ? seq_of(at - 1.5 - rng() % 20)
                                     : seq_of(at);
          it.tool = "kernel_evaluate";
          it.pending = rng() % 9 == 0;
          if (!it.pending && rng() % 7) {
            it.latencyMs = (trial % 2 ? 1.0 : 0.01) + (rng() % 50) * (trial % 2 ? 0.5 : 0.001);
            it.correct = rng() % 10 != 0;
            if (rng() % 3) it.speedup = 3.0 / *it.latencyMs;
          }
          it.channel = rng() % 40 == 0 ? std::optional<std::string>("replay") : std::nullopt;
          s.iterations.push_back(it);
        }
      } else if (what < 8) {
        // A loop message: usually after every point, now and then before the last ones.
        kopt::Round r;
        r.seq = seq_of(rng() % 5 == 0 && at > 5 ? at - 2.5 : at + 0.5);
        r.round = static_cast<long long>(s.rounds.size() + 1);
        if (rng() % 2 && (trial % 2 || step > 60)) r.budget = 1 + rng() % 30;  // some runs state no budget for long
        r.wrapUp = rng() % 6 == 0;
        s.rounds.push_back(r);
      } else if (what == 8) {
        const std::size_t i = rng() % s.iterations.size();
        kopt::Iteration& it = s.iterations[i];
        if (it.pending) {
          it.pending = false;
          it.latencyMs = 2.0, it.correct = true;
        } else {
          it.finalized = !it.finalized;
        }
        first = i;
      } else {
        s.profileSeqs.push_back(seq_of(at - (rng() % 4) - (rng() % 3 == 0 ? rng() % 40 : 0)));
      }
      const kopt::RowTable rows(s.iterations);
      // The phases are updated at every step (a session counts the completed evaluations as events
      // come); the chart is written now and then, from the phases' changes since its last write.
      phases.update(rows, s.rounds, opt.budget, opt.fixedBudget, first);
      ASSERT_EQ(phases.completed(), kopt::completed_evals(rows, s.rounds)) << "trial " << trial << " step " << step;
      chart_first = std::min(chart_first, first);
      if (rng() % 3 == 0 && step + 1 < 100) continue;
      w.write(s, rows, phases, opt, chart_first);
      chart_first = std::numeric_limits<std::size_t>::max();
      std::string text;
      w.write_to(text);
      ASSERT_EQ(text, kopt::chart_json_text(s, opt)) << "trial " << trial << " step " << step;
      const kopt::json now = *kopt::parse_json(text);
      if (!prev.is_null()) {
        for (const char* k : {"points", "phases", "rowRounds"}) {
          for (std::size_t i = 0; i < w.first_change() && i < prev[k].size(); ++i) {
            ASSERT_EQ(prev[k][i], now[k][i]) << k << " " << i << " trial " << trial << " step " << step;
          }
        }
      }
      prev = now;
    }
  }
}
