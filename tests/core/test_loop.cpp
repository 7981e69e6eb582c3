// LoopController decisions, one test per rule (M-7..M-9, M-14, N-2, Q-2) plus the commands.
#include <gtest/gtest.h>

#include "kopt/loop.hpp"
#include "test_loop_helpers.hpp"

using namespace kopt;
using namespace kopt::looptest;
using T = Action::Type;

namespace {

LoopController armed(long long budget, LoopSettings st = {}) {
  LoopController c(st);
  c.arm(budget, Lang::en);
  return c;
}

LoopController supervised(long long budget, LoopSettings st = {}) {
  LoopController c(st);
  c.set_config_route(route());
  EXPECT_FALSE(c.set_supervise(true).has_value());
  c.arm(budget, Lang::en);
  return c;
}

}  // namespace

TEST(LoopArm, M9_BudgetDefaultAndRange) {
  LoopSettings st;
  st.defaultBudget = 7;
  LoopController c(st);
  EXPECT_TRUE(c.arm(std::nullopt, Lang::zh).empty());
  EXPECT_TRUE(c.armed());
  EXPECT_EQ(c.budget(), 7);
  EXPECT_EQ(c.language(), Lang::zh);
  c.arm(0, Lang::en);
  EXPECT_EQ(c.budget(), 7);
  c.arm(10000, Lang::en);
  EXPECT_EQ(c.budget(), 7);
  c.arm(3, Lang::en);
  EXPECT_EQ(c.budget(), 3);
}

TEST(LoopArm, M9_ArmingResetsTheRun) {
  LoopController c = armed(10);
  c.settled(run(1), idle());
  c.settled(run(2), idle());
  EXPECT_EQ(c.round(), 2);
  c.stop();
  EXPECT_EQ(c.stop_reason(), std::optional<std::string>("stopped"));
  c.arm(5, Lang::en);
  EXPECT_EQ(c.round(), 0);
  EXPECT_FALSE(c.stop_reason());
  const LoopState st = c.loop_state();
  EXPECT_EQ(st.lastEvalCount, 0);
  EXPECT_EQ(st.noProgressRounds, 0);
  EXPECT_FALSE(st.challengedFinalizeSeq);
}

TEST(LoopSettle, NothingWhenDisarmedBusyOrHumanQueued) {
  LoopController never;
  EXPECT_TRUE(never.settled(run(1), idle()).empty());
  LoopController c = armed(10);
  EXPECT_TRUE(c.settled(run(1), busy()).empty());
  HostFacts q;
  q.humanQueued = true;
  EXPECT_TRUE(c.settled(run(1), q).empty());
  EXPECT_EQ(c.round(), 0);
  EXPECT_EQ(count(c.settled(run(1), idle()), T::send), 1);
}

TEST(LoopSettle, M7_ContinueSendsOneContinuationWithPace) {
  LoopController c = armed(10);
  const Actions a = c.settled(run(2), idle());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, T::send);
  EXPECT_EQ(a[0].kind, "continuation");
  EXPECT_EQ(a[0].text.rfind("[kernel-loop round 1] 2/10 evaluations used", 0), 0u);
  EXPECT_NE(a[0].text.find("at most 3 more evaluations"), std::string::npos);
  EXPECT_EQ(c.round(), 1);
  EXPECT_EQ(c.loop_state().lastEvalCount, 2);
}

TEST(LoopSettle, PaceNeverAsksPastTheBudget) {
  LoopController c = armed(4);
  const Actions a = c.settled(run(3), idle());
  ASSERT_EQ(count(a, T::send), 1);
  EXPECT_NE(a[0].text.find("at most 1 more evaluations"), std::string::npos);
  LoopSettings st;
  st.evalsPerTurn = 0;
  LoopController nopace = armed(4, st);
  EXPECT_EQ(nopace.settled(run(1), idle())[0].text.find("Pace:"), std::string::npos);
}

