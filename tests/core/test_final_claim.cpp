// The Final claim (spec H-8, DV-14): one rule in derived.cpp, read by the chart, the comparison, the
// digest and the loop. The vectors h04…h08 cover the projection; these cover the rule's edges and its readers.
#include <gtest/gtest.h>

#include "kopt/chart.hpp"
#include "kopt/compare.hpp"
#include "kopt/derived.hpp"
#include "kopt/projector.hpp"
#include "kopt/supervisor.hpp"
#include "kopt/verdict.hpp"

#include "test_events.hpp"

using kopt::json;

namespace {

using kopt::test::call;
using kopt::test::result;
json eval(int seq, const std::string& payload) {
  return json::array({call(seq, "e" + std::to_string(seq), "kernel_evaluate", json::object()),
                      result(seq + 1, "e" + std::to_string(seq), payload)});
}
void add(json& log, const json& events) {
  for (const auto& e : events) log.push_back(e);
}

// verified 2 ms (#1), wrong 1 ms (#2), then the given finalize calls.
json two_evals() {
  json log = json::array();
  add(log, eval(1, R"({"evaluation_id":"0001","correct":true,"latency_ms":2})"));
  add(log, eval(3, R"({"evaluation_id":"0002","correct":false,"latency_ms":1})"));
  return log;
}

kopt::Iteration point(double latency, bool correct = true) {
  kopt::Iteration it;
  it.latencyMs = latency;
  it.correct = correct;
  return it;
}

}  // namespace

TEST(FinalClaim, NonPositiveOrNonFiniteLatencyIsRefused) {
  // The contract turns such a latency into an error before it reaches a point (B-6); the rule does not rely on it.
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    std::vector<kopt::Iteration> pts{point(bad)};
    kopt::FinalizeCall c;
    c.named = 0;
    const auto claim = kopt::final_claim(pts, c);
    ASSERT_TRUE(claim.refused) << bad;
    EXPECT_EQ(*claim.refused, "bad-latency") << bad;
    EXPECT_FALSE(claim.index);
  }
}

TEST(FinalClaim, ANamedReplayRowIsRefusedAndANamedMissingRowIsNotFound) {
  std::vector<kopt::Iteration> pts{point(1)};
  pts[0].channel = "replay";
  kopt::FinalizeCall c;
  c.named = 0;
  EXPECT_EQ(kopt::final_claim(pts, c).refused, std::optional<std::string>("replay"));
  c.named = 5;  // out of range: nothing is named
  EXPECT_EQ(kopt::final_claim(pts, c).refused, std::optional<std::string>("not-found"));
}

TEST(FinalClaim, EveryRefusalHasWordsInBothLanguages) {
  for (const char* why : {"not-found", "replay", "pending", "hack", "evaluator", "compile", "error", "wrong", "unknown",
                          "no-latency", "bad-latency", "remeasure-wrong"}) {
    const kopt::Words w = kopt::final_refusal_words(why);
    // A reason without its own words would show the bare code after the prefix.
    EXPECT_NE(w.en, std::string("Final refused: ") + why) << why;
    EXPECT_NE(w.zh, std::string("最终结果被拒绝：") + why) << why;
    EXPECT_EQ(w.en.rfind("Final refused: ", 0), 0u) << why;
    EXPECT_EQ(w.zh.rfind("最终结果被拒绝：", 0), 0u) << why;
  }
}

TEST(FinalClaim, ChartReportsTheRefusalAndNoNumber) {
  json log = two_evals();
  add(log, json::array({call(5, "f", "run_finalize", {{"evaluation_id", "0002"}}), result(6, "f", "ok")}));
  kopt::Projector p;
  p.feed(log);
  const json chart = kopt::chart_json(p.series());
  EXPECT_TRUE(chart["final"].is_null());
  ASSERT_TRUE(chart["finalClaim"].is_object());
  EXPECT_EQ(chart["finalClaim"]["refused"], "wrong");
  EXPECT_EQ(chart["finalClaim"]["named"], 1);
  EXPECT_EQ(chart["finalClaim"]["refusedText"]["en"], kopt::final_refusal_words("wrong").en);
  // The per-point mark still says the agent asked for it (H-2).
  EXPECT_TRUE(p.series().iterations[1].finalized);
}

