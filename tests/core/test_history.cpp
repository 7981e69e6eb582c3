// History is the log's (M-5 with DV-11, and the record's supervision column): what a row is labelled
// and which loop message it belongs to never depend on the loop state in memory, so re-arming a
// loop changes nothing already run and a replay after a restart draws what was seen live.
#include <gtest/gtest.h>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "kopt/report.hpp"
#include "test_loop_helpers.hpp"

using namespace kopt;
using looptest::seq;

namespace {

Iteration point(double at, bool pending = false) {
  Iteration it;
  it.seq = seq(at);
  it.tool = "bash";
  it.channel = "shell";
  it.correct = true;
  it.latencyMs = 5.0 - at / 100;
  it.pending = pending;
  return it;
}

Round continuation(double at, long long n, long long used, long long budget) {
  Round r;
  r.seq = seq(at);
  r.round = n;
  r.evalsUsed = used;
  r.budget = budget;
  return r;
}

Round wrap_up(double at, long long used, long long budget) {
  Round r;
  r.seq = seq(at);
  r.wrapUp = true;
  r.evalsUsed = used;
  r.budget = budget;
  return r;
}

std::vector<std::string> labels(const std::vector<std::string>& v) { return v; }

}  // namespace

TEST(History, DV11_EachRowIsJudgedByTheBudgetItsRunLogged) {
  // Run 1 (budget 2) overshoots once and wraps up; run 2 is armed with budget 10 and goes on.
  Series s;
  for (double at : {10, 20, 30}) s.iterations.push_back(point(at));
  s.rounds.push_back(continuation(15, 1, 1, 2));
  s.rounds.push_back(wrap_up(35, 3, 2));
  s.iterations.push_back(point(40));  // the wrap-up turn's validation
  s.rounds.push_back(continuation(50, 1, 3, 10));
  for (double at : {60, 70}) s.iterations.push_back(point(at));
  const std::vector<std::string> want{"optimization", "optimization", "over-budget", "wrap-up", "optimization",
                                      "optimization"};
  // The loop state's budget (whatever was armed last) changes nothing: the log says it all.
  for (long long armed : {0LL, 1LL, 2LL, 10LL, 9999LL}) EXPECT_EQ(evaluation_phases(s, armed), want) << armed;
}

TEST(History, DV11_RowsBeforeTheFirstMessageTakeTheBudgetThatCountedThem) {
  Series s;
  for (double at : {1, 2, 3}) s.iterations.push_back(point(at));
  s.rounds.push_back(wrap_up(5, 3, 2));  // re-armed /kloop 2 on 3 manual evaluations: wraps up at once
  EXPECT_EQ(labels(evaluation_phases(s, 20)),
            (std::vector<std::string>{"optimization", "optimization", "over-budget"}));
}

TEST(History, DV11_NoStatedBudgetUsesTheFallbackAndAFixedBudgetIsAWhatIf) {
  Series s;
  for (double at : {1, 2, 3}) s.iterations.push_back(point(at));
  s.iterations.push_back(point(4, true));  // pending: labelled by the count so far, not counted
  EXPECT_EQ(evaluation_phases(s, 2),
            (std::vector<std::string>{"optimization", "optimization", "over-budget", "over-budget"}));
  EXPECT_EQ(evaluation_phases(s, 0), std::vector<std::string>(4, "optimization"));
  s.rounds.push_back(continuation(1.5, 1, 1, 20));
  EXPECT_EQ(evaluation_phases(s, 2), std::vector<std::string>(4, "optimization"));
  EXPECT_EQ(evaluation_phases_fixed(s, 2),
            (std::vector<std::string>{"optimization", "optimization", "over-budget", "over-budget"}));
}

TEST(History, TheChartIgnoresTheLoopStateInMemory) {
  // The /series body carries control.loop.budget (the budget armed last); the curve must not read it.
  Series s;
  for (double at : {10, 20, 30, 40}) s.iterations.push_back(point(at));
  s.rounds.push_back(continuation(15, 1, 1, 6));
  json wire = json::parse(R"({"iterations":[],"rounds":[],"control":{"loop":{"armed":true,"budget":2}}})");
  for (const auto& it : s.iterations)
    wire["iterations"].push_back(json{{"seq", it.seq.num}, {"tool", "bash"}, {"correct", true}, {"latencyMs", *it.latencyMs}});
  wire["rounds"].push_back(json{{"seq", 15}, {"round", 1}, {"evalsUsed", 1}, {"budget", 6}});
  const json c = chart_json_from_wire(wire);
  EXPECT_EQ(c["phases"], json(std::vector<std::string>(4, "optimization")));
  EXPECT_EQ(c["counts"]["overBudget"], 0);
  EXPECT_EQ(c["rowRounds"], json::parse("[null, 0, 0, 0]"));
}

TEST(History, TheSupervisionColumnIsTheRoundInForceNeverAnOlderReview) {
  Series s;
  Round r1 = continuation(10, 1, 0, 8);
  r1.review = "Profile first.";
  Round r2 = continuation(20, 2, 1, 8);
  r2.reviewFailed = true;  // the review of round 2 failed
  Round r3 = continuation(30, 3, 2, 8);  // no supervision this round
  s.rounds = {r1, r2, r3};
  for (double at : {5, 15, 25, 35}) s.iterations.push_back(point(at));
  EXPECT_EQ(RoundIndex(s.rounds).in_force(5), std::nullopt);
  EXPECT_EQ(RoundIndex(s.rounds).in_force(15), std::optional<std::size_t>(0));
  EXPECT_EQ(RoundIndex(s.rounds).in_force(25), std::optional<std::size_t>(1));
  EXPECT_EQ(RoundIndex(s.rounds).in_force(35), std::optional<std::size_t>(2));
  EXPECT_EQ(RoundIndex(s.rounds).in_force(20), std::optional<std::size_t>(0));  // strictly before
  EXPECT_EQ(chart_json(s)["rowRounds"], json::parse("[null, 0, 1, 2]"));
  // The report's record says the round-2 review failed and shows no advice on that row.
  ReportInput in;
  in.series = s;
  const Report rep = build_report(in);
  ASSERT_EQ(rep.rows.size(), 4u);
  EXPECT_EQ(rep.rows[2].round, std::optional<std::size_t>(1));
  const std::string html = report_html(rep);
  EXPECT_NE(html.find("data-kopt=\"review-failed\""), std::string::npos);
}