TEST(LoopSettle, M7_BudgetSpentWrapsUpAndDisarms) {
  LoopController c = armed(3);
  c.settled(run(1), idle());
  const Actions a = c.settled(run(3), idle());
  ASSERT_EQ(count(a, T::send), 1);
  EXPECT_EQ(find(a, T::send)->kind, "wrap-up");
  EXPECT_EQ(find(a, T::send)->text.rfind("[kernel-loop wrap-up] 3/3 evaluations used", 0), 0u);
  ASSERT_NE(find(a, T::disarmed), nullptr);
  EXPECT_EQ(find(a, T::disarmed)->reason, "budget");
  EXPECT_FALSE(c.armed());
  EXPECT_EQ(c.stop_reason(), std::optional<std::string>("budget"));
  EXPECT_TRUE(c.settled(run(4), idle()).empty());  // disarmed: the wrap-up turn ends quietly
}

TEST(LoopSettle, M7_TwoRoundsWithoutNewEvaluationWrapUp) {
  LoopController c = armed(10);
  EXPECT_EQ(find(c.settled(run(2), idle()), T::send)->kind, "continuation");   // round 1
  EXPECT_EQ(find(c.settled(run(2), idle()), T::send)->kind, "continuation");   // no progress once
  EXPECT_EQ(c.loop_state().noProgressRounds, 1);
  const Actions a = c.settled(run(2), idle());                                 // twice → wrap-up
  EXPECT_EQ(find(a, T::send)->kind, "wrap-up");
  EXPECT_EQ(find(a, T::disarmed)->reason, "no-progress");
}

TEST(LoopSettle, M8_ProgressResetsTheNoProgressCount) {
  LoopController c = armed(10);
  c.settled(run(2), idle());
  c.settled(run(2), idle());
  EXPECT_EQ(c.loop_state().noProgressRounds, 1);
  c.settled(run(3), idle());
  EXPECT_EQ(c.loop_state().noProgressRounds, 0);
  EXPECT_TRUE(c.armed());
}

TEST(LoopSettle, M7_FinalizeStopsWithoutMessage) {
  LoopController c = armed(10);
  c.settled(run(1), idle());
  const Actions a = c.settled(finalized(2, 1), idle());
  EXPECT_EQ(count(a, T::send), 0);
  EXPECT_EQ(find(a, T::disarmed)->reason, "finalized");
  EXPECT_FALSE(c.armed());
}

// H-8: a finalize the Final rule refuses (here it names a wrong result) does not end the run as finalized.
TEST(LoopSettle, M7_RefusedFinalizeDoesNotStop) {
  LoopController c = armed(10);
  c.settled(run(1), idle());
  Series s = finalized(2, 1);
  s.iterations[1].correct = false;
  const Actions a = c.settled(s, idle());
  EXPECT_EQ(find(a, T::disarmed), nullptr);
  EXPECT_TRUE(c.armed());
}

TEST(LoopStop, M9_HumanStopAbortsAtOnceAndSendsNoWrapUp) {
  LoopController c = armed(10);
  c.settled(run(1), idle());
  const Actions a = c.stop();
  ASSERT_GE(a.size(), 1u);
  EXPECT_EQ(a[0].type, T::abort_turn);  // first
  EXPECT_EQ(count(a, T::send), 0);
  EXPECT_EQ(find(a, T::disarmed)->reason, "stopped");
  EXPECT_FALSE(c.armed());
  EXPECT_TRUE(c.settled(run(2), idle()).empty());
  // Not armed: still aborts (the human asked), no error, reason kept.
  const Actions again = c.stop();
  EXPECT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].type, T::abort_turn);
}

TEST(LoopStop, M9_AbortedTurnDisarms) {
  LoopController c = armed(10);
  EXPECT_TRUE(c.turn_ended("completed").empty());
  EXPECT_TRUE(c.turn_ended("error").empty());
  EXPECT_TRUE(c.armed());
  const Actions a = c.turn_ended("aborted");
  EXPECT_EQ(find(a, T::disarmed)->reason, "stopped");
  EXPECT_FALSE(c.armed());
  EXPECT_TRUE(c.turn_ended("aborted").empty());
}

