// The judge is out of the candidate's reach: one test per channel a candidate could use outside
// the tensors (cheats/reach/), the confinement probed from inside, and state it does not control
// (cache, baseline, environment). Runs the kopt-bench binary like the user does.
#include <gtest/gtest.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench_run.hpp"

using nlohmann::json;
using namespace kopt_test;

namespace {

const std::string T = KOPT_TESTS_DIR;
const std::string F = T + "/fixtures";

using Outcome = BenchRun;
std::string tmpdir() { return kopt_test::tmpdir("reach"); }
Outcome bench(const std::vector<std::string>& args, const std::string& env = "") { return run_bench(args, env); }

Outcome eval_relu(const std::string& solution, std::vector<std::string> extra = {}, const std::string& env = "",
              std::string baseline = "") {
  static const std::string dir = tmpdir();
  static int counter = 0;
  if (baseline.empty()) baseline = dir + "/b-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".json";
  std::vector<std::string> a{"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", solution,
                             "--cache-dir", KOPT_TEST_CACHE, "--baseline", baseline, "--max-trials", "20",
                             "--max-time", "3"};
  a.insert(a.end(), extra.begin(), extra.end());
  return bench(a, env);
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
// Processes whose name (comm) is `name`, anywhere on the machine.
int processes_named(const std::string& name) {
  int n = 0;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::ifstream f(std::string("/proc/") + e->d_name + "/comm");
      std::string c;
      std::getline(f, c);
      n += c == name;
    }
    closedir(d);
  }
  return n;
}
std::string reach(const std::string& n) { return T + "/cheats/reach/" + n + ".cpp"; }

void expect_one_true_result_line(const Outcome& r) {
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.out.find("forged"), std::string::npos) << r.out;
  EXPECT_EQ(count_of(r.out, "KERNEL_EVAL="), 1u) << r.out;
}

}  // namespace

TEST(Reach, StaticDestructorAndAtexitCannotRewriteTheResult) {
  Outcome r = eval_relu(reach("forge_at_exit"));
  expect_one_true_result_line(r);
  EXPECT_EQ(r.eval["correct"], true) << r.out;  // the op itself is an honest relu
  EXPECT_NE(r.eval["native_metrics"].value("speedup", 0.0), 999.0);
}

TEST(Reach, ParentFdForgeryStopAndKillAreRefused) {
  Outcome r = eval_relu(reach("forge_parent"));
  expect_one_true_result_line(r);
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  EXPECT_LT(r.seconds, 60) << "a stopped parent must not hang the run";
}

TEST(Reach, LateOrphanCannotAppendALineOrSurvive) {
  Outcome r = eval_relu(reach("late_orphan"));
  expect_one_true_result_line(r);
  std::this_thread::sleep_for(std::chrono::seconds(4));  // past the orphan's sleep
  EXPECT_EQ(processes_named("kopt-orphan-zz"), 0) << "a candidate's process outlived the evaluation";
}

