// The runner is the candidate: nothing that decides a verdict is computed or reported by the
// candidate's process, and everything it does between the judge's "start" and "done" is counted.
// One attack per channel (tests/cheats/runner/, most of them rewriting the runner's own code
// through its GOT, as a candidate can), each flagged or neutralized for the right reason, and the
// honest traps beside them. Runs the kopt-bench binary like the user does.
#include <gtest/gtest.h>

#include <chrono>

#include "bench_run.hpp"

using nlohmann::json;
using namespace kopt_test;

namespace {

const std::string T = KOPT_TESTS_DIR;
const std::string F = T + "/fixtures";
using Outcome = BenchRun;

Outcome evaluate(const std::string& ref, const std::string& spec, const std::string& solution,
                 const std::vector<std::string>& extra = {}) {
  static const std::string dir = tmpdir("runner");
  return evaluate_small(dir, F + "/" + ref, F + "/" + spec, solution, extra);
}

std::string cheat(const std::string& n) { return T + "/cheats/runner/" + n + ".cpp"; }
std::string honest(const std::string& n) { return T + "/honest/" + n + ".cpp"; }

void expect_flagged(const Outcome& r, const std::string& why) {
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
  EXPECT_FALSE(r.eval.contains("latency_ms")) << r.out;
  EXPECT_TRUE(has(r.out, why)) << "expected /" << why << "/ in\n" << r.out;
}
void expect_honest(const Outcome& r) { expect_honest_result(r); }

}  // namespace

// ---- work outside the judge's clock: the inputs exist for the runner only inside a window ----
// The op (x @ x^T, 256x256) costs far more than the channel. Done outside the clock it would be a
// large "speedup" at almost no CPU per timed call; done inside, each timed window holds the work:
// the candidate's CPU time per timed call (read from outside, all its threads) is at least about
// the reference's. (CPU time, not the speedup: on a busy machine wall times of two runners taken
// at different moments say little.)
void expect_work_inside_the_windows(const Outcome& r) {
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  const json& cpu = r.eval["native_metrics"]["runner_cpu_ms"];
  EXPECT_GE(cpu.value("per_timed_call", 0.0), 0.5 * cpu.value("reference_per_timed_call", 1e9)) << r.out;
  EXPECT_LT(cpu.value("while_stopped", 1e9), 20.0) << r.out;  // nothing of it runs between commands
}
TEST(OutsideTheClock, WorkInAHookedReplyWriteIsInsideTheWindow) {
  expect_work_inside_the_windows(evaluate("ref_square.cpp", "square.json", cheat("precompute_in_reply")));
}
TEST(OutsideTheClock, WorkInAHookedAllocatorIsInsideTheWindow) {
  expect_work_inside_the_windows(evaluate("ref_square.cpp", "square.json", cheat("precompute_in_allocator")));
}
TEST(OutsideTheClock, AWatcherThreadIsStoppedBetweenCalls) {
  expect_work_inside_the_windows(evaluate("ref_square.cpp", "square.json", cheat("precompute_watcher")));
}

// ---- reports from the candidate's process: there are none to forge ----
TEST(Reports, AForgedInspectionReplyChangesNothing) {
  Outcome r = evaluate("relu.pt", "relu.json", cheat("forged_inspection"));
  expect_flagged(r, "REWARD_HACK: the candidate modified input 0 \\('in0'\\) in place");
  EXPECT_TRUE(has(r.out, "REWARD_HACK: output 0 aliases input 0")) << r.out;
}
TEST(Reports, AliasingOnlyInTimedCallsIsCaught) {
  Outcome r = evaluate("relu.pt", "relu.json", cheat("timed_alias"));
  expect_flagged(r, "REWARD_HACK: output 0 aliases input 0|REWARD_HACK: the candidate modified input 0");
}
TEST(Reports, AnElidedOutputCopyLeavesTheReturnedTensorUnwritten) {
  expect_flagged(evaluate("relu.pt", "relu.json", cheat("memcpy_elision")),
                 "NaN where the reference has a number|differs from the reference");
}
TEST(Reports, ARecycledOutputRingIsCaught) {
  expect_flagged(evaluate("relu.pt", "relu.json", cheat("output_ring")), "REWARD_HACK: .*stale output reuse");
}

// Aliasing is judged by what backs an output (the kernel's file and offset for its pages), not by
// its address: a second mapping of the judge's input region, made anew on every call so that no
// held output is reused either, is still the input's memory. The trap: an output in a memfd of the
// candidate's own, mapped twice, is neither aliasing nor reuse.
TEST(Reports, ASecondMappingOfTheInputsIsStillAliasing) {
  expect_flagged(evaluate("ref_copy.cpp", "square.json", cheat("second_mapping")),
                 "REWARD_HACK: output 0 aliases input 0 \\('x'\\) where the reference's output does not \\(through a "
                 "second mapping of the judge's input region\\)");
}
TEST(HonestTraps, AnOutputInTheCandidatesOwnDoublyMappedMemoryIsNotAliasing) {
  expect_honest(evaluate("ref_copy.cpp", "square.json", honest("own_memfd_output")));
}