TEST(LoopStop, M9_HostCancelWhileIdleDisarmsWithoutASecondAbort) {
  // session.cancel in the settle window: no turn ends, the host's cancel is the only signal.
  LoopController c = armed(10);
  c.settled(run(1), idle());
  const Actions a = c.host_cancelled("user");
  EXPECT_EQ(count(a, T::abort_turn), 0);  // the host is already cancelling
  EXPECT_EQ(count(a, T::send), 0);
  EXPECT_EQ(find(a, T::disarmed)->reason, "stopped");
  EXPECT_FALSE(c.armed());
  EXPECT_TRUE(c.settled(run(2), idle()).empty());
  EXPECT_TRUE(c.host_cancelled("user").empty());
  // During a review: the answer, when it comes, sends nothing.
  LoopController d = supervised(10);
  const auto tok = d.settled(run(1), idle())[0].token;
  EXPECT_EQ(find(d.host_cancelled("user"), T::disarmed)->reason, "stopped");
  EXPECT_FALSE(d.review_pending());
  EXPECT_TRUE(d.supervisor_answered(tok, answer("advice"), run(1), idle()).empty());
  // Any cause: a parent's cancel or the agent's disposal stops the loop too.
  for (const char* cause : {"parent", "hook", "disposed", ""}) {
    LoopController e = armed(10);
    EXPECT_EQ(find(e.host_cancelled(cause), T::disarmed)->reason, "stopped") << cause;
  }
}

TEST(LoopSupervision, M14_OnNeedsARouteAndTheOverrideWins) {
  LoopController c;
  EXPECT_TRUE(c.set_supervise(true).has_value());
  EXPECT_FALSE(c.supervise());
  c.set_config_route(route("cfg", "m1"));
  EXPECT_FALSE(c.set_supervise(true).has_value());
  EXPECT_EQ(c.effective_route()->provider, "cfg");
  c.set_override(route("sess", "m2"));
  EXPECT_EQ(c.effective_route()->provider, "sess");
  json ctl = c.control_json(nullptr);
  EXPECT_EQ(ctl["supervisor"]["effective"]["source"], "session");
  EXPECT_EQ(ctl["supervisor"]["configRoute"]["model"], "m1");
  c.set_override(std::nullopt);
  EXPECT_EQ(c.control_json(nullptr)["supervisor"]["effective"]["source"], "config");
  EXPECT_FALSE(c.set_supervise(false).has_value());
}

TEST(LoopSupervision, NoReviewWithoutAnythingToReview) {
  LoopController c = supervised(10);
  const Actions a = c.settled(run(0), idle());  // M-12: nothing reviewable
  EXPECT_EQ(find(a, T::send)->kind, "continuation");
  EXPECT_EQ(count(a, T::review), 0);
}

TEST(LoopSupervision, AdviceRidesTheNextContinuation) {
  LoopController c = supervised(10);
  const Actions ask = c.settled(run(2), idle());
  ASSERT_EQ(ask.size(), 1u);
  ASSERT_EQ(ask[0].type, T::review);
  EXPECT_EQ(ask[0].reviewKind, ReviewKind::progress);
  EXPECT_EQ(ask[0].route.model, "deepseek-v4-pro");
  EXPECT_NE(ask[0].prompt.find("2/10"), std::string::npos);
  EXPECT_TRUE(c.review_pending());
  EXPECT_EQ(c.round(), 0);  // nothing is committed before the answer
  EXPECT_TRUE(c.settled(run(2), idle()).empty());  // one checkpoint at a time
  const Actions a = c.supervisor_answered(ask[0].token, answer("Profile once before more variants."), run(2), idle());
  ASSERT_EQ(count(a, T::send), 1);
  EXPECT_NE(a[0].text.find("Supervisor review (advisory, from the second model):\nProfile once before more variants."),
            std::string::npos);
  EXPECT_EQ(c.control_json(nullptr)["supervisor"]["lastAdvice"], "Profile once before more variants.");
  EXPECT_EQ(c.round(), 1);
}

