// Spec S (issue 49): the comparison rule, the labels' readers (chart whiskers and words, the finalize gap,
// the digest). The vectors s01…s08 cover the projection and the loop.
#include <gtest/gtest.h>
#include "kopt/labels.hpp"

#include <filesystem>

#include "json_compare.hpp"
#include "kopt/chart.hpp"
#include "kopt/noise.hpp"
#include "kopt/projector.hpp"
#include "kopt/supervisor.hpp"
#include "kopt/verdict.hpp"

using kopt::compare_latencies;
using kopt::Interval;
using kopt::Versus;
using kopt::json;

namespace {
kopt::Series from_vector(const std::string& name) {
  const json ev = kopt::test::load_json_file(std::string(KOPT_FIXTURES_DIR) + "/vectors/" + name + ".events.json");
  kopt::Projector p;
  p.feed(ev);
  return p.series();
}
}  // namespace

TEST(S2_Compare, OverlapIsSameDisjointIsFasterOrSlower) {
  EXPECT_EQ(compare_latencies(1.5, Interval{1.49, 1.51}, 2.0, Interval{1.98, 2.02}).verdict, Versus::faster);
  EXPECT_EQ(compare_latencies(2.0, Interval{1.98, 2.02}, 1.5, Interval{1.49, 1.51}).verdict, Versus::slower);
  EXPECT_EQ(compare_latencies(1.95, Interval{1.9, 2.0}, 2.0, Interval{1.96, 2.04}).verdict, Versus::same);
}

TEST(S2_Compare, ATinyEffectIsSameEvenWhenTheIntervalsAreDisjoint) {
  const auto c = compare_latencies(1.49, Interval{1.489, 1.491}, 1.5, Interval{1.499, 1.501});
  EXPECT_EQ(c.verdict, Versus::same);
  EXPECT_NEAR(c.effectPct, 0.6667, 1e-3);
  // At exactly the minimum effect it counts.
  EXPECT_EQ(compare_latencies(0.99, Interval{0.9899, 0.9901}, 1.0, Interval{0.9999, 1.0001}).verdict, Versus::faster);
}

TEST(S2_Compare, AMissingIntervalIsUnsureButTheEffectIsStillMeasured) {
  const auto c = compare_latencies(1.0, std::nullopt, 2.0, Interval{1.9, 2.1});
  EXPECT_EQ(c.verdict, Versus::unsure);
  EXPECT_DOUBLE_EQ(c.effectPct, 50.0);
  EXPECT_EQ(compare_latencies(1.0, Interval{0.9, 1.1}, 2.0, std::nullopt).verdict, Versus::unsure);
}

TEST(S2_Compare, ThePlusMinusIsTheHalfWidthsCombined) {
  const auto c = compare_latencies(1.0, Interval{0.97, 1.03}, 2.0, Interval{1.96, 2.04});
  EXPECT_NEAR(c.pmPct, std::sqrt(0.03 * 0.03 + 0.04 * 0.04) / 2.0 * 100.0, 1e-9);
}

TEST(S1_Interval, OnlyAnIntervalHoldingItsLatencyIsKept) {
  EXPECT_TRUE(kopt::valid_interval(1.0, 2.0, 1.5));
  EXPECT_FALSE(kopt::valid_interval(1.6, 2.0, 1.5));
  EXPECT_FALSE(kopt::valid_interval(2.0, 1.0, 1.5));
  EXPECT_FALSE(kopt::valid_interval(0.0, 2.0, 1.5));
  EXPECT_FALSE(kopt::valid_interval(1.0, std::numeric_limits<double>::infinity(), 1.5));
}

