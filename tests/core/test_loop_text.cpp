// Loop messages: both languages carry the anchors the projection parses back (M-1..M-4), proven
// by feeding them through the Projector.
#include <gtest/gtest.h>

#include "kopt/loop.hpp"
#include "kopt/projector.hpp"

using namespace kopt;

namespace {

// The message as the projection reads it back from a plugin follow-up.
Round read_back(const std::string& text) {
  json ev = json::object();
  ev["type"] = "user/message";
  ev["seq"] = 7;
  ev["data"] = json::parse(R"({"role":"user","content":[{"type":"text","text":""}],
                               "source":{"kind":"plugin","plugin":"kernel-opt"}})");
  ev["data"]["content"][0]["text"] = text;
  Projector p;
  p.feed(json::array({ev}));
  const Series s = p.series();
  EXPECT_EQ(s.rounds.size(), 1u) << text.substr(0, 200);
  return s.rounds.empty() ? Round{} : s.rounds[0];
}

ReviewOutcome advice(const std::string& a) {
  ReviewOutcome r;
  r.reviewed = true;
  r.advice = a;
  return r;
}

ReviewOutcome ok(const std::optional<std::string>& note) {
  ReviewOutcome r;
  r.reviewed = true;
  r.note = note;
  return r;
}

class LoopTextBoth : public ::testing::TestWithParam<Lang> {};

}  // namespace

TEST_P(LoopTextBoth, M4_ContinuationCountersRoundAndAdvice) {
  ContinuationText t;
  t.lang = GetParam();
  t.round = 3;
  t.evalsDone = 4;
  t.budget = 12;
  t.paceEvals = 3;
  t.stagnant = 4;
  t.planKnown = false;
  t.envKnown = false;
  t.review = advice("Profile once before more variants.\nThen switch family.");
  const std::string text = continuation_text(t);
  EXPECT_EQ(text.rfind("[kernel-loop round 3] 4/12 evaluations used", 0), 0u);
  const Round r = read_back(text);
  EXPECT_EQ(r.round, 3);
  EXPECT_EQ(r.evalsUsed, 4);
  EXPECT_EQ(r.budget, 12);
  EXPECT_EQ(r.review, std::optional<std::string>("Profile once before more variants.\nThen switch family."));
  EXPECT_FALSE(r.reviewNote);
  EXPECT_FALSE(r.wrapUp || r.audit || r.challenge);
  EXPECT_EQ(language_of_message(text), GetParam());
}

TEST_P(LoopTextBoth, M3_ApprovalWithAndWithoutNote) {
  ContinuationText t;
  t.lang = GetParam();
  t.review = ok(std::string("three families tried, budget on track"));
  Round r = read_back(continuation_text(t));
  EXPECT_EQ(r.review, std::optional<std::string>("ok"));
  EXPECT_EQ(r.reviewNote, std::optional<std::string>("three families tried, budget on track"));
  t.review = ok(std::nullopt);
  r = read_back(continuation_text(t));
  EXPECT_EQ(r.review, std::optional<std::string>("ok"));
  EXPECT_FALSE(r.reviewNote);
  t.review = ReviewOutcome{};
  r = read_back(continuation_text(t));
  EXPECT_FALSE(r.review);
}

TEST_P(LoopTextBoth, M4_ChallengeCarriesTheSentence) {
  ContinuationText t;
  t.lang = GetParam();
  t.round = 2;
  t.evalsDone = 1;
  t.budget = 10;
  t.challenge = true;
  t.review = advice("Try a persistent-kernel variant.");
  const std::string text = continuation_text(t);
  EXPECT_NE(text.find("the run is NOT over"), std::string::npos);
  const Round r = read_back(text);
  EXPECT_TRUE(r.challenge);
  EXPECT_EQ(r.round, 2);
  EXPECT_EQ(r.review, std::optional<std::string>("Try a persistent-kernel variant."));
}

