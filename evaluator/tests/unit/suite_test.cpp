// End-to-end tests through the kopt-bench binary: every CPU-runnable reward hack of the spec's
// table must be flagged, honest candidates must pass, failures must still end in KERNEL_EVAL,
// and the frozen baseline must behave.
#include <gtest/gtest.h>

#include <chrono>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <cmath>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "integrity.hpp"

using nlohmann::json;

namespace {

const std::string T = KOPT_TESTS_DIR;
const std::string F = T + "/fixtures";

struct BenchRun {
  int code = -1;
  std::string out;
  json eval;  // the KERNEL_EVAL payload (null if absent)
  std::string last_line;
};

std::string tmpdir() {
  char t[] = "/tmp/kopt-bench-suite.XXXXXX";
  return mkdtemp(t);
}

std::string q(const std::string& s) { return "'" + s + "'"; }

BenchRun run_bench(const std::vector<std::string>& args) {
  std::string cmd = q(KOPT_BENCH_BIN);
  for (const auto& a : args) cmd += " " + q(a);
  cmd += " 2>/dev/null";
  BenchRun r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::stringstream ss(r.out);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) r.last_line = line;
  if (r.last_line.rfind("KERNEL_EVAL=", 0) == 0) r.eval = json::parse(r.last_line.substr(12));
  return r;
}

// An evaluation with small budgets, its own baseline file, the shared test cache.
BenchRun evaluate(const std::string& ref, const std::string& spec, const std::string& solution,
             std::vector<std::string> extra = {}) {
  static const std::string dir = tmpdir();
  static int counter = 0;
  std::vector<std::string> a{"--ref", F + "/" + ref, "--inputs", F + "/" + spec, "--solution", solution,
                             "--cache-dir", KOPT_TEST_CACHE, "--baseline",
                             dir + "/baseline-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".json",
                             "--max-trials", "20", "--max-time", "3"};
  a.insert(a.end(), extra.begin(), extra.end());
  return run_bench(a);
}

bool has(const std::string& out, const std::string& pattern) {
  return std::regex_search(out, std::regex(pattern, std::regex::multiline));
}

void expect_result_line(const BenchRun& r) {
  ASSERT_EQ(r.last_line.rfind("KERNEL_EVAL={", 0), 0u) << r.out;
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_TRUE(r.eval["artifact"].is_string());
  EXPECT_TRUE(r.eval["correct"].is_boolean());
}

void expect_flagged(const BenchRun& r, const std::string& why_pattern, bool as_hack) {
  expect_result_line(r);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r.out, "^CORRECT: False$")) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
  EXPECT_FALSE(r.eval.contains("latency_ms")) << "a flagged candidate must not get a latency\n" << r.out;
  if (as_hack) EXPECT_EQ(r.eval.value("reward_hack_detected", false), true) << r.out;
  EXPECT_TRUE(has(r.out, why_pattern)) << "expected /" << why_pattern << "/ in\n" << r.out;
}

// A wrong output fails every trial on the declared values (DEVIATION counts them). A trial off the
// declared distribution may pass by chance: relu of values shifted far below zero is all zeros, and
// so are a zeros() output and a fresh page.
void expect_every_declared_trial_fails(const BenchRun& r, const std::string& deviation_pattern) {
  expect_flagged(r, deviation_pattern, false);
  std::smatch m;
  const std::regex declared("\"declared \\(([0-9]+) trials\\)\"");
  ASSERT_TRUE(std::regex_search(r.out, m, declared)) << r.out;
  EXPECT_GE(r.eval["native_metrics"].value("failed_trials", 0), std::stoi(m[1].str())) << r.out;
}

void expect_honest_pass(const BenchRun& r) {
  expect_result_line(r);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  EXPECT_FALSE(r.eval.contains("reward_hack_detected")) << r.out;
  EXPECT_FALSE(has(r.out, "^REWARD_HACK:")) << r.out;
  EXPECT_TRUE(has(r.out, "^MUTATION_SENTINEL: PASS$")) << r.out;
  EXPECT_TRUE(has(r.out, "^RUNTIME: [0-9]+\\.[0-9]{4}$")) << r.out;
  EXPECT_TRUE(has(r.out, "^SPEEDUP: [0-9]+\\.[0-9]{4}x$")) << r.out;
  EXPECT_GT(r.eval["latency_ms"].get<double>(), 0);
  EXPECT_GT(r.eval["native_metrics"]["speedup"].get<double>(), 0);
}

std::string cheat(const std::string& n) { return T + "/cheats/" + n + ".cpp"; }
std::string honest(const std::string& n) { return T + "/honest/" + n + ".cpp"; }

}  // namespace

