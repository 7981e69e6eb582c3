// Property test: random interleavings of settles, aborts, host cancels, human messages, stops, evaluations,
// finalizes, re-arms and supervisor answers. Invariants:
//  - a human stop always wins: it aborts first, and nothing is sent until the next arm;
//  - never two messages for one settle (a review's answer counts for the settle that asked);
//  - the loop's own drive never pushes past the budget (continuations only below it, and the
//    pace never asks for more than what is left);
//  - nothing is sent while the agent is busy or a human message waits;
//  - after a disarm nothing more is sent until the next arm.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <regex>

#include "kopt/loop.hpp"
#include "test_loop_helpers.hpp"

using namespace kopt;
using namespace kopt::looptest;
using T = Action::Type;

namespace {

struct World {
  Series series;
  double nextSeq = 1;
  void add_eval() {
    Iteration it;
    it.seq = seq(nextSeq++);
    it.tool = "bash";
    it.channel = "shell";
    it.correct = true;
    it.latencyMs = 5.0;
    it.artifactPath = "k.cu";
    series.iterations.push_back(it);
  }
  void finalize_last() {
    if (series.iterations.empty()) return;
    series.iterations.back().finalized = true;
    FinalizeCall f;  // the call comes after the evaluation it names (H-8)
    f.seq = seq(nextSeq++);
    f.named = series.iterations.size() - 1;
    series.finalize = f;
  }
  // The loop's messages land in the log, as the projection would read them.
  void log_message(const Action& a) {
    Round r;
    r.seq = seq(nextSeq++);
    r.wrapUp = a.kind == "wrap-up";
    r.audit = a.kind == "audit";
    r.challenge = a.kind == "challenge";
    if (a.text.find(std::string(anchors::kReviewHeader)) != std::string::npos ||
        a.text.find(std::string(anchors::kReviewOkLine)) != std::string::npos) {
      r.review = "x";
    }
    series.rounds.push_back(r);
  }
};

void run_property(std::uint32_t seed, int steps) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint32_t>(n)); };
  LoopSettings st;
  st.evalsPerTurn = 1 + pick(4);
  st.challengeFinalize = pick(2) == 0;
  LoopController c(st);
  c.set_config_route(route());
  World w;
  bool idle = true, queued = false;
  bool silenced = true;  // true after a stop or disarm, until the next arm
  long long settleId = 0;
  std::map<std::uint64_t, long long> tokenSettle;  // review token → the settle that asked
  std::map<long long, int> sendsPerSettle;
  const std::regex counters(R"(^\[kernel-loop round (\d+)\] (\d+)/(\d+) evaluations used)");
  const std::regex pace(R"(at most (\d+) more evaluations)");

  auto check_sends = [&](const Actions& acts, long long origin, const HostFacts& f, const char* what) {
    for (const auto& a : acts) {
      if (a.type == T::review) tokenSettle[a.token] = origin;
      if (a.type == T::disarmed) silenced = true;
      if (a.type != T::send) continue;
      ASSERT_FALSE(silenced) << "sent after a stop or disarm, " << what << " seed " << seed;
      ASSERT_TRUE(f.agentIdle && !f.humanQueued) << what << " seed " << seed;
      ASSERT_EQ(++sendsPerSettle[origin], 1) << "two messages for one settle, " << what << " seed " << seed;
      const long long done = completed_evals(w.series);
      if (a.kind == "continuation") {
        std::smatch m;
        ASSERT_TRUE(std::regex_search(a.text, m, counters)) << a.text;
        ASSERT_EQ(std::stoll(m[2]), done);
        ASSERT_EQ(std::stoll(m[3]), c.budget());
        ASSERT_LT(done, c.budget()) << "drive past the budget, seed " << seed;
        std::smatch p;
        if (std::regex_search(a.text, p, pace)) {
          ASSERT_LE(std::stoll(p[1]), c.budget() - done);
        }
      }
      w.log_message(a);
      idle = false;  // the follow-up starts a turn
    }
  };

  c.arm(1 + pick(8), Lang::en);
  silenced = false;
  for (int step = 0; step < steps; ++step) {
    const int ev = pick(100);
    HostFacts f;
    f.agentIdle = idle;
    f.humanQueued = queued;
    if (ev < 30) {  // a settle check
      if (!idle) {
        idle = true;  // the turn ended normally
        c.turn_ended("completed");
        f.agentIdle = true;
      }
      const Actions a = c.settled(w.series, f);
      check_sends(a, ++settleId, f, "settle");
    } else if (ev < 50) {  // the agent (or a human turn) ran an evaluation
      w.add_eval();
    } else if (ev < 53) {
      w.finalize_last();
    } else if (ev < 58) {  // an aborted turn
      if (!idle) {
        idle = true;
        const Actions a = c.turn_ended("aborted");
        ASSERT_FALSE(c.armed());
        silenced = true;
        ASSERT_EQ(count(a, T::send), 0);
      }
    } else if (ev < 63) {  // a human stop
      const Actions a = c.stop();
      ASSERT_FALSE(a.empty());
      ASSERT_EQ(a.front().type, T::abort_turn) << "the abort comes first";
      ASSERT_EQ(count(a, T::send), 0);
      ASSERT_FALSE(c.armed());
      ASSERT_FALSE(c.review_pending());
      silenced = true;
      idle = true;
    } else if (ev < 65) {  // the host's own stop (session.cancel), with or without a running turn
      const Actions a = c.host_cancelled("user");
      ASSERT_EQ(count(a, T::send), 0);
      ASSERT_EQ(count(a, T::abort_turn), 0);
      ASSERT_FALSE(c.armed());
      ASSERT_FALSE(c.review_pending());
      silenced = true;
      if (!idle) {
        idle = true;  // the running turn then ends aborted: nothing more to do
        ASSERT_TRUE(c.turn_ended("aborted").empty());
      }
    } else if (ev < 70) {  // a human message arrives or is taken
      queued = !queued;
      if (!queued) idle = false;  // taken: the human's turn runs
    } else if (ev < 73) {  // supervision toggled
      c.set_supervise(pick(2) == 0);
    } else if (ev < 75) {  // re-arm
      c.arm(1 + pick(8), Lang::en);
      silenced = false;
    } else {  // a supervisor answer (possibly for an old token)
      if (tokenSettle.empty()) continue;
      auto it = tokenSettle.begin();
      std::advance(it, pick(static_cast<int>(tokenSettle.size())));
      static const SupervisorAnswer answers[] = {
          {"OK: fine", "stop"}, {"Switch family.", "stop"}, {"", "stop"}, {"", "max-tokens"},
          {"late", "timeout"},  {"DONE: floor", "stop"},    {"x", "error"}};
      const SupervisorAnswer ans = answers[pick(7)];
      const Actions a = c.supervisor_answered(it->first, ans, w.series, f);
      check_sends(a, it->second, f, "answer");
    }
    if (!c.armed()) {
      ASSERT_TRUE(silenced) << "disarmed without saying so, seed " << seed;
    }
  }
}

}  // namespace

TEST(LoopProperty, RandomInterleavingsKeepTheInvariants) {
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    run_property(seed, 400);
    if (HasFatalFailure()) return;
  }
}
