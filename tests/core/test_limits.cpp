// Spec S-5 / DV-16, distance to the limit (issue 49): the fractions survive C-4's 12-entry cap in any
// order, the chart labels them per point and draws ★'s limit line, and the loop can wrap up at the limit.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "kopt/chart.hpp"
#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/labels.hpp"
#include "kopt/loop.hpp"

namespace {

using kopt::json;

json load(const std::string& name) {
  std::ifstream f(std::string(KOPT_FIXTURES_DIR) + "/vectors/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  auto j = kopt::parse_json(ss.str());
  EXPECT_TRUE(j.has_value()) << name;
  return j.value_or(json());
}

kopt::Series series_of(const std::string& vector_case) {
  return kopt::series_from_wire(load(vector_case + ".expected.json")["series"]);
}

kopt::Iteration point_from(const std::string& payload_text, std::vector<kopt::FieldNote>* notes) {
  kopt::Iteration it;
  kopt::apply_payload_fields(it, *kopt::parse_json(payload_text), notes);
  return it;
}

}  // namespace

TEST(LimitFractions, KeptPastTheCapWhateverTheOrder) {
  // After 12 others, and a 13th other that is dropped.
  std::string p = R"({"correct":true,"latency_ms":1,"native_metrics":{)";
  for (int i = 1; i <= 12; ++i) p += "\"m" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  p += R"("compute_fraction":0.31,"m13":13,"bandwidth_fraction":0.62}})";
  std::vector<kopt::FieldNote> notes;
  kopt::Iteration it = point_from(p, &notes);
  EXPECT_EQ(it.metrics.size(), 14u);
  EXPECT_EQ(it.metric("bandwidth_fraction"), 0.62);
  EXPECT_EQ(it.metric("compute_fraction"), 0.31);
  EXPECT_FALSE(it.metric("m13").has_value());
  EXPECT_EQ(it.limit_fraction(), 0.62);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].reason, "1 entry past the first 12: dropped");
  // First, then 14 others: they do not take two of the 12 places.
  p = R"({"correct":true,"latency_ms":1,"native_metrics":{"bandwidth_fraction":0.0755)";
  for (int i = 1; i <= 14; ++i) p += ",\"z" + std::to_string(i) + "\":" + std::to_string(i);
  p += "}}";
  it = point_from(p, nullptr);
  EXPECT_EQ(it.metrics.size(), 13u);
  EXPECT_EQ(it.metric("z12"), 12);
  EXPECT_FALSE(it.metric("z13").has_value());
  EXPECT_EQ(it.limit_fraction(), 0.0755);
  // None: no fraction.
  EXPECT_FALSE(point_from(R"({"correct":true,"native_metrics":{"speedup":2}})", nullptr).limit_fraction().has_value());
}

TEST(LimitFractions, TheVectorKeepsThemOnTheWire) {
  const json its = load("s09-limit-fractions-kept.expected.json")["series"]["iterations"];
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0]["metrics"].size(), 14u);
  EXPECT_EQ(its[0]["metrics"]["bandwidth_fraction"], 0.62);
  EXPECT_FALSE(its[0]["metrics"].contains("m13"));
  EXPECT_EQ(its[1]["metrics"].size(), 13u);
  EXPECT_EQ(its[1]["metrics"]["bandwidth_fraction"], 0.0755);
}

TEST(LimitFractions, TheChartLabelsThemAndDrawsTheLimitOfTheBest) {
  const json c = kopt::chart_json(series_of("s09-limit-fractions-kept"));
  EXPECT_EQ(c["points"][0]["bandwidthLabel"], "62%");
  EXPECT_EQ(c["points"][0]["computeLabel"], "31%");
  EXPECT_EQ(c["points"][1]["bandwidthLabel"], "7.55%");
  EXPECT_FALSE(c["points"][1].contains("computeLabel"));
  // ★ is the 1.0 ms point at 7.55 %: its bytes would move at the probed bandwidth in 75.5 µs, far above
  // the axes (they follow the measured latencies), so the line is held at the plot's top edge.
  ASSERT_TRUE(c.contains("limitLine")) << c.dump();
  const json& l = c["limitLine"];
  EXPECT_NEAR(l["latencyMs"].get<double>(), 0.0755, 1e-12);
  EXPECT_EQ(l["label"], "75.5µs");
  EXPECT_EQ(l["index"], 1);
  EXPECT_EQ(l["above"], true);
  EXPECT_EQ(l["y"], c["plot"]["top"]);
  EXPECT_FALSE(l.contains("below"));
  // A run whose points carry no fractions: neither labels nor a line (every earlier chart is as it was).
  const json plain = kopt::chart_json(series_of("s01-compare-rule-labels"));
  EXPECT_FALSE(plain.contains("limitLine"));
  for (const auto& pt : plain["points"]) EXPECT_FALSE(pt.contains("bandwidthLabel")) << pt.dump();
}