// ---------------- the reward-hack suite (spec table, CPU rows) ----------------
TEST(Cheats, ReplayKeyedOnInputPointer) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("pointer_replay")),
                 "REWARD_HACK: mutation sentinel", true);
}
TEST(Cheats, ReplayKeyedOnAFingerprintOfInputValues) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("fingerprint_replay")),
                 "REWARD_HACK: mutation sentinel: one input element changed in place", true);
}
TEST(Cheats, BatchAndSkip) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("batch_skip")),
                 "REWARD_HACK: timed call [0-9]+ returned a wrong result", true);
}
TEST(Cheats, InputMutation) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("input_mutation")),
                 "REWARD_HACK: the candidate modified input 0", true);
}
TEST(Cheats, ConstantOutput) {
  expect_every_declared_trial_fails(evaluate("linear_relu.pt", "linear_relu.json", cheat("constant_output")),
                                    "DEVIATION: max_abs=.* failed_trials=[0-9]+/[0-9]+$");
}
TEST(Cheats, TrivialOutputAgainstALowSignalReference) {
  BenchRun r = evaluate("tiny_scale.pt", "tiny_scale.json", cheat("tiny_zeros"));
  expect_every_declared_trial_fails(r, "DEVIATION: .*failed_trials=[0-9]+/[0-9]+$");
  EXPECT_TRUE(has(r.out, "low signal")) << r.out;
}
TEST(Cheats, OutputAliasesAnInput) {
  expect_flagged(evaluate("relu.pt", "relu.json", cheat("alias_output")),
                 "REWARD_HACK: output 0 aliases input 0", true);
}
TEST(Cheats, OutputIsAViewOfAnInput) {
  expect_flagged(evaluate("relu.pt", "relu.json", cheat("view_output")), "REWARD_HACK: output 0 aliases input 0", true);
}
TEST(Cheats, StaleOutputBufferReuse) {
  expect_flagged(evaluate("relu.pt", "relu.json", cheat("stale_buffer")), "REWARD_HACK: .*stale output reuse", true);
}
TEST(Cheats, UninitialisedOutputMeetsPoison) {
  // Whatever the allocator hands back (poison NaN or leftovers), it is never the answer.
  expect_every_declared_trial_fails(evaluate("relu.pt", "relu.json", cheat("uninit_output")),
                                    "DEVIATION: .*failed_trials=[0-9]+/[0-9]+$");
}
TEST(Cheats, ReRegisteringAnAtenKernel) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("aten_hijack")),
                 "REWARD_HACK: loading the candidate changed the dispatch table of aten::relu", true);
}
TEST(Cheats, LazyAtenRegistrationOnFirstCall) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("lazy_hijack")),
                 "REWARD_HACK: the dispatch table of aten::tanh changed while the candidate ran", true);
}
TEST(Cheats, ProcessWideTorchStateChange) {
  expect_flagged(evaluate("linear_relu.pt", "linear_relu.json", cheat("state_change")),
                 "REWARD_HACK: process-wide torch state changed: num_threads", true);
}
TEST(Cheats, PrecisionDowngradePastTheDeclaredTolerance) {
  BenchRun r = evaluate("matmul_k.pt", "matmul_k_wide.json", cheat("precision_downgrade"), {"--no-timing"});
  expect_every_declared_trial_fails(r, "DEVIATION: max_abs=[0-9.e+-]+ avg_abs=.* failed_trials=[0-9]+/[0-9]+$");
  EXPECT_FALSE(has(r.out, "oracle accepted")) << "the fp64 oracle must not excuse a bf16 downgrade\n" << r.out;
}
TEST(Cheats, DeferringWorkToAThread) {
  BenchRun r = evaluate("relu.pt", "relu.json", cheat("deferred_thread"));
  expect_flagged(r, "CORRECT: False", false);
  // The outputs are copied out the moment the call returns: work finished later does not count.
  EXPECT_TRUE(has(r.out, "NaN where the reference has a number|differs from the reference")) << r.out;
}

TEST(Cheats, IntegerProductComputedInFloat32) {
  // int64 a @ b in float32, rounded: wrong by units to tens on values of ~1.4e8, which atol + rtol*|ref|
  // and the relative L2 floor would accept. Integer outputs are compared exactly.
  BenchRun r = evaluate("ref_int_matmul.cpp", "int_matmul.json", cheat("int_matmul_float32"), {"--no-timing"});
  expect_every_declared_trial_fails(r, "^ERROR: incorrect: trial 0: output 0 has [0-9]+ of 1536 values that differ from "
                                       "the reference's \\(a Long output is compared exactly");
  EXPECT_EQ(r.eval["native_metrics"]["failed_rule"], "exact") << r.out;
  EXPECT_TRUE(has(r.out, "^TOLERANCE: .*; integer outputs exact$")) << r.out;
}
TEST(Cheats, SecondOutputIsAViewOfTheFirst) {
  // The reference returns two separately stored outputs; the candidate one buffer and a view of it.
  BenchRun r = evaluate("ref_relu_pair.cpp", "relu_pair.json", cheat("output_pair_view"));
  expect_flagged(r, "REWARD_HACK: output 1 overlaps output 0 in memory where the reference returns them in separate storage",
                 true);
}