TEST(LoopSupervision, ApprovalIsOneOkLine) {
  LoopController c = supervised(10);
  const auto tok = c.settled(run(1), idle())[0].token;
  const Actions a = c.supervisor_answered(tok, answer("OK: four families tried"), run(1), idle());
  EXPECT_NE(a[0].text.find("Supervisor review: OK. four families tried"), std::string::npos);
  EXPECT_FALSE(c.control_json(nullptr)["supervisor"].contains("lastAdvice"));
}

TEST(LoopSupervision, N2_FailureTimeoutOrSilenceIsNoRecordNeverApproval) {
  for (const auto& ans : {answer(""), answer("   "), answer("partial advice", "error"), answer("OK", "timeout"),
                          answer("", "aborted")}) {
    LoopController c = supervised(10);
    const auto tok = c.settled(run(1), idle())[0].token;
    const Actions a = c.supervisor_answered(tok, ans, run(1), idle());
    ASSERT_EQ(count(a, T::send), 1) << ans.text << "/" << ans.finish;
    // No advice and never an approval, but the message says the review failed (and why), so the
    // record shows a failure rather than an older review.
    EXPECT_EQ(a[0].text.find(anchors::kReviewOkLine), std::string::npos);
    EXPECT_EQ(a[0].text.find(anchors::kReviewHeader), std::string::npos);
    const auto at = a[0].text.find(anchors::kReviewFailedLine);
    ASSERT_NE(at, std::string::npos) << a[0].text;
    const std::string why = ans.finish == "stop" ? "empty" : ans.finish;
    EXPECT_NE(a[0].text.find("(" + why + ")", at), std::string::npos) << a[0].text;
    EXPECT_FALSE(c.review_pending());
  }
  // Without supervision there is no review line at all.
  LoopController plain = armed(10);
  const Actions a = plain.settled(run(1), idle());
  ASSERT_EQ(count(a, T::send), 1);
  EXPECT_EQ(a[0].text.find("Supervisor review"), std::string::npos);
}

TEST(LoopSupervision, N2_MaxTokensSilenceRetriesOnceWithReasoningOff) {
  LoopController c = supervised(10);
  Route r = route();
  r.reasoningEffort = "high";
  c.set_override(r);
  const Action ask = c.settled(run(1), idle())[0];
  EXPECT_EQ(ask.route.reasoningEffort, std::optional<std::string>("high"));
  const Actions retry = c.supervisor_answered(ask.token, answer("", "max-tokens"), run(1), idle());
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].type, T::review);
  EXPECT_EQ(retry[0].attempt, 2);
  EXPECT_EQ(retry[0].route.reasoningEffort, std::optional<std::string>("off"));
  EXPECT_EQ(retry[0].token, ask.token);
  const Actions a = c.supervisor_answered(ask.token, answer("", "max-tokens"), run(1), idle());
  ASSERT_EQ(count(a, T::send), 1);  // not a third call: go on without a review
  EXPECT_EQ(a[0].text.find(anchors::kReviewOkLine), std::string::npos);
  EXPECT_EQ(a[0].text.find(anchors::kReviewHeader), std::string::npos);
  EXPECT_NE(a[0].text.find(std::string(anchors::kReviewFailedLine) + " The second model's answer was empty (empty)"),
            std::string::npos) << a[0].text;
}

TEST(LoopSupervision, MaxTokensWithTextIsAnAnswer) {
  LoopController c = supervised(10);
  const auto tok = c.settled(run(1), idle())[0].token;
  const Actions a = c.supervisor_answered(tok, answer("Fuse the epilogue", "max-tokens"), run(1), idle());
  EXPECT_NE(a[0].text.find("Fuse the epilogue"), std::string::npos);
}