TEST(LimitFractions, ALimitInsideThePlotSitsWhereItsLatencyDoes) {
  // s10's ★: 1.0 ms at 70 % of the bandwidth, its own ×3 giving the pooled reference 3 ms (speedup mode).
  // Its limit, 0.7 ms, is past the top of the linear axis the two points span (1 / latency up to 1.2).
  kopt::Series s = series_of("s10-loop-at-limit");
  json c = kopt::chart_json(s);
  ASSERT_TRUE(c.contains("limitLine"));
  EXPECT_NEAR(c["limitLine"]["latencyMs"].get<double>(), 0.7, 1e-12);
  EXPECT_EQ(c["limitLine"]["label"], "×4.29 · 700µs");
  EXPECT_EQ(c["limitLine"]["above"], true);
  // At 95 % the limit, 0.95 ms, is inside the plot: the line sits where that latency does.
  s.iterations[1].metrics = {{"bandwidth_fraction", 0.95}};
  c = kopt::chart_json(s);
  const json& l = c["limitLine"];
  const kopt::ChartFrame f = kopt::ChartFrame::of(c);
  ASSERT_EQ(c["scale"], "linear");
  EXPECT_NEAR(l["y"].get<double>(), f.y0 + f.dy * (1.0 / 0.95), 0.06);
  EXPECT_GT(l["y"].get<double>(), c["plot"]["top"].get<double>());
  EXPECT_FALSE(l.contains("above"));
  EXPECT_FALSE(l.contains("below"));
  EXPECT_EQ(l["label"], "×3.16 · 950µs");
  // Beyond the probed bandwidth (an op that sits in a cache): the limit is slower than ★, below it.
  s.iterations[1].metrics = {{"bandwidth_fraction", 40.0}};
  c = kopt::chart_json(s);
  EXPECT_EQ(c["limitLine"]["below"], true);
  EXPECT_EQ(c["limitLine"]["y"], c["plot"]["bottom"]);
}

TEST(LimitFractions, TheLoopWrapsUpAtTheConfiguredFraction) {
  kopt::Series s = series_of("s10-loop-at-limit");
  kopt::LoopState st;
  st.budget = 20;
  EXPECT_EQ(kopt::decide_continuation(s, st, 2).action, "continue");  // off by default
  st.limitPct = 70;
  const kopt::Decision d = kopt::decide_continuation(s, st, 2);
  EXPECT_EQ(d.action, "wrap-up");
  EXPECT_EQ(d.reason, "at-limit");
  st.limitPct = 71;
  EXPECT_EQ(kopt::decide_continuation(s, st, 2).action, "continue");  // ★ at 70 %; the 90 % point is not ★
  // The budget still comes first, a finalize before both.
  st.limitPct = 50;
  st.budget = 2;
  EXPECT_EQ(kopt::decide_continuation(s, st, 2).reason, "budget");

  // Through the controller, with the setting from the plugin config.
  kopt::LoopController c(kopt::LoopSettings::from_json(*kopt::parse_json(R"({"wrapUpAtLimitPct":70})")));
  EXPECT_EQ(c.settings().wrapUpAtLimitPct, 70);
  c.arm(20, kopt::Lang::en);
  const kopt::Actions a = c.settled(s, kopt::HostFacts{});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, "wrap-up");
  EXPECT_NE(a[0].text.find("stopping (at-limit). The best kernel runs within the configured fraction of the machine's limit."),
            std::string::npos)
      << a[0].text;
  EXPECT_EQ(a[1].reason, "at-limit");
  // Out of bounds in the config: the default (off).
  EXPECT_EQ(kopt::LoopSettings::from_json(*kopt::parse_json(R"({"wrapUpAtLimitPct":101})")).wrapUpAtLimitPct, 0);
  const json rules = kopt::loop_rules_json();
  EXPECT_EQ(rules["wrapUpAtLimitPct"], (json{{"default", 0}, {"min", 0}, {"max", 100}}));
}

TEST(LimitFractions, TheWordsAreInTheOneTableAndSentToTheTab) {
  EXPECT_STREQ(kopt::word("limit.bandwidth", false), "{pct} of memory bandwidth");
  EXPECT_STREQ(kopt::word("limit.line", false), "100 % of memory bandwidth");
  EXPECT_STREQ(kopt::word("limit.bandwidth", true), "占内存带宽上限的 {pct}");
  const json w = *kopt::parse_json(kopt::words_json());
  EXPECT_EQ(w["en"]["limit.line"], "100 % of memory bandwidth");
  EXPECT_EQ(w["zh"]["limit.compute"], "占算力峰值的 {pct}");
  EXPECT_FALSE(w["en"].contains("md.bandwidth"));  // the export words stay out
}
