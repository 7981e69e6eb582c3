#include <gtest/gtest.h>
#include "kopt/verdict.hpp"

using kopt::Iteration;

TEST(Verdict, FirstRuleThatHoldsWins) {
  Iteration it;
  EXPECT_EQ(kopt::verdict_of(it), "unknown");
  it.correct = true;
  EXPECT_EQ(kopt::verdict_of(it), "ok");
  it.correct = false;
  EXPECT_EQ(kopt::verdict_of(it), "wrong");
  it.error = "boom";
  EXPECT_EQ(kopt::verdict_of(it), "error");
  it.compiled = false;
  EXPECT_EQ(kopt::verdict_of(it), "compile");
  it.evaluatorFailed = true;
  EXPECT_EQ(kopt::verdict_of(it), "evaluator");
  it.rewardHack = true;
  EXPECT_EQ(kopt::verdict_of(it), "hack");
  it.pending = true;
  EXPECT_EQ(kopt::verdict_of(it), "pending");
}

TEST(Trust, ProvenanceOfTheFigure) {
  Iteration it;
  EXPECT_EQ(kopt::trust_of(it), "tool");
  it.channel = "shell";
  EXPECT_EQ(kopt::trust_of(it), "self-reported");
  it.jobId = "7";
  EXPECT_EQ(kopt::trust_of(it), "job");
  it.channel = "replay";
  EXPECT_EQ(kopt::trust_of(it), "replay");
}

TEST(Trust, LoweredByAgentChosenOptionsAndWeakerIsolation) {
  Iteration it;
  EXPECT_FALSE(kopt::trust_lowered(it));
  it.advisory = std::vector<std::string>{"work continued on other streams"};
  EXPECT_FALSE(kopt::trust_lowered(it));
  it.advisory->push_back("agent-chosen atol 0.5");
  it.advisory->push_back("agent-pinned input seed 3 (inputs are predictable)");
  it.advisory->push_back("weaker isolation: the candidate ran without namespaces (no bwrap)");
  auto low = kopt::trust_lowered(it);
  ASSERT_TRUE(low);
  EXPECT_EQ(low->size(), 3u);
  EXPECT_EQ(low->front(), "agent-chosen atol 0.5");
}