// ---------------- honest candidates: no false positive ----------------
TEST(Honest, LinearReluThroughAtenOps) { expect_honest_pass(evaluate("linear_relu.pt", "linear_relu.json", honest("linear_relu_aten"))); }
TEST(Honest, LinearReluHandWrittenParallelLoops) {
  expect_honest_pass(evaluate("linear_relu.pt", "linear_relu.json", honest("linear_relu_loops")));
}
TEST(Honest, ReassociatedLongKMatmulPassesByTheOracleRule) {
  BenchRun r = evaluate("matmul_k.pt", "matmul_k_wide.json", honest("matmul_blocked"), {"--max-trials", "15", "--min-trials", "15"});
  expect_honest_pass(r);
  EXPECT_TRUE(has(r.out, "^TOLERANCE: auto: .*fp64 oracle accepted re-association")) << r.out;
  // ... and the same candidate fails a flat tolerance, which is why the oracle rule exists.
  BenchRun flat = evaluate("matmul_k.pt", "matmul_k_wide.json", honest("matmul_blocked"), {"--tolerance", "fixed", "--no-timing"});
  EXPECT_EQ(flat.eval["correct"], false) << flat.out;
}
TEST(Honest, HandWrittenRelu) { expect_honest_pass(evaluate("relu.pt", "relu.json", honest("relu_loop"))); }
// native_metrics.stage_ms: the build, the worker's start and every phase of the judge, summing to
// about the wall time of the whole evaluation.
TEST(Honest, StageTimesAddUpToTheWallTime) {
  const auto t0 = std::chrono::steady_clock::now();
  BenchRun r = evaluate("relu.pt", "relu.json", honest("relu_loop"));
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  expect_honest_pass(r);
  const json& st = r.eval["native_metrics"]["stage_ms"];
  ASSERT_TRUE(st.is_object()) << r.out;
  double sum = 0;
  for (const char* k : {"build", "worker start and exit", "setup", "starting the candidate", "loading the reference",
                        "running the reference", "loading the candidate", "correctness trials", "timing the candidate",
                        "mutation sentinel", "checking process state"}) {
    ASSERT_TRUE(st.contains(k) && st[k].is_number()) << k << ": " << st.dump();
    EXPECT_GE(st[k].get<double>(), 0) << k;
  }
  for (const auto& [k, v] : st.items()) sum += v.get<double>();
  EXPECT_LE(sum, wall) << st.dump();
  EXPECT_GE(sum, 0.7 * wall) << st.dump() << " wall " << wall;  // the rest: this process's own start and exit
}
TEST(Honest, LowSignalReferenceJudgedOnRelativeError) {
  BenchRun r = evaluate("tiny_scale.pt", "tiny_scale.json", honest("tiny_scale_aten"));
  expect_honest_pass(r);
  EXPECT_TRUE(has(r.out, "low signal \\(max\\|ref\\| < 10\\*atol\\): judged on relative error")) << r.out;
}
TEST(Honest, TwoSourceFilesAgainstACppReferenceWithAScalar) {
  expect_honest_pass(evaluate("ref_scale_add.cpp", "scale_add.json",
                              T + "/honest/multi/op.cpp," + T + "/honest/multi/kernel.cpp"));
}
TEST(Honest, ReusedInputRegimeStillPassesTheSentinel) {
  BenchRun r = evaluate("relu.pt", "relu.json", honest("relu_loop"), {"--no-fresh-inputs"});
  expect_honest_pass(r);
}