// A probe that fails does not lower the judge's guard: a candidate that makes the runner's memory
// unreadable to the judge (here a page of the input region, from a static constructor) is refused,
// not judged on outputs its own process copies.
TEST(Reports, AnUnreadableRunnerIsRefusedNotCopiedFrom) {
  Outcome r = evaluate("relu.pt", "relu.json", cheat("unreadable_inputs"));
  expect_flagged(r, "ERROR: runtime error while loading the candidate: refused: the judge cannot read the candidate's "
                    "process memory \\(the input region is not mapped whole");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_FALSE(has(r.out, "copied by the runner|candidate's process copied its own outputs")) << r.out;
}
// A page of the input region mapped again at a lower address from a static constructor: once the
// judge took it for the region and the evaluation hung to its wall-clock limit with no result line;
// now it is refused at load, promptly, with a result line (an honest relu otherwise).
TEST(Reports, AMappingOfTheInputsBelowTheRunnersIsRefusedPromptly) {
  const auto t0 = std::chrono::steady_clock::now();
  Outcome r = evaluate("relu.pt", "relu.json", cheat("low_mapping"));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  expect_flagged(r, "ERROR: runtime error while loading the candidate: refused: the judge cannot read the candidate's "
                    "process memory \\(the input region is not mapped whole \\(its first mapping covers 4096 of");
  EXPECT_LT(s, 120.0) << "no prompt result: " << r.out;
}

TEST(HonestTraps, ProtectingItsOwnMemoryIsNotRefused) {
  Outcome r = evaluate("relu.pt", "relu.json", honest("protected_own_pages"));
  expect_honest(r);
  EXPECT_EQ(r.eval["native_metrics"]["isolation"].value("outputs", ""), "read by the judge from the stopped runner's memory")
      << r.out;
}

// The hold budget counts what holding an output costs (its elements), not the span its strides
// describe: a ring of two buffers described as 280 MiB each no longer makes the judge let go of
// every older output. --no-timing: each output is read whole (280 MiB) by the judge.
TEST(Reports, ARingDescribedWiderThanTheHoldIsCaught) {
  expect_flagged(evaluate("relu.pt", "relu.json", cheat("wide_ring"), {"--no-timing"}), "REWARD_HACK: .*stale output reuse");
}
TEST(HonestTraps, FreshWideViewsEveryCallAreNotReuse) {
  Outcome r = evaluate("relu.pt", "relu.json", honest("wide_view_fresh"), {"--no-timing"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  EXPECT_FALSE(r.eval.contains("reward_hack_detected")) << r.out;
  EXPECT_FALSE(r.eval["native_metrics"].contains("output_hold")) << r.out;  // every call's outputs were held
}

// ---- a channel cost the candidate cannot shorten ----
TEST(Channel, BusyPollingTheCommandPipeGainsNothing) {
  Outcome r = evaluate("relu.pt", "relu.json", cheat("spinning_channel"));
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  // It cannot poll while it is stopped: not a cycle of it runs between commands, and each command
  // is in the pipe before the runner is continued.
  const json& m = r.eval["native_metrics"];
  EXPECT_LT(m["runner_cpu_ms"].value("while_stopped", 1e9), 20.0) << r.out;
  EXPECT_TRUE(m["channel_ms"].contains("candidate")) << r.out;
  EXPECT_TRUE(m["channel_ms"].contains("reference")) << r.out;
}

// ---- inputs that cannot be predicted ----
TEST(Seeds, APinnedSmallSeedCannotBeRecovered) {
  Outcome r = evaluate("relu.pt", "relu.json", cheat("seed_recovery"), {"--seed", "4242"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  // It says so on its output when its search succeeds (and then answers timed calls from a table).
  EXPECT_FALSE(r.eval["native_metrics"].contains("candidate_output_bytes")) << r.out;
}

// ---- a device time the judge bounds (the GPU's path, on the CPU with the runner's host clock) ----
TEST(DeviceTime, AForgedDeviceTimeIsBelowTheJudgesFloor) {
  Outcome r = evaluate("ref_square.cpp", "square.json", cheat("forged_device_time"), {"--timer", "device"});
  expect_flagged(r, "REWARD_HACK: forged device time: the device time reported from the candidate's process");
  const json& dt = r.eval["native_metrics"]["device_timing"];
  EXPECT_EQ(dt.value("used", ""), "judge floor") << r.out;
  EXPECT_GT(dt.value("judge_floor_ms", 0.0), 10 * dt.value("runner_ms", 1e9)) << r.out;
}
TEST(DeviceTime, AFastCorrectOpNearTheFloorPasses) {
  Outcome r = evaluate("relu.pt", "relu.json", honest("relu_loop"), {"--timer", "device"});
  expect_honest(r);
  const json& dt = r.eval["native_metrics"]["device_timing"];
  EXPECT_GT(dt.value("runner_ms", 0.0), 0) << r.out;
  EXPECT_TRUE(dt.contains("judge_floor_ms")) << r.out;
  EXPECT_EQ(r.eval["native_metrics"]["options"].value("timer", ""), "device") << r.out;
}

// ---- mutation judged like aliasing: against the reference's own effect on its inputs ----
TEST(Mutation, AnInPlaceOpLikeItsInPlaceReferencePasses) {
  expect_honest(evaluate("ref_inplace_relu.cpp", "inplace_relu.json", honest("inplace_relu")));
}
TEST(Mutation, AnotherEffectThanTheInPlaceReferencesIsCaught) {
  expect_flagged(evaluate("ref_inplace_relu.cpp", "inplace_relu.json", cheat("inplace_other_effect")),
                 "REWARD_HACK: the candidate modified input 0 \\('x'\\) in place otherwise than the reference does");
}

// ---- honest traps ----
TEST(HonestTraps, APoolThatSpinsBetweenCallsButComputesOnlyInsideThem) {
  expect_honest(evaluate("relu.pt", "relu.json", honest("spinning_pool")));
}
TEST(HonestTraps, InternalWorkspaceReuse) { expect_honest(evaluate("relu.pt", "relu.json", honest("workspace_reuse"))); }