TEST(LoopSupervision, StaleAndForeignTokensAreIgnored) {
  LoopController c = supervised(10);
  const auto tok = c.settled(run(1), idle())[0].token;
  EXPECT_TRUE(c.supervisor_answered(tok + 1, answer("x"), run(1), idle()).empty());
  EXPECT_EQ(count(c.supervisor_answered(tok, answer("x"), run(1), idle()), T::send), 1);
  EXPECT_TRUE(c.supervisor_answered(tok, answer("x"), run(1), idle()).empty());  // answered once only
}

TEST(LoopSupervision, M9_StopDuringReviewWins) {
  LoopController c = supervised(10);
  const auto tok = c.settled(run(1), idle())[0].token;
  c.stop();
  EXPECT_TRUE(c.supervisor_answered(tok, answer("advice"), run(1), idle()).empty());
  EXPECT_EQ(c.stop_reason(), std::optional<std::string>("stopped"));
  // Re-armed meanwhile: the old review still must not speak.
  LoopController d = supervised(10);
  const auto tok2 = d.settled(run(1), idle())[0].token;
  d.arm(5, Lang::en);
  EXPECT_TRUE(d.supervisor_answered(tok2, answer("advice"), run(1), idle()).empty());
}

TEST(LoopSupervision, M8_RecheckAfterTheAnswer) {
  LoopController c = supervised(10);
  const auto tok = c.settled(run(1), idle())[0].token;
  // The human took the session while the supervisor was thinking: send nothing.
  EXPECT_TRUE(c.supervisor_answered(tok, answer("advice"), run(1), busy()).empty());
  EXPECT_TRUE(c.armed());
  EXPECT_FALSE(c.review_pending());
  // The next settle checks again.
  EXPECT_EQ(c.settled(run(2), idle())[0].type, T::review);
}

TEST(LoopSupervision, RunMovedDuringReviewDecidesAfresh) {
  LoopController c = supervised(3);
  const auto tok = c.settled(run(1), idle())[0].token;
  // A human-driven turn spent the budget meanwhile: no continuation past it, a new (wrap-up) review.
  const Actions a = c.supervisor_answered(tok, answer("advice"), run(3), idle());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, T::review);
  const Actions b = c.supervisor_answered(a[0].token, answer("Restore v2."), run(3), idle());
  EXPECT_EQ(find(b, T::send)->kind, "wrap-up");
  EXPECT_NE(find(b, T::send)->text.find("Restore v2."), std::string::npos);
}

TEST(LoopSupervision, WrapUpCarriesTheReview) {
  LoopController c = supervised(2);
  c.settled(run(1), idle());
  c.supervisor_answered(1, answer("OK: fine"), run(1), idle());
  const Actions ask = c.settled(run(2), idle());
  ASSERT_EQ(ask[0].type, T::review);
  EXPECT_TRUE(c.armed());
  const Actions a = c.supervisor_answered(ask[0].token, answer("OK - budget well used"), run(2), idle());
  EXPECT_EQ(find(a, T::send)->kind, "wrap-up");
  EXPECT_NE(find(a, T::send)->text.find("Supervisor review: OK. budget well used"), std::string::npos);
  EXPECT_EQ(find(a, T::disarmed)->reason, "budget");
}

TEST(LoopChallenge, M8_EarlyFinalizeIsChallengedAndTheRunGoesOn) {
  LoopController c = supervised(10);
  const Series fin = finalized(3, 2);
  const Actions ask = c.settled(fin, idle());
  ASSERT_EQ(ask[0].type, T::review);
  EXPECT_EQ(ask[0].reviewKind, ReviewKind::headroom);
  const Actions a = c.supervisor_answered(ask[0].token, answer("Try a persistent kernel."), fin, idle());
  ASSERT_EQ(count(a, T::send), 1);
  EXPECT_EQ(a[0].kind, "challenge");
  EXPECT_NE(a[0].text.find("the run is NOT over"), std::string::npos);
  EXPECT_TRUE(c.armed());
  EXPECT_EQ(c.loop_state().challengedFinalizeSeq, std::optional<double>(35));  // the finalize call's seq (H-8)
  EXPECT_EQ(c.round(), 1);
  // The same finalize no longer stops the run; a newer one does.
  const Actions next = c.settled(fin, idle());
  EXPECT_EQ(next[0].reviewKind, ReviewKind::progress);
  c.supervisor_answered(next[0].token, answer("OK: ok"), fin, idle());
  Series fin2 = finalized(5, 4);
  const Actions again = c.settled(fin2, idle());
  EXPECT_EQ(again[0].reviewKind, ReviewKind::headroom);
}