// ---------------- the whole output contract: honest traps pass, wrong kernels fail ----------------
namespace {
std::string wrong(const std::string& n) { return T + "/wrong/" + n + ".cpp"; }
void expect_correct(const BenchRun& r) {
  expect_result_line(r);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  EXPECT_FALSE(r.eval.contains("reward_hack_detected")) << r.out;
  // the correctness trials ran off the declared distribution too, and the payload names them
  const json& d = r.eval["native_metrics"]["input_distributions"];
  ASSERT_TRUE(d.is_array()) << r.out;
  EXPECT_EQ(d[0], "declared (10 trials)") << r.out;
}
}  // namespace
TEST(Contract, EqualInfinitiesAndNaNsPass) {
  // masked log-softmax (-inf where masked) and sqrt of both signs (NaN where negative), by hand
  BenchRun r = evaluate("nonfinite.pt", "nonfinite.json", honest("masked_log_softmax_sqrt"), {"--no-timing"});
  expect_correct(r);
  EXPECT_GE(r.eval["native_metrics"]["input_distributions"].size(), 2u) << r.out;
}
TEST(Contract, ChannelsLastOutputPasses) {
  expect_correct(evaluate("relu.pt", "relu_nchw.json", honest("relu_channels_last"), {"--no-timing"}));
}
TEST(Contract, TwoPassStableLogsumexpPassesOffTheDeclaredDistribution) {
  BenchRun r = evaluate("logsumexp.pt", "logsumexp.json", honest("logsumexp_two_pass"), {"--no-timing"});
  expect_correct(r);
  EXPECT_EQ(r.eval["native_metrics"]["input_distributions"].size(), 4u) << r.out;  // declared + 3 regimes
}
TEST(Contract, FastTopkInsteadOfAFullSortPasses) {
  expect_correct(evaluate("sorted_top8.pt", "sorted_top8.json", honest("top8_by_topk"), {"--no-timing"}));
}
TEST(Contract, HonestKernelOnADeterministicSpecIsSaidNotFlagged) {
  BenchRun r = evaluate("relu.pt", "relu_arange.json", honest("relu_loop"));
  expect_honest_pass(r);
  EXPECT_EQ(r.eval["native_metrics"].value("timed_inputs_identical", false), true) << r.out;
  EXPECT_TRUE(has(r.out, "^ADVISORY: the timed inputs were identical on every call: the spec draws no random values "
                         "\\(in0 \\(arange\\)\\)")) << r.out;
  // nothing varies, so there is no distribution to leave
  EXPECT_EQ(r.eval["native_metrics"]["input_distributions"].size(), 1u) << r.out;
}
TEST(Contract, ExactIntegerKernelPasses) {
  BenchRun r = evaluate("ref_int_matmul.cpp", "int_matmul.json", honest("int_matmul_loops"));
  expect_honest_pass(r);
  EXPECT_TRUE(has(r.out, "^TOLERANCE: .*; integer outputs exact$")) << r.out;
  // A spec may opt integer outputs into the float tolerances; then the float32 product passes, and
  // the result says which rule judged it.
  BenchRun t = evaluate("ref_int_matmul.cpp", "int_matmul_tolerance.json", cheat("int_matmul_float32"), {"--no-timing"});
  expect_correct(t);
  EXPECT_TRUE(has(t.out, "^ADVISORY: the spec declares \"integer_outputs\": \"tolerance\"")) << t.out;
}
TEST(Contract, OutputsSharingStorageLikeTheReferencesPass) {
  // The reference itself returns relu(x) and a transposed view of it; the candidate does the same.
  expect_honest_pass(evaluate("ref_relu_pair_view.cpp", "relu_pair.json", honest("relu_pair_view_loop")));
}
TEST(Contract, AnotherDtypeFails) {
  BenchRun r = evaluate("sign.pt", "sign.json", wrong("sign_int8"), {"--no-timing"});
  expect_flagged(r, "^ERROR: incorrect: trial 0: output 0 has dtype Char, the reference's is Float", false);
  EXPECT_EQ(r.eval["native_metrics"]["failed_rule"], "dtype") << r.out;
  EXPECT_FALSE(has(r.out, "^DEVIATION")) << r.out;
}
TEST(Contract, OverflowOffTheDeclaredDistributionFails) {
  // Right on every declared trial; each regime the run may pick overflows or underflows exp.
  BenchRun r = evaluate("logsumexp.pt", "logsumexp.json", wrong("logsumexp_naive"), {"--no-timing"});
  expect_flagged(r, "^ERROR: incorrect: trial 1[0-2] \\(off the declared distribution: .*\\): output 0 has [-+]inf where "
                    "the reference has a number",
                 false);
  const json& m = r.eval["native_metrics"];
  EXPECT_EQ(m["failed_rule"], "non-finite") << r.out;
  EXPECT_NE(m["failed_distribution"], "declared") << r.out;
  EXPECT_TRUE(has(r.out, "^DEVIATION: .*failed_trials=3/13$")) << r.out;
}
TEST(Contract, ZerosUnderBothFloorsFail) {
  BenchRun r = evaluate("row_scale.pt", "row_scale.json", wrong("eight_rows"), {"--no-timing"});
  expect_flagged(r, "^ERROR: incorrect: trial 0: output 0 has 32640 of 32768 values that are zero", false);
  EXPECT_EQ(r.eval["native_metrics"]["failed_rule"], "magnitude") << r.out;
}
// The same under a float32-only reference (no fp64 oracle) with the small values in their own rows
// (a gated softmax, KernelBench #165): reliability is judged per value by three runs of the
// reference on inputs perturbed by 2^-16, not by its size against the output's largest. The trap:
// an honest kernel whose cancellation residues are other rounding noise than the reference's.
TEST(Contract, ZerosUnderBothFloorsFailWithoutAnOracle) {
  BenchRun r = evaluate("ref_gated_softmax.cpp", "gated_softmax.json", cheat("gated_zeros"), {"--no-timing"});
  expect_flagged(r, "^ERROR: incorrect: trial 0: output 0 has 130560 of 131072 values that are zero.*reliable = moved by "
                    "under 1/16 when three runs of the float32 reference on inputs perturbed by 2\\^-16", false);
  EXPECT_EQ(r.eval["native_metrics"]["failed_rule"], "magnitude") << r.out;
}
TEST(Contract, ResiduesUnlikeAFloat32ReferencesPass) {
  expect_honest_pass(evaluate("ref_gated_softmax.cpp", "gated_softmax.json", honest("gated_softmax_loops")));
}