TEST(S_Chart, WhiskersAndLabelsForPointsWithIntervals) {
  const json c = kopt::chart_json(from_vector("s01-compare-rule-labels"));
  const json& pts = c["points"];
  ASSERT_EQ(pts.size(), 7u);
  ASSERT_TRUE(pts[1]["ci"].is_array());
  // Linear axis: v = 1/latency, so the interval's low latency is the high end of the whisker.
  EXPECT_NEAR(pts[1]["ci"][0].get<double>(), 1 / 1.499, 1e-6);
  EXPECT_NEAR(pts[1]["ci"][1].get<double>(), 1 / 1.501, 1e-6);
  EXPECT_EQ(pts[1]["vsBest"]["v"], "faster");
  EXPECT_EQ(pts[1]["vsBest"]["pct"], 25);
  EXPECT_EQ(pts[1]["vsBestOf"], 0);
  EXPECT_EQ(pts[1]["vsReference"]["v"], "faster");
  EXPECT_EQ(pts[2]["vsBest"]["v"], "same");
  EXPECT_FALSE(pts[3].contains("ci"));         // no interval
  EXPECT_FALSE(pts[3].contains("vsBest"));     // and so no label
  EXPECT_EQ(pts[4]["vsBest"]["v"], "unsure");  // the best before it had no interval
  EXPECT_FALSE(pts[4]["vsBest"].contains("pm"));
  EXPECT_EQ(pts[6]["vsBest"]["v"], "slower");
  // The words, once per chart, in both languages.
  EXPECT_EQ(c["versusWords"]["en"]["best.same"], "same as the ★ before it within noise ({pct}% ± {pm})");
  EXPECT_TRUE(c["versusWords"]["zh"]["best.faster"].is_string());
  // A chart with no interval anywhere carries no words.
  EXPECT_FALSE(kopt::chart_json(from_vector("h06-final-latest-call-wins")).contains("versusWords"));
}

TEST(S3_FinalGap, JudgedByTheIntervalsWhenBothHaveThem) {
  const json beyond = kopt::chart_json(from_vector("s07-final-gap-beyond-noise"))["final"];
  EXPECT_EQ(beyond["gapVerdict"], "slower");
  EXPECT_EQ(beyond["gapFlag"], true);  // 8 %: under the fixed 10 %, beyond the noise
  const json within = kopt::chart_json(from_vector("s08-final-gap-within-noise"))["final"];
  EXPECT_EQ(within["gapVerdict"], "same");
  EXPECT_EQ(within["gapFlag"], false);  // 12 %: over the fixed 10 %, within the noise
  EXPECT_DOUBLE_EQ(within["gapPct"].get<double>(), 12.0);
}

TEST(S_Digest, TheReviewerIsToldWhichGainsAreWithinNoise) {
  const std::string d = kopt::supervisor_digest(from_vector("s01-compare-rule-labels"), {});
  EXPECT_NE(d.find("(faster than the ★ before it by 25.0% ± 1.0)"), std::string::npos) << d;
  EXPECT_NE(d.find("(same as the ★ before it within noise (0.7% ± 0.1))"), std::string::npos) << d;
  EXPECT_NE(d.find("[1.499..1.501 ms]"), std::string::npos) << d;
  const std::string s3 = kopt::supervisor_digest(from_vector("s03-loop-no-significant-progress"), {});
  EXPECT_NE(s3.find("The best row is within noise of the best before it"), std::string::npos) << s3;
}

// S-5: the reviewer reads how far the best runs from the machine's limit, in the table's words.
TEST(S_Digest, TheReviewerIsToldTheBestsDistanceToTheLimit) {
  const kopt::Series s = from_vector("s09-limit-fractions-kept");
  ASSERT_TRUE(s.bestIndex.has_value());
  const auto& b = s.iterations[*s.bestIndex];
  const std::string d = kopt::supervisor_digest(s, {});
  const auto bw = b.metric("bandwidth_fraction");
  ASSERT_TRUE(bw.has_value());
  EXPECT_NE(d.find("Best row's distance to the limit: " + kopt::fraction_label(*bw) + " of memory bandwidth"), std::string::npos) << d;
  const std::string none = kopt::supervisor_digest(from_vector("s01-compare-rule-labels"), {});
  EXPECT_NE(none.find("Best row's distance to the limit: unknown"), std::string::npos) << none;
}

TEST(S_Words, EveryLabelHasItsWordsAndTheyFillOneDecimal) {
  for (const char* k : {"best", "ref", "gap"})
    for (const char* v : {"faster", "same", "slower"}) {
      const std::string key = std::string(k) + "." + v;
      EXPECT_FALSE(kopt::versus_text(key, 3.14159, 0.8, false).empty()) << key;
      EXPECT_FALSE(kopt::versus_text(key, 3.14159, 0.8, true).empty()) << key;
    }
  EXPECT_EQ(kopt::versus_text("best.faster", 3.14159, 0.75, false), "faster than the ★ before it by 3.1% ± 0.8");
  EXPECT_EQ(kopt::versus_text("nope", 1, 1, false), "");
}