TEST(LoopChallenge, M8_DoneMeansConvergedWithAudit) {
  LoopController c = supervised(10);
  const Series fin = finalized(3, 2);
  const auto tok = c.settled(fin, idle())[0].token;
  const Actions a = c.supervisor_answered(tok, answer("DONE: at the DRAM floor"), fin, idle());
  EXPECT_EQ(find(a, T::send)->kind, "audit");
  EXPECT_NE(find(a, T::send)->text.find("Supervisor review: OK. at the DRAM floor"), std::string::npos);
  EXPECT_EQ(find(a, T::disarmed)->reason, "converged");
}

TEST(LoopChallenge, M8_NoAnswerMeansFinalizedQuietly) {
  LoopController c = supervised(10);
  const Series fin = finalized(3, 2);
  const auto tok = c.settled(fin, idle())[0].token;
  const Actions a = c.supervisor_answered(tok, answer("", "timeout"), fin, idle());
  EXPECT_EQ(count(a, T::send), 0);
  EXPECT_EQ(find(a, T::disarmed)->reason, "finalized");
}

TEST(LoopChallenge, M8_NoChallengeMeansClosingAudit) {
  LoopSettings st;
  st.challengeFinalize = false;
  LoopController c = supervised(10, st);
  const Series fin = finalized(3, 2);
  const Actions ask = c.settled(fin, idle());
  ASSERT_EQ(ask[0].type, T::review);
  EXPECT_EQ(ask[0].reviewKind, ReviewKind::audit);
  const Actions a = c.supervisor_answered(ask[0].token, answer("Re-run the artifact."), fin, idle());
  EXPECT_EQ(find(a, T::send)->kind, "audit");
  EXPECT_NE(find(a, T::send)->text.find("Address the findings"), std::string::npos);
  EXPECT_EQ(find(a, T::disarmed)->reason, "finalized");
}

TEST(LoopChallenge, M8_BudgetSpentFinalizeIsNotChallenged) {
  LoopController c = supervised(3);
  const Series fin = finalized(3, 2);
  const Actions ask = c.settled(fin, idle());
  EXPECT_EQ(ask[0].reviewKind, ReviewKind::audit);  // unreviewed evaluations: closing audit
}

TEST(LoopControl, P4_ShapeNeverArmedAndArmed) {
  LoopController c;
  json ctl = c.control_json(nullptr);
  EXPECT_EQ(ctl["loop"]["armed"], false);
  EXPECT_EQ(ctl["loop"]["budget"], 0);
  EXPECT_EQ(ctl["loop"]["round"], 0);
  EXPECT_EQ(ctl["loop"]["evalsDone"], 0);
  EXPECT_EQ(ctl["loop"]["evalsOverBudget"], 0);
  EXPECT_EQ(ctl["loop"]["available"], true);
  EXPECT_EQ(ctl["loop"]["defaultBudget"], 20);
  EXPECT_FALSE(ctl["loop"].contains("stopReason"));
  EXPECT_FALSE(ctl["loop"].contains("outputLanguage"));
  EXPECT_EQ(ctl["supervisor"], json::parse(R"({"enabled":false,"configured":false})"));
  c.arm(2, Lang::zh);
  const Series s = run(3);
  ctl = c.control_json(&s);
  EXPECT_EQ(ctl["loop"]["evalsDone"], 3);
  EXPECT_EQ(ctl["loop"]["evalsOverBudget"], 1);
  EXPECT_EQ(ctl["loop"]["outputLanguage"], "zh");
}