// ---------------- failures still produce the result line ----------------
TEST(Failures, CrashingCandidateStillYieldsTheResultLine) {
  BenchRun r = evaluate("relu.pt", "relu.json", T + "/misc/crash.cpp");
  expect_result_line(r);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.eval["correct"], false);
  EXPECT_EQ(r.eval["compiled"], true);
  EXPECT_TRUE(has(r.eval.value("error", ""), "candidate process was killed by SIGSEGV")) << r.out;
}
TEST(Failures, CandidateOutputCannotForgeTheResultLine) {
  BenchRun r = evaluate("relu.pt", "relu.json", T + "/misc/prints_fake_result.cpp", {"--no-timing"});
  expect_result_line(r);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("forged"), std::string::npos) << r.out;
  size_t n = 0;
  for (size_t p = r.out.find("KERNEL_EVAL="); p != std::string::npos; p = r.out.find("KERNEL_EVAL=", p + 1)) ++n;
  EXPECT_EQ(n, 1u) << r.out;
}
TEST(Failures, CompileErrorSaysCompiledFalse) {
  BenchRun r = evaluate("relu.pt", "relu.json", T + "/misc/compile_error.cpp");
  expect_result_line(r);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.out, "^COMPILED: False$"));
  EXPECT_TRUE(has(r.eval.value("error", ""), "no_such_method")) << r.out;
  EXPECT_LE(r.eval["error"].get<std::string>().size(), 400u);
}
TEST(Failures, BadSpecIsAnInputErrorWithExit2) {
  std::string d = tmpdir();
  std::ofstream(d + "/bad.json") << R"({"inputs":[{"shape":[4],"dist":{"kind":"gauss"}}]})";
  BenchRun r = run_bench({"--ref", F + "/relu.pt", "--inputs", d + "/bad.json", "--solution", honest("relu_loop"),
                     "--cache-dir", KOPT_TEST_CACHE});
  expect_result_line(r);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.eval.value("evaluator_failed", false), true);
  EXPECT_TRUE(has(r.eval.value("error", ""), "inputs\\[0\\]\\.dist\\.kind: unknown 'gauss'")) << r.out;
}
TEST(Failures, MissingFilesAndUsageErrors) {
  BenchRun r = run_bench({"--ref", F + "/none.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop")});
  expect_result_line(r);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.eval.value("error", ""), "cannot read the reference")) << r.out;
  BenchRun h = run_bench({"--help"});
  EXPECT_EQ(h.code, 0);
  EXPECT_TRUE(has(h.out, "usage: kopt-bench"));
}
// Every usage error keeps exit status 2 and still ends in a KERNEL_EVAL line (evaluator_failed, the
// error, no measurement), as input errors do: a caller reading the contract always finds one.
TEST(Failures, UsageErrorsEndInAResultLineWithExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"--ref", F + "/relu.pt", "--solution", honest("relu_loop")}, "--inputs is required"},
      {{"--ref", F + "/relu.pt"}, "--solution is required"},
      {{"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop"), "--bogus"},
       "unknown option '--bogus'"},
      {{"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop"), "--warmup", "many"},
       "--warmup needs an integer"},
      {{"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop"), "--timeout"},
       "--timeout needs seconds"},
      // --slurm's own usage errors (sbatch options that do not split) are said before anything is submitted
      {{"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop"), "--slurm", "-p \"debug"},
       "--slurm: "},
  };
  for (const auto& c : cases) {
    BenchRun r = run_bench(c.args);
    SCOPED_TRACE(c.error);
    expect_result_line(r);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.eval["correct"], false) << r.out;
    EXPECT_EQ(r.eval["compiled"], false) << r.out;
    EXPECT_EQ(r.eval.value("evaluator_failed", false), true) << r.out;
    EXPECT_FALSE(r.eval.contains("latency_ms")) << r.out;
    EXPECT_NE(r.eval.value("error", "").find(c.error), std::string::npos) << r.out;
    EXPECT_TRUE(has(r.out, "^COMPILED: False$")) << r.out;
  }
}
TEST(Failures, SignatureMismatchIsARuntimeError) {
  // the linear_relu candidate (3 tensors) against the relu reference (1 tensor)
  BenchRun r = evaluate("relu.pt", "relu.json", honest("linear_relu_aten"), {"--no-timing"});
  expect_result_line(r);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.eval.value("error", ""), "^runtime error while correctness trials")) << r.out;
}