TEST(Reach, HangOrSelfStopEndsInTimeout) {
  Outcome r = eval_relu(reach("hang"), {"--timeout", "8", "--no-timing"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false);
  EXPECT_TRUE(has(r.eval.value("error", ""), "^timeout")) << r.out;
  EXPECT_EQ(r.eval["native_metrics"].value("timeout", false), true) << r.out;
  EXPECT_LT(r.seconds, 30);
}

TEST(Reach, HonestOnlyWhenCheckedIsCaughtOnTheTimedCalls) {
  Outcome r = eval_relu(reach("honest_only_when_checked"));
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
  EXPECT_EQ(r.eval.value("reward_hack_detected", false), true) << r.out;
  EXPECT_TRUE(has(r.out, "timed call [0-9]+ returned a wrong result")) << r.out;
}

TEST(Reach, PooledLazilyFilledBuffersAreCaught) {
  Outcome r = eval_relu(reach("pooled_buffers"));
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
}

// The probe, compiled with the paths it must not reach, run three times (correctness only, then
// freezing the baseline, then with the baseline in place) with the given extra arguments.
struct ProbeRun {
  std::vector<Outcome> runs;
  bool wrote_outside = false;
  int left_behind = 0;
};
// name: the process the probe leaves behind (one per test: ctest runs tests side by side).
ProbeRun run_probe(const std::vector<std::string>& extra, const std::string& name) {
  std::string d = tmpdir();
  std::string var = "/var/tmp/kopt-reach-" + std::to_string(getpid());
  ::mkdir(var.c_str(), 0777);
  std::string baseline = var + "/baseline.json";
  std::string outside = var + "/written-by-candidate";
  {
    std::ifstream src(reach("confinement_probe"));
    std::ofstream dst(d + "/probe.cpp");
    dst << src.rdbuf();
    std::ofstream h(d + "/probe_paths.h");
    h << "#define KOPT_PROBE_BASELINE \"" << baseline << "\"\n#define KOPT_PROBE_OUTSIDE \"" << outside
      << "\"\n#define KOPT_PROBE_NAME \"" << name << "\"\n";
  }
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  ProbeRun p;
  // A value in the judge's environment that must not reach the candidate (the probe looks for it).
  const std::string env = "KOPT_PROBE_SECRET=kopt-probe-secret-7f3a9c1e";
  p.runs.push_back(eval_relu(d + "/probe.cpp", with({"--no-timing"}), env, baseline));  // no baseline yet
  p.runs.push_back(eval_relu(d + "/probe.cpp", with({}), env, baseline));               // freezes the baseline
  p.runs.push_back(eval_relu(d + "/probe.cpp", with({}), env, baseline));               // the baseline exists now
  struct stat st;
  EXPECT_NE(::stat(baseline.c_str(), &st), -1) << "the judge itself must still write the baseline";
  p.wrote_outside = ::stat(outside.c_str(), &st) == 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  p.left_behind = processes_named(name);
  std::system(("rm -rf " + q(var) + " " + q(d)).c_str());
  return p;
}

TEST(Reach, ConfinementHoldsFromInside) {
  ProbeRun p = run_probe({}, "kopt-probe-ns");
  for (const Outcome& x : p.runs) {
    ASSERT_TRUE(x.eval.is_object()) << x.out;
    EXPECT_EQ(x.eval["correct"], true) << x.out;
    EXPECT_FALSE(has(x.out, "confinement escaped")) << x.out;
  }
  EXPECT_FALSE(p.wrote_outside) << "the candidate wrote outside its scratch dir";
  const json& iso = p.runs.back().eval["native_metrics"]["isolation"];
  EXPECT_EQ(iso.value("level", ""), "namespaces") << p.runs.back().out;
  EXPECT_EQ(iso.value("seccomp", false), true) << p.runs.back().out;
  EXPECT_EQ(p.left_behind, 0) << "a candidate's process outlived the evaluation";
}

// Without bubblewrap (no mount, PID or network namespace) Landlock and seccomp alone must keep the
// probe in: no write outside scratch, no baseline read, no process list, no TCP, no signals.
TEST(Reach, LandlockAloneHoldsWithoutNamespaces) {
  ProbeRun p = run_probe({"--no-namespaces"}, "kopt-probe-ll");
  const json& iso = p.runs.back().eval["native_metrics"]["isolation"];
  if (iso.is_object() && iso.contains("landlock") && iso["landlock"].value("abi", 0) < 4)
    GTEST_SKIP() << "this kernel's Landlock ABI is below 4 (no TCP rules): " << iso.dump();
  for (const Outcome& x : p.runs) {
    ASSERT_TRUE(x.eval.is_object()) << x.out;
    EXPECT_EQ(x.eval["correct"], true) << x.out;
    EXPECT_FALSE(has(x.out, "confinement escaped")) << x.out;
  }
  EXPECT_FALSE(p.wrote_outside) << "the candidate wrote outside its scratch dir";
  EXPECT_EQ(iso.value("level", ""), "process") << p.runs.back().out;
  EXPECT_EQ(iso["landlock"].value("tcp", ""), "bind and connect refused") << iso.dump();
  EXPECT_EQ(p.runs.back().eval["native_metrics"]["options"].value("namespaces", true), false);
  EXPECT_TRUE(has(p.runs.back().out, "weaker isolation: the candidate ran without namespaces \\(agent-chosen --no-namespaces\\)"))
      << p.runs.back().out;
  EXPECT_EQ(p.left_behind, 0) << "a candidate's process outlived the evaluation";
}

// Confinement fails closed: on a machine without user namespaces (simulated: kopt-bench runs in a
// user namespace of bubblewrap's whose user.max_user_namespaces allows no nested one, so its own
// bubblewrap fails as on such a machine) the evaluation is refused with the step, the cause and
// the fix, not run with less isolation than the user was promised. Only an explicit
// --allow-weaker-isolation runs it anyway, said as a trust-lowering advisory.
const std::string kNoUserNamespaces = "bwrap --dev-bind / / --unshare-user --disable-userns --";
bool can_simulate_no_userns() {
  return std::system((kNoUserNamespaces + " /bin/true >/dev/null 2>&1").c_str()) == 0;
}
TEST(Reach, NoUserNamespacesIsRefusedNotRunWeaker) {
  if (!can_simulate_no_userns()) GTEST_SKIP() << "bwrap --disable-userns (bubblewrap >= 0.8) is not available";
  Outcome r = eval_relu(T + "/honest/relu_loop.cpp", {}, kNoUserNamespaces);
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
  EXPECT_EQ(r.eval.value("evaluator_failed", false), true) << r.out;
  EXPECT_FALSE(r.eval.contains("latency_ms")) << r.out;
  EXPECT_TRUE(has(r.out, "^ERROR: .*refused: weaker isolation: no sandbox namespaces\\. Fix: install bubblewrap and allow "
                         "user namespaces .*--allow-weaker-isolation .*Cause: bubblewrap could not set up the sandbox"))
      << r.out;
}
TEST(Reach, AllowWeakerIsolationRunsWithoutUserNamespacesAndSaysSo) {
  if (!can_simulate_no_userns()) GTEST_SKIP() << "bwrap --disable-userns (bubblewrap >= 0.8) is not available";
  Outcome r = eval_relu(T + "/honest/relu_loop.cpp", {"--allow-weaker-isolation"}, kNoUserNamespaces);
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  const json& iso = r.eval["native_metrics"]["isolation"];
  EXPECT_EQ(iso.value("level", ""), "process") << r.out;
  EXPECT_EQ(iso.value("seccomp", false), true) << r.out;
  EXPECT_EQ(r.eval["native_metrics"]["options"].value("allow_weaker_isolation", false), true) << r.out;
  EXPECT_TRUE(has(r.out, "^ADVISORY: weaker isolation: the candidate ran without namespaces \\(bubblewrap could not set up "
                         "the sandbox.*allowed by --allow-weaker-isolation\\)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "^ADVISORY: weaker isolation accepted: agent-chosen --allow-weaker-isolation")) << r.out;
}

// The judge starts before the builds (its LibTorch start hides behind the compiler); a build that
// fails must take it down before the result line, and a run that goes through must leave nothing
// either. This test process is a subreaper: anything kopt-bench leaves becomes our child.
std::vector<pid_t> our_children() {
  std::vector<pid_t> kids;
  std::ifstream f("/proc/self/task/" + std::to_string(getpid()) + "/children");
  pid_t p;
  while (f >> p) kids.push_back(p);
  return kids;
}
TEST(Reach, NoJudgeOrZygoteOutlivesTheEvaluation) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string bad = tmpdir() + "/bad.cpp";
  std::ofstream(bad) << "int broken = ;\n";
  Outcome r = eval_relu(bad, {"--no-timing"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["compiled"], false) << r.out;
  Outcome ok = eval_relu(T + "/honest/relu_loop.cpp", {"--no-timing"});
  EXPECT_EQ(ok.eval["correct"], true) << ok.out;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a straggler would be reparented by now
  for (pid_t k : our_children()) {
    std::ifstream c("/proc/" + std::to_string(k) + "/comm");
    std::string comm;
    std::getline(c, comm);
    ADD_FAILURE() << "left behind: pid " << k << " (" << comm << ")";
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// A forked runner joins bubblewrap's nested user namespaces one way as root and another way as
// anyone else. As root, the same evaluation also runs as nobody (as any other user, every test
// here already takes that path).
TEST(Reach, ForkedRunnerJoinsTheSandboxAsAnUnprivilegedUser) {
  if (geteuid() != 0) GTEST_SKIP() << "only as root: as another user every evaluation here already runs unprivileged";
  if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  std::string d = tmpdir();
  ASSERT_EQ(::chmod(d.c_str(), 0777), 0);
  Outcome r = bench({"--ref", F + "/relu.pt", "--inputs", F + "/relu.json", "--solution", T + "/honest/relu_loop.cpp",
                     "--cache-dir", d + "/cache", "--baseline", d + "/b.json", "--no-timing"},
                    "HOME=" + d + " setpriv --reuid=65534 --regid=65534 --clear-groups");
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  const json& iso = r.eval["native_metrics"]["isolation"];
  EXPECT_EQ(iso.value("level", ""), "namespaces") << r.out;
  EXPECT_EQ(iso.value("start", "").rfind("forked from the judge's pre-loaded zygote", 0), 0u) << r.out;
}

TEST(Reach, EnvironmentCannotSwapTheWorker) {
  Outcome r = eval_relu(T + "/honest/relu_loop.cpp", {"--no-timing"}, "KOPT_BENCH_WORKER=/bin/true KOPT_BENCH_CXX=/bin/false");
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
}

TEST(Reach, TamperedCacheEntryIsRebuiltAndSaid) {
  std::string d = tmpdir();
  std::string cache = d + "/cache";
  // A cache of its own (its own key), sharing the suite's precompiled header by hard links.
  ::mkdir(cache.c_str(), 0755);
  std::system(("cp -al " + q(std::string(KOPT_TEST_CACHE) + "/pch") + " " + q(cache + "/pch") + " 2>/dev/null").c_str());
  auto run = [&]() {
    return bench({"--ref", F + "/ref_scale_add.cpp", "--inputs", F + "/scale_add.json", "--solution",
                  T + "/honest/multi/op.cpp," + T + "/honest/multi/kernel.cpp", "--cache-dir", cache, "--baseline",
                  d + "/b.json", "--no-timing"});
  };
  Outcome a = run();
  ASSERT_EQ(a.eval["correct"], true) << a.out;
  // Poison every cached library (the reference's too), as an agent with the user's rights could.
  if (DIR* dir = opendir((cache + "/so").c_str())) {
    while (dirent* e = readdir(dir)) {
      std::string n = e->d_name;
      if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0) std::ofstream(cache + "/so/" + n, std::ios::app) << "poison";
    }
    closedir(dir);
  }
  Outcome b = run();
  EXPECT_EQ(b.eval["correct"], true) << b.out;
  EXPECT_TRUE(has(b.out, "NOTE: the cached reference library .* failed verification .*: rebuilt")) << b.out;
  EXPECT_TRUE(has(b.out, "NOTE: the cached candidate library .* failed verification .*: rebuilt")) << b.out;
  Outcome c = run();
  EXPECT_FALSE(has(c.out, "failed verification")) << c.out;
  std::system(("rm -rf " + q(d)).c_str());
}

TEST(Reach, EditedBaselineIsReMeasuredAndSaid) {
  std::string d = tmpdir();
  std::string bl = d + "/b.json";
  Outcome a = eval_relu(T + "/honest/relu_loop.cpp", {}, "", bl);
  ASSERT_EQ(a.eval["correct"], true) << a.out;
  json j;
  {
    std::ifstream f(bl);
    j = json::parse(f);
  }
  j["ref_runtime_ms"] = j["ref_runtime_ms"].get<double>() * 500;  // a 500x "speedup"
  std::ofstream(bl) << j.dump(1);
  Outcome b = eval_relu(T + "/honest/relu_loop.cpp", {}, "", bl);
  EXPECT_TRUE(has(b.out, "REF_SOURCE: measured now \\(the frozen baseline .* failed verification")) << b.out;
  EXPECT_LT(b.eval["native_metrics"].value("speedup", 0.0), 50.0) << b.out;
  std::system(("rm -rf " + q(d)).c_str());
}

TEST(Reach, EveryNonDefaultOptionIsListed) {
  Outcome r = eval_relu(T + "/honest/relu_loop.cpp", {"--atol", "0.5", "--no-fresh-inputs", "--seed", "7", "--warmup", "3"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  const json& o = r.eval["native_metrics"]["options"];
  EXPECT_EQ(o.value("atol", 0.0), 0.5) << r.out;
  EXPECT_EQ(o.value("fresh_inputs", true), false) << r.out;
  EXPECT_EQ(o.value("seed", 0), 7) << r.out;
  EXPECT_EQ(o.value("warmup", 0), 3) << r.out;
  EXPECT_EQ(o.value("max_trials", 0), 20) << r.out;
  // ... and the ones that change what "correct" means are said in words (shown on the point).
  EXPECT_TRUE(has(r.out, "ADVISORY: agent-chosen atol 0.5")) << r.out;
  EXPECT_TRUE(has(r.out, "ADVISORY: agent-pinned input seed 7")) << r.out;
  EXPECT_TRUE(has(r.out, "ADVISORY: agent-chosen --no-fresh-inputs")) << r.out;
}

namespace {
Outcome eval_fixture(const std::string& ref, const std::string& spec, const std::string& solution,
                     const std::vector<std::string>& extra = {}) {
  static const std::string dir = tmpdir();
  return evaluate_small(dir, F + "/" + ref, F + "/" + spec, solution, extra);
}
void expect_honest(const Outcome& r) { expect_honest_result(r); }
}  // namespace

// Zeros where the reference has reliable values under atol: the magnitude rule (compare.hpp) is the
// first to see them; values kept but off by less than 8x are left to the relative L2 rule
// (torch.Compare.SmallValuesOffBelowTheMagnitudeRuleMeetTheRelativeL2Rule).
TEST(Reach, DroppingContributionsUnderAtolIsCaught) {
  Outcome r = eval_fixture("mixed_scale.pt", "mixed_scale.json", reach("drop_under_atol"), {"--no-timing"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
  EXPECT_EQ(r.eval["native_metrics"].value("failed_rule", ""), "magnitude") << r.out;
  EXPECT_TRUE(has(r.out, "values that are zero, of the other sign or more than 8x off where the reference has a normal "
                         "value it computes reliably")) << r.out;
}

TEST(Reach, HeapScanFindsNoReferenceOutput) {
  Outcome r = eval_fixture("linear_relu.pt", "linear_relu.json", reach("heap_scan"), {"--no-timing"});
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.eval["correct"], false) << r.out;
  // Nothing of the reference is in its process: whatever it copies is not the answer.
  EXPECT_TRUE(has(r.out, "differs from the reference|NaN where the reference has a number")) << r.out;
}

TEST(HonestTraps, ReferenceThatReturnsAViewIsNotAliasing) {
  expect_honest(eval_fixture("view_ref.pt", "view_ref.json", T + "/honest/view_like_ref.cpp"));
}
TEST(HonestTraps, HeavyWorkspaceReuse) { expect_honest(eval_fixture("relu.pt", "relu.json", T + "/honest/workspace_reuse.cpp")); }
TEST(HonestTraps, SlowButCorrect) {
  Outcome r = eval_fixture("relu.pt", "relu.json", T + "/honest/slow_relu.cpp");
  expect_honest(r);
  EXPECT_LT(r.eval["native_metrics"].value("speedup", 9.0), 1.0) << r.out;
}