TEST(LoopControl, Q2_Actions) {
  LoopController c;
  const Series s = run(1);
  auto r = apply_control(c, R"({"sessionId":"x","action":"loop-arm","budget":5})", &s, Lang::en);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.armed);
  EXPECT_EQ(r.body["control"]["loop"]["budget"], 5);
  EXPECT_EQ(r.body["control"]["loop"]["outputLanguage"], "en");
  r = apply_control(c, R"({"action":"loop-arm","budget":2.5,"outputLanguage":"zh"})", &s, Lang::en);
  EXPECT_EQ(r.body["control"]["loop"]["budget"], 20);
  EXPECT_EQ(r.body["control"]["loop"]["outputLanguage"], "zh");
  EXPECT_EQ(apply_control(c, R"({"action":"loop-arm","budget":"7"})", &s, Lang::en).body["control"]["loop"]["budget"], 20);
  EXPECT_EQ(apply_control(c, R"({"action":"loop-arm","outputLanguage":"fr"})", &s, Lang::en).status, 400);
  // Locked while the loop runs.
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-off"})", &s, Lang::en).status, 409);
  r = apply_control(c, R"({"action":"loop-stop"})", &s, Lang::en);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.actions[0].type, T::abort_turn);
  EXPECT_EQ(r.body["control"]["loop"]["stopReason"], "stopped");
  EXPECT_EQ(apply_control(c, R"({"action":"loop-stop"})", &s, Lang::en).status, 200);
  r = apply_control(c, R"({"action":"supervise-on"})", &s, Lang::en);
  EXPECT_EQ(r.status, 409);
  EXPECT_TRUE(r.body.contains("error"));
  EXPECT_TRUE(r.body.contains("control"));
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-use","provider":" p ","model":""})", &s, Lang::en).status, 400);
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-use","reasoningEffort":"low"})", &s, Lang::en).status, 400);
  r = apply_control(c, R"({"action":"supervise-use","provider":" p ","model":" m ","reasoningEffort":" low "})", &s, Lang::en);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["control"]["supervisor"]["effective"],
            json::parse(R"({"provider":"p","model":"m","reasoningEffort":"low","source":"session"})"));
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-on"})", &s, Lang::en).body["control"]["supervisor"]["enabled"], true);
  r = apply_control(c, R"({"action":"supervise-use","provider":"","model":""})", &s, Lang::en);
  EXPECT_FALSE(r.body["control"]["supervisor"].contains("effective"));
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-use","provider":"p","model":5})", &s, Lang::en).status, 400);
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-use","provider":"p","model":")" + std::string(201, 'm') + R"("})", &s,
                          Lang::en).body["error"], "route too long");
  EXPECT_EQ(apply_control(c, R"({"action":"supervise-use","provider":"p","model":"m","reasoningEffort":")" +
                                 std::string(65, 'e') + R"("})", &s, Lang::en).status, 400);
  EXPECT_EQ(apply_control(c, R"({"action":{"x":1}})", &s, Lang::en).body["error"], R"(unknown action: {"x":1})");
  EXPECT_EQ(apply_control(c, R"({})", &s, Lang::en).body["error"], "unknown action: undefined");
  r = apply_control(c, R"({"action":"nope"})", &s, Lang::en);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"], "unknown action: nope");
  EXPECT_EQ(apply_control(c, "[1]", &s, Lang::en).status, 400);
  EXPECT_EQ(apply_control(c, "{", &s, Lang::en).status, 400);
  EXPECT_EQ(apply_control(c, std::string(16385, ' '), &s, Lang::en).status, 400);
  LoopSettings off;
  off.available = false;
  LoopController u(off);
  EXPECT_EQ(apply_control(u, R"({"action":"loop-arm"})", &s, Lang::en).status, 503);
  EXPECT_FALSE(u.control_json(nullptr)["loop"]["available"].get<bool>());
}