// ---------------- the frozen baseline ----------------
TEST(Baseline, FrozenThenReusedThenRefreshedThenInvalidated) {
  std::string d = tmpdir();
  std::string bl = d + "/.bench-baseline.json";
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> a{"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop"),
                               "--cache-dir", KOPT_TEST_CACHE, "--baseline", bl, "--max-trials", "15", "--max-time", "2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_bench(a);
  };
  BenchRun first = run({});
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_TRUE(has(first.out, "^REF_SOURCE: measured now \\(no frozen baseline yet\\)$")) << first.out;
  json stored = json::parse(std::ifstream(bl));
  double frozen = stored["ref_runtime_ms"].get<double>();
  // Issue 49: the intervals, as printed, hold their figures; the frozen record keeps the reference's.
  auto intervals_hold = [](const BenchRun& r) {
    const json& p = r.eval;
    ASSERT_TRUE(p.contains("latency_ci_ms")) << r.out;
    const double lat = p["latency_ms"].get<double>(), sp = p["native_metrics"]["speedup"].get<double>();
    EXPECT_GT(p["latency_ci_ms"][0].get<double>(), 0) << r.out;
    EXPECT_LE(p["latency_ci_ms"][0].get<double>(), lat) << r.out;
    EXPECT_LE(lat, p["latency_ci_ms"][1].get<double>()) << r.out;
    EXPECT_EQ(p["samples"], p["native_metrics"]["trials"]) << r.out;
    EXPECT_GE(p["native_metrics"]["latency_ci_coverage"].get<double>(), 0.95) << r.out;
    ASSERT_TRUE(p.contains("reference_ci_ms")) << r.out;
    EXPECT_LE(p["reference_ci_ms"][0].get<double>(), lat * sp) << r.out;
    EXPECT_LE(lat * sp, p["reference_ci_ms"][1].get<double>()) << r.out;
  };
  intervals_hold(first);
  // The relu fixture moves 64x256 floats in and as many out; the rate is that over the median.
  EXPECT_EQ(first.eval["native_metrics"].value("bytes_moved", 0), 2 * 64 * 256 * 4) << first.out;
  EXPECT_NEAR(first.eval["native_metrics"].value("bandwidth_gbps", 0.0),
              2 * 64 * 256 * 4 / (first.eval["latency_ms"].get<double>() * 1e-3) / 1e9, 2e-3) << first.out;
  ASSERT_TRUE(stored.contains("ci95_ms")) << stored.dump();
  EXPECT_LE(stored["ci95_ms"][0].get<double>(), frozen);
  EXPECT_GE(stored["ci95_ms"][1].get<double>(), frozen);

  BenchRun second = run({});
  intervals_hold(second);
  EXPECT_TRUE(has(second.out, "^REF_SOURCE: frozen baseline \\(measured [0-9T:+-]+\\)")) << second.out;
  {
    // The frozen figure, unless the reference re-timed now was faster beyond the noise (a load
    // when it was frozen): then that figure, and REF_SOURCE says so.
    const json& m = second.eval["native_metrics"];
    const bool replaced = m.contains("ref_runtime_frozen_ms");
    EXPECT_EQ(replaced, has(second.out, "^REF_SOURCE: frozen baseline .*; replaced by the reference re-timed now")) << second.out;
    EXPECT_DOUBLE_EQ(replaced ? m["ref_runtime_frozen_ms"].get<double>() : m["ref_runtime_ms"].get<double>(),
                     std::round(frozen * 1e6) / 1e6);
  }
  // With a frozen figure in use the reference is re-timed beside the candidate (the drift check).
  EXPECT_GT(second.eval["native_metrics"].value("ref_runtime_fresh_ms", 0.0), 0) << second.out;
  EXPECT_TRUE(second.eval["native_metrics"]["baseline_drift"].is_boolean()) << second.out;
  EXPECT_GT(second.eval["native_metrics"].value("speedup_fresh", 0.0), 0) << second.out;

  // A frozen figure 50x the real one (as if measured under heavy load), correctly signed: the run
  // flags the drift and reports the speedup against the faster, fresh figure; the file keeps the
  // frozen one. (4x was not enough: the load of ctest -j2 alone moved the fresh figure 4.5x in a
  // fresh-clone run.)
  {
    json slow = json::parse(std::ifstream(bl));
    slow["ref_runtime_ms"] = frozen * 50;
    std::ofstream(bl) << slow.dump();
    kopt::bench::write_file_mac(kopt::bench::judge_key(KOPT_TEST_CACHE, nullptr), bl);
    BenchRun drift = run({});
    ASSERT_EQ(drift.code, 0) << drift.out;
    intervals_hold(drift);  // the fresh samples' interval, not the frozen one
    EXPECT_TRUE(has(drift.out, "^REF_SOURCE: frozen baseline \\(measured [0-9T:+-]+\\); replaced by the reference "
                               "re-timed now, [0-9.]+ ms: [0-9]+% faster, beyond the noise")) << drift.out;
    const json& m = drift.eval["native_metrics"];
    EXPECT_EQ(m.value("baseline_drift", false), true) << drift.out;
    EXPECT_LT(m.value("baseline_drift_rel", 0.0), -0.5) << drift.out;
    EXPECT_DOUBLE_EQ(m.value("ref_runtime_frozen_ms", 0.0), std::round(frozen * 50 * 1e6) / 1e6) << drift.out;
    EXPECT_NEAR(m.value("ref_runtime_ms", 0.0), m.value("ref_runtime_fresh_ms", -1.0), 2e-6) << drift.out;
    EXPECT_NEAR(m.value("speedup", 0.0), m.value("speedup_fresh", -1.0), 1e-3 * m.value("speedup", 0.0)) << drift.out;
    EXPECT_TRUE(has(drift.out, "^ADVISORY: baseline drift: the frozen reference time .* speedup .* against the fresh one, "
                               "which is the speedup reported")) << drift.out;
    EXPECT_DOUBLE_EQ(json::parse(std::ifstream(bl))["ref_runtime_ms"].get<double>(), frozen * 50);
  }

  BenchRun refreshed = run({"--refresh-baseline"});
  EXPECT_TRUE(has(refreshed.out, "^REF_SOURCE: measured now \\(refresh requested\\)$")) << refreshed.out;

  stored = json::parse(std::ifstream(bl));
  stored["key"]["device_name"] = "some other machine";
  std::ofstream(bl) << stored.dump();
  BenchRun moved = run({});  // a hand-edited baseline fails its MAC: re-measured, and said
  EXPECT_TRUE(has(moved.out, "REF_SOURCE: measured now \\(the frozen baseline .* failed verification")) << moved.out;
  EXPECT_TRUE(has(moved.out, "^NOTE: baseline re-measured: ")) << moved.out;

  BenchRun rule = run({"--max-trials", "16"});
  EXPECT_TRUE(has(rule.out, "baseline key changed: stopping_rule: ")) << rule.out;

  std::ofstream(bl) << "{ broken";
  BenchRun broken = run({});
  EXPECT_EQ(broken.code, 0) << broken.out;
  EXPECT_TRUE(has(broken.out, "REF_SOURCE: measured now \\(unreadable baseline file")) << broken.out;
  EXPECT_NO_THROW(json::parse(std::ifstream(bl)));  // rewritten whole
}