TEST(FinalClaim, TheLaterCallDecidesInTheChartTheComparisonAndTheDigest) {
  json log = two_evals();
  add(log, eval(5, R"({"evaluation_id":"0003","correct":true,"latency_ms":1.5})"));
  // First the faster one, then the agent overrules it with the earlier, slower one.
  add(log, json::array({call(7, "f1", "run_finalize", {{"evaluation_id", "0003"}}), result(8, "f1", "ok"),
                        call(9, "f2", "run_finalize", {{"evaluation_id", "0001"}}), result(10, "f2", "ok")}));
  kopt::Projector p;
  p.feed(log);
  const kopt::Series s = p.series();
  const json chart = kopt::chart_json(s);
  EXPECT_EQ(chart["final"]["index"], 0);
  EXPECT_EQ(chart["finalClaim"]["callSeq"], 9);
  const kopt::RunSummary r = kopt::summarize_run("t", s, {});
  ASSERT_TRUE(r.final);
  EXPECT_EQ(r.final->index, 0u);
  const std::string digest = kopt::supervisor_digest(s, {});
  EXPECT_NE(digest.find("Final: #1 2 ms."), std::string::npos) << digest;
  // The best (#3, 1.5 ms) is strictly faster than the Final, and the digest says so.
  EXPECT_NE(digest.find("The best honest row #3 is faster than the Final."), std::string::npos) << digest;
}

TEST(FinalClaim, AnEqualBestIsNotCalledFaster) {
  json log = json::array();
  add(log, eval(1, R"({"evaluation_id":"0001","correct":true,"latency_ms":2})"));
  add(log, eval(3, R"({"evaluation_id":"0002","correct":true,"latency_ms":2})"));
  add(log, json::array({call(5, "f", "run_finalize", {{"evaluation_id", "0002"}}), result(6, "f", "ok")}));
  kopt::Projector p;
  p.feed(log);
  const std::string digest = kopt::supervisor_digest(p.series(), {});
  EXPECT_NE(digest.find("Final: #2 2 ms."), std::string::npos) << digest;
  EXPECT_EQ(digest.find("faster than the Final"), std::string::npos) << digest;
}

TEST(FinalClaim, ARefusedFinalizeDoesNotStopTheLoop) {
  json log = two_evals();
  add(log, json::array({call(5, "f", "run_finalize", {{"evaluation_id", "0002"}}), result(6, "f", "ok")}));
  kopt::Projector p;
  p.feed(log);
  kopt::LoopState st;
  st.round = 1;
  const kopt::Decision d = kopt::decide_continuation(p.series(), st, 2);
  EXPECT_EQ(d.action, "continue");
  EXPECT_FALSE(kopt::accepted_finalize_seq(p.series()));
  // Finalizing the verified one stops it as finalized.
  p.feed(json::array({call(7, "g", "run_finalize", {{"evaluation_id", "0001"}}), result(8, "g", "ok")}));
  const kopt::Decision d2 = kopt::decide_continuation(p.series(), st, 2);
  EXPECT_EQ(d2.action, "stop");
  EXPECT_EQ(d2.reason, std::optional<std::string>("finalized"));
  EXPECT_EQ(kopt::accepted_finalize_seq(p.series()), std::optional<double>(7));
}

TEST(FinalClaim, TheSeriesWireCarriesTheFinalizeCallBack) {
  json log = two_evals();
  add(log, json::array({call(5, "f", "run_finalize", {{"evaluation_id", "0001"}}), result(6, "f", "ok")}));
  kopt::Projector p;
  p.feed(log);
  const json body = json::parse(p.series_json("t", 0));
  ASSERT_TRUE(body["finalize"].is_object());
  EXPECT_EQ(body["finalize"]["seq"], 5);
  EXPECT_EQ(body["finalize"]["named"], 0);
  const kopt::Series back = kopt::series_from_wire(body);
  ASSERT_TRUE(back.finalize);
  EXPECT_EQ(back.finalize->named, std::optional<std::size_t>(0));
  EXPECT_EQ(kopt::chart_json(back)["final"], kopt::chart_json(p.series())["final"]);
  // No finalize call: no key (the body of a run without one is as before).
  kopt::Projector q;
  q.feed(two_evals());
  EXPECT_FALSE(json::parse(q.series_json("t", 0)).contains("finalize"));
}