TEST(LoopCommands, Kloop) {
  LoopController c;
  auto r = kloop_command(c, " 3 ", nullptr, Lang::zh);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.armed);
  EXPECT_EQ(c.budget(), 3);
  EXPECT_EQ(c.language(), Lang::zh);
  r = kloop_command(c, "", nullptr, Lang::en);
  EXPECT_EQ(c.budget(), 20);
  r = kloop_command(c, "status", nullptr, Lang::en);
  EXPECT_NE(r.text.find("armed: round 0"), std::string::npos);
  r = kloop_command(c, "stop", nullptr, Lang::en);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.actions[0].type, T::abort_turn);
  EXPECT_FALSE(c.armed());
  EXPECT_NE(kloop_command(c, "status", nullptr, Lang::en).text.find("last stop: stopped"), std::string::npos);
  for (const char* bad : {"0", "10000", "-1", "abc", "3 4", "1e3"}) EXPECT_FALSE(kloop_command(c, bad, nullptr, Lang::en).ok) << bad;
  LoopSettings off;
  off.available = false;
  LoopController u(off);
  EXPECT_FALSE(kloop_command(u, "3", nullptr, Lang::en).ok);
}

TEST(LoopCommands, Supervise) {
  LoopController c;
  EXPECT_FALSE(supervise_command(c, "on").ok);
  auto r = supervise_command(c, "use deepseek-official/deepseek-v4-pro high");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(c.effective_route()->model, "deepseek-v4-pro");
  EXPECT_EQ(c.effective_route()->reasoningEffort, std::optional<std::string>("high"));
  EXPECT_TRUE(supervise_command(c, "on").ok);
  EXPECT_TRUE(c.supervise());
  c.arm(3, Lang::en);
  EXPECT_TRUE(supervise_command(c, "off").ok);  // /supervise is not locked while the loop runs
  EXPECT_FALSE(c.supervise());
  EXPECT_TRUE(supervise_command(c, "use org/model/with/slash").ok);
  EXPECT_EQ(c.effective_route()->model, "model/with/slash");
  EXPECT_FALSE(supervise_command(c, "use nomodel").ok);
  EXPECT_FALSE(supervise_command(c, "use p/" + std::string(201, 'm')).ok);  // the panel's limit too
  EXPECT_TRUE(supervise_command(c, "use p/" + std::string(200, 'm')).ok);
  EXPECT_FALSE(supervise_command(c, "use /m").ok);
  EXPECT_FALSE(supervise_command(c, "sideways").ok);
  supervise_command(c, "on");
  r = supervise_command(c, "use default");
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(c.effective_route());
  EXPECT_FALSE(c.supervise());  // no route left: supervision cannot run
}

TEST(LoopSettings, FromJson) {
  const auto st = LoopSettings::from_json(json::parse(
      R"({"defaultBudget":12,"evalsPerTurn":0,"maxNoProgressRounds":3,"challengeFinalize":false,
          "finalizeHint":"kernel_finalize","instructions":"be strict","available":false,"defaultBudget2":1})"));
  EXPECT_EQ(st.defaultBudget, 12);
  EXPECT_EQ(st.evalsPerTurn, 0);
  EXPECT_EQ(st.maxNoProgressRounds, 3);
  EXPECT_FALSE(st.challengeFinalize);
  EXPECT_EQ(st.finalizeHint, "kernel_finalize");
  EXPECT_EQ(st.supervisorInstructions, "be strict");
  EXPECT_FALSE(st.available);
  EXPECT_EQ(LoopSettings::from_json(json::parse(R"({"defaultBudget":0})")).defaultBudget, 20);
}

TEST(LoopActions, JsonShapes) {
  LoopController c = supervised(10);
  const Action ask = c.settled(run(1), idle())[0];
  const json j = ask.to_json();
  EXPECT_EQ(j["type"], "review");
  EXPECT_EQ(j["kind"], "progress");
  EXPECT_EQ(j["provider"], "deepseek-official");
  EXPECT_FALSE(j.contains("reasoningEffort"));
  EXPECT_EQ(c.stop()[0].to_json(), json::parse(R"({"type":"abort"})"));
}