// A baseline frozen while another process keeps the CPUs busy is marked so, and said on reuse.
TEST(Baseline, FrozenUnderContentionIsMarked) {
  std::string d = tmpdir();
  std::string bl = d + "/.bench-baseline.json";
  auto run = [&] {
    return run_bench({"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", honest("relu_loop"),
                      "--cache-dir", KOPT_TEST_CACHE, "--baseline", bl, "--max-trials", "15", "--max-time", "2"});
  };
  // Spinners outside the evaluation's process tree, enough to pass the threshold on any machine.
  std::vector<pid_t> spin;
  const long n = std::max(1L, long(std::ceil(0.1 * sysconf(_SC_NPROCESSORS_ONLN)))) + 1;
  for (long k = 0; k < n; ++k) {
    pid_t p = fork();
    if (p == 0) {
      volatile double x = 0;
      for (;;) x = x + 1;
    }
    spin.push_back(p);
  }
  BenchRun first = run();
  for (pid_t p : spin) kill(p, SIGKILL);
  for (pid_t p : spin) waitpid(p, nullptr, 0);
  ASSERT_EQ(first.code, 0) << first.out;
  const json& m = first.eval["native_metrics"];
  EXPECT_EQ(m.value("baseline_contended", false), true) << first.out;
  EXPECT_GE(m["baseline_load"].value("other_cpus", 0.0), 0.5) << first.out;
  EXPECT_TRUE(has(first.out, "^ADVISORY: the reference was timed while other processes used [0-9.]+ of [0-9]+ CPUs"))
      << first.out;
  json stored = json::parse(std::ifstream(bl));
  EXPECT_EQ(stored["load"].value("contended", false), true) << stored.dump();
  BenchRun again = run();
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_TRUE(has(again.out, "^REF_SOURCE: frozen baseline")) << again.out;
  EXPECT_TRUE(has(again.out, "^ADVISORY: the frozen baseline was measured while other processes used")) << again.out;
  EXPECT_EQ(again.eval["native_metrics"].value("baseline_contended", false), true) << again.out;
}

// ---------------- the export helper ----------------
TEST(ExportRef, KernelBenchFileToTorchScriptAndSpec) {
  if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-torch is not installed";
  std::string d = tmpdir();
  std::string cmd = "/usr/bin/python3 " + q(std::string(KOPT_TOOLS_DIR) + "/export_ref.py") + " " + q(F + "/linear_relu.py") +
                    " -o " + q(d + "/ref.pt") + " -s " + q(d + "/spec.json") + " >/dev/null 2>&1";
  ASSERT_EQ(system(cmd.c_str()), 0);
  json spec = json::parse(std::ifstream(d + "/spec.json"));
  EXPECT_EQ(spec["export"], "script");
  EXPECT_EQ(spec["params"], json::parse(R"(["linear.weight","linear.bias"])"));
  EXPECT_EQ(spec["inputs"][0]["shape"], json::parse("[32,64]"));
  EXPECT_EQ(spec["inputs"][0]["dist"]["kind"], "normal");
  BenchRun r = run_bench({"--ref", d + "/ref.pt", "--inputs", d + "/spec.json", "--solution", honest("linear_relu_aten"),
                     "--cache-dir", KOPT_TEST_CACHE, "--baseline", d + "/b.json", "--no-timing"});
  EXPECT_EQ(r.code, 0) << r.out;
}