TEST_P(LoopTextBoth, M4_WrapUpAndAudit) {
  Round r = read_back(wrapup_text(GetParam(), 5, 5, "budget", "kernel_finalize", advice("Restore v3; it was faster.")));
  EXPECT_TRUE(r.wrapUp);
  EXPECT_FALSE(r.round);
  EXPECT_EQ(r.evalsUsed, 5);
  EXPECT_EQ(r.budget, 5);
  EXPECT_EQ(r.review, std::optional<std::string>("Restore v3; it was faster."));
  r = read_back(wrapup_text(GetParam(), 2, 9, "no-progress", "kernel_finalize", ReviewOutcome{}));
  EXPECT_TRUE(r.wrapUp);
  EXPECT_FALSE(r.review);
  r = read_back(audit_text(GetParam(), advice("Re-run the finalized artifact.")));
  EXPECT_TRUE(r.audit);
  EXPECT_EQ(r.review, std::optional<std::string>("Re-run the finalized artifact."));
  r = read_back(audit_text(GetParam(), ok(std::string("replay agrees with the best row"))));
  EXPECT_TRUE(r.audit);
  EXPECT_EQ(r.review, std::optional<std::string>("ok"));
  EXPECT_EQ(r.reviewNote, std::optional<std::string>("replay agrees with the best row"));
}

INSTANTIATE_TEST_SUITE_P(Langs, LoopTextBoth, ::testing::Values(Lang::zh, Lang::en),
                         [](const auto& info) { return std::string(lang_code(info.param)); });

TEST_P(LoopTextBoth, FailedReviewIsReadBackAsFailedNeverAsAdvice) {
  ReviewOutcome failed;
  failed.failure = "timeout";
  ContinuationText t;
  t.lang = GetParam();
  t.round = 2;
  t.evalsDone = 3;
  t.budget = 8;
  t.review = failed;
  const Round r = read_back(continuation_text(t));
  EXPECT_TRUE(r.reviewFailed);
  EXPECT_FALSE(r.review.has_value());
  EXPECT_EQ(r.round, 2);
  const Round w = read_back(wrapup_text(GetParam(), 8, 8, "budget", "kernel_finalize", failed));
  EXPECT_TRUE(w.wrapUp);
  EXPECT_TRUE(w.reviewFailed);
  EXPECT_FALSE(w.review.has_value());
  // A real review is never mistaken for a failure.
  t.review = advice("Profile first.");
  const Round a = read_back(continuation_text(t));
  EXPECT_FALSE(a.reviewFailed);
  EXPECT_EQ(a.review, std::optional<std::string>("Profile first."));
}

TEST(LoopText, LanguageDiffersInTheProseOnly) {
  ContinuationText t;
  t.paceEvals = 2;
  const std::string en = continuation_text(t);
  t.lang = Lang::zh;
  const std::string zh = continuation_text(t);
  EXPECT_NE(en, zh);
  EXPECT_NE(zh.find("节奏"), std::string::npos);
  EXPECT_NE(en.find("at most 2 more evaluations"), std::string::npos);
  EXPECT_NE(zh.find("本轮最多再跑 2 次评测"), std::string::npos);
  EXPECT_NE(zh.find("Continue the kernel-optimization run"), std::string::npos);
  EXPECT_EQ(language_of_message("no line here"), std::nullopt);
}

TEST(LoopText, NoTaskAsksToInventoryTheWorkspace) {
  ContinuationText t;
  t.taskKnown = false;
  const std::string text = continuation_text(t);
  EXPECT_NE(text.find("WORKING DIRECTORY"), std::string::npos);
  EXPECT_EQ(text.find("finalize the result"), std::string::npos);
}

TEST(LoopText, PlanAndEnvReminders) {
  ContinuationText t;
  t.planKnown = true;
  t.planStale = true;
  t.envKnown = false;
  const std::string text = continuation_text(t);
  EXPECT_NE(text.find("kernel_plan is older"), std::string::npos);
  EXPECT_NE(text.find("No kernel_env"), std::string::npos);
  t.planKnown = false;
  EXPECT_NE(continuation_text(t).find("No kernel_plan is on record"), std::string::npos);
}