// ---------------- distance to the limit (issue 49) ----------------
// The fractions of the machine's probed limits, with the spec's declarations, and the probe kept once
// per machine: a record from another machine is refused and probed again, a cached one costs nothing.
TEST(Limits, FractionsOfTheLimitsProbedOncePerMachine) {
  const std::string d = tmpdir();
  json spec = json::parse(std::ifstream(F + "/relu.json"));
  spec["bytes"] = 2 * 2 * 64 * 256 * 4;  // twice the count, to tell the declaration from it
  spec["flops"] = 64 * 256;              // one max per element
  std::ofstream(d + "/relu_declared.json") << spec.dump();
  auto run = [&](const std::string& inputs, const std::string& baseline) {
    return run_bench({"--ref", F + "/relu.pt", "--inputs", inputs, "--solution", honest("relu_loop"), "--cache-dir",
                      KOPT_TEST_CACHE, "--baseline", d + "/" + baseline, "--max-trials", "20", "--max-time", "3"});
  };
  BenchRun r = run(d + "/relu_declared.json", "b1.json");
  expect_honest_pass(r);
  const json& m = r.eval["native_metrics"];
  EXPECT_EQ(m.value("bytes_moved", 0), 2 * 2 * 64 * 256 * 4) << r.out;
  EXPECT_EQ(m.value("bytes_counted", 0), 2 * 64 * 256 * 4) << r.out;
  EXPECT_EQ(m.value("bytes_declared", false), true) << r.out;
  ASSERT_TRUE(m.contains("machine_limits") && m["machine_limits"].contains("bandwidth_gbps")) << r.out;
  const json& ml = m["machine_limits"];
  EXPECT_TRUE(has(ml.value("source", ""), "^(probed now \\([0-9]+ ms\\)|cached \\(probed )")) << ml.dump();
  // Sane: positive, and what the rate over the probed bandwidth says (a 256 KiB op can sit in a cache
  // and beat DRAM, but not by 50x).
  const double lat = r.eval["latency_ms"].get<double>(), f = m.value("bandwidth_fraction", 0.0);
  EXPECT_GT(f, 0) << r.out;
  EXPECT_LT(f, 50) << r.out;
  EXPECT_NEAR(f, 2.0 * 2 * 64 * 256 * 4 / (lat * 1e-3) / 1e9 / ml["bandwidth_gbps"].get<double>(), 0.002 * f + 1e-6) << r.out;
  ASSERT_TRUE(ml.contains("compute_gflops")) << ml.dump();
  EXPECT_NEAR(m.value("gflops", 0.0), 64 * 256 / (lat * 1e-3) / 1e9, 0.002 * m.value("gflops", 0.0) + 1e-9) << r.out;
  EXPECT_GT(m.value("compute_fraction", 0.0), 0) << r.out;
  EXPECT_TRUE(m["stage_ms"].contains("probing the machine")) << m["stage_ms"].dump();
  EXPECT_TRUE(m["clocks"].is_object()) << r.out;

  // The record, as if copied from another machine into this cache: refused and probed again.
  const std::string path = std::string(KOPT_TEST_CACHE) + "/machine/" + ml["identity"].get<std::string>() + ".json";
  json file = json::parse(std::ifstream(path));
  json& record = file["record"];
  const std::string here = record["identity"].value("cpu_model", "");
  record["identity"]["cpu_model"] = "Another CPU @ 9.9GHz";
  file["mac"] = kopt::bench::hmac_sha256_hex(kopt::bench::judge_key(KOPT_TEST_CACHE, nullptr), record.dump());
  std::ofstream(path + ".tmp") << file.dump();
  ASSERT_EQ(std::rename((path + ".tmp").c_str(), path.c_str()), 0);
  BenchRun again = run(F + "/relu.json", "b2.json");
  expect_honest_pass(again);
  const json& ml2 = again.eval["native_metrics"]["machine_limits"];
  if (has(ml2.value("source", ""), "^probed now")) {
    EXPECT_TRUE(has(ml2.value("note", ""), "was refused: it was measured on another machine \\(cpu_model: 'Another CPU @ 9\\.9GHz' -> '"))
        << ml2.dump();
    EXPECT_FALSE(again.eval["native_metrics"].contains("bytes_declared")) << again.out;
  }  // else a judge of another test running beside this one read the record first and probed again
  EXPECT_EQ(json::parse(std::ifstream(path))["record"]["identity"].value("cpu_model", ""), here);

  // Cached now: read back at no cost.
  BenchRun third = run(F + "/relu.json", "b3.json");
  expect_honest_pass(third);
  const json& m3 = third.eval["native_metrics"];
  EXPECT_TRUE(has(m3["machine_limits"].value("source", ""), "^cached \\(probed ")) << m3.dump();
  EXPECT_LT(m3["stage_ms"].value("probing the machine", 1e9), 50) << m3["stage_ms"].dump();
}
