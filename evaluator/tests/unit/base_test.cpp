// Unit tests of the torch-free pieces: hashing, the input spec, statistics, the frozen baseline,
// the output format (matched by pattern, line by line), options.
#include <gtest/gtest.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "baseline.hpp"
#include "load.hpp"
#include "options.hpp"
#include "proc.hpp"
#include "report.hpp"
#include "sandbox.hpp"
#include "sha256.hpp"
#include "slurm_client.hpp"
#include "spec.hpp"
#include "stats.hpp"

using namespace kopt::bench;
using nlohmann::json;

namespace {
std::string tmpdir() {
  char t[] = "/tmp/kopt-bench-unit.XXXXXX";
  return mkdtemp(t);
}
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string l;
  while (std::getline(ss, l)) out.push_back(l);
  return out;
}
// Like Google Benchmark's reporter tests: each expected line is a regex the output line must match.
void expect_lines_match(const std::string& out, const std::vector<std::string>& patterns) {
  auto ls = lines_of(out);
  ASSERT_EQ(ls.size(), patterns.size()) << out;
  for (size_t i = 0; i < ls.size(); ++i)
    EXPECT_TRUE(std::regex_match(ls[i], std::regex(patterns[i]))) << "line " << i << ": '" << ls[i]
                                                                 << "' !~ /" << patterns[i] << "/";
}
}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  EXPECT_EQ(sha256_hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, StreamingEqualsOneShotAndFieldsAreFramed) {
  Sha256 a;
  a.update("hello ").update("world");
  EXPECT_EQ(a.hex(), sha256_hex("hello world"));
  EXPECT_NE(Sha256().field("ab").field("c").hex(), Sha256().field("a").field("bc").hex());
}

TEST(Spec, ParsesTensorsScalarsParamsSeed) {
  json j = json::parse(R"({"inputs":[
      {"name":"x","shape":[2,3],"dtype":"float32","dist":{"kind":"uniform","low":-1,"high":1}},
      {"name":"idx","shape":[4],"dist":{"kind":"randint","low":0,"high":10}},
      {"name":"a","scalar":0.5},{"name":"n","scalar":3},{"name":"f","scalar":true}],
      "params":["w"],"precision":"bfloat16","seed":7})");
  InputSpec s = parse_spec(j);
  ASSERT_EQ(s.inputs.size(), 5u);
  EXPECT_EQ(s.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(s.inputs[0].dist.kind, DistKind::Uniform);
  EXPECT_EQ(s.inputs[1].dtype, "int64");  // randint without a dtype is an index tensor
  EXPECT_TRUE(s.inputs[2].is_scalar);
  EXPECT_EQ(s.inputs[2].scalar_kind, ScalarKind::Float);
  EXPECT_EQ(s.inputs[3].scalar_kind, ScalarKind::Int);
  EXPECT_EQ(s.inputs[4].scalar_kind, ScalarKind::Bool);
  EXPECT_EQ(s.params, std::vector<std::string>{"w"});
  EXPECT_EQ(s.precision.value(), "bfloat16");
  EXPECT_EQ(s.seed, 7u);
}

TEST(Spec, BadInputGivesAClearErrorWithThePath) {
  auto msg = [](const char* text) {
    try {
      parse_spec(json::parse(text));
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg(R"({"x":1})"), "spec.inputs: missing or not an array");
  EXPECT_EQ(msg(R"({"inputs":[{"shape":[2],"dist":{"kind":"gauss"}}]})"),
            "inputs[0].dist.kind: unknown 'gauss' (normal, uniform, randint, const, arange, file)");
  EXPECT_EQ(msg(R"({"inputs":[{"shape":[-1]}]})"), "inputs[0].shape: dimensions must be integers >= 0");
  EXPECT_EQ(msg(R"({"inputs":[{"shape":[2],"dtype":"complex64"}]})"), "inputs[0].dtype: unknown 'complex64'");
  EXPECT_EQ(msg(R"({"inputs":[{"shape":[2],"dist":{"kind":"uniform","low":1,"high":1}}]})"),
            "inputs[0].dist: uniform needs low < high");
  EXPECT_EQ(msg(R"({"inputs":[],"precision":"int8"})"), "spec.precision: must be float32, float16 or bfloat16");
  EXPECT_EQ(msg(R"({"inputs":[{"scalar":"x"}]})"), "inputs[0].scalar: must be a number or a boolean");
  EXPECT_EQ(msg(R"({"inputs":[],"mode":"training"})"), "spec.mode: must be \"train\" or \"eval\"");
  EXPECT_EQ(parse_spec(json::parse(R"({"inputs":[],"mode":"train"})")).mode.value_or(""), "train");
  EXPECT_FALSE(parse_spec(json::parse(R"({"inputs":[]})")).mode.has_value());
  // Integer outputs: exact unless the spec opts into the float tolerances by name.
  EXPECT_EQ(msg(R"({"inputs":[],"integer_outputs":"loose"})"), "spec.integer_outputs: must be \"exact\" (the default) or \"tolerance\"");
  EXPECT_EQ(msg(R"({"inputs":[],"integer_outputs":true})"), "spec.integer_outputs: must be \"exact\" (the default) or \"tolerance\"");
  EXPECT_FALSE(parse_spec(json::parse(R"({"inputs":[]})")).integer_outputs_tolerance);
  EXPECT_FALSE(parse_spec(json::parse(R"({"inputs":[],"integer_outputs":"exact"})")).integer_outputs_tolerance);
  EXPECT_TRUE(parse_spec(json::parse(R"({"inputs":[],"integer_outputs":"tolerance"})")).integer_outputs_tolerance);
  // Found by fuzz_evaluator_spec: a field of the wrong JSON type is a SpecError too.
  EXPECT_EQ(msg(R"({"inputs":[{"name":[8192,64],"shape":[2]}]})").rfind("spec: a field has the wrong type", 0), 0u);
}

TEST(Spec, LoadSpecReportsUnreadableAndInvalidJson) {
  std::string d = tmpdir();
  EXPECT_THROW(load_spec(d + "/none.json"), SpecError);
  std::ofstream(d + "/bad.json") << "{ not json";
  try {
    load_spec(d + "/bad.json");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
}

// Each trial's seed stands alone: the same (purpose, index) gives the same seed within a run, and
// nothing about one says anything about another. Pinned, it is reproducible with the key and
// another key gives other seeds (a candidate without the key cannot compute them).
TEST(Spec, TrialSeedsAreIndependentAndPinnedOnesNeedTheKey) {
  SeedSchedule r = SeedSchedule::random();
  EXPECT_EQ(r(Stream::Timing, 3), r(Stream::Timing, 3));
  EXPECT_NE(r(Stream::Timing, 3), r(Stream::Timing, 4));
  EXPECT_NE(SeedSchedule::random()(Stream::Timing, 3), SeedSchedule::random()(Stream::Timing, 3));
  SeedSchedule a = SeedSchedule::pinned(42, "k1"), b = SeedSchedule::pinned(42, "k1"), c = SeedSchedule::pinned(42, "k2");
  EXPECT_EQ(a(Stream::Timing, 3), b(Stream::Timing, 3));
  EXPECT_NE(a(Stream::Timing, 3), c(Stream::Timing, 3));
  EXPECT_NE(a(Stream::Timing, 3), a(Stream::Check, 3));
  EXPECT_NE(a(Stream::Timing, 3), SeedSchedule::pinned(43, "k1")(Stream::Timing, 3));
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < 1000; ++i) seen.insert(a(Stream::Correctness, i));
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Spec, InputsThatNeverVary) {
  InputSpec s = parse_spec(json::parse(R"({"inputs":[
    {"name":"a","shape":[4],"dist":{"kind":"arange","start":0,"step":1}},
    {"name":"c","shape":[4],"dist":{"kind":"const","value":2}},
    {"name":"n0","shape":[4],"dist":{"kind":"normal","mean":1,"std":0}},
    {"name":"r1","shape":[4],"dist":{"kind":"randint","low":3,"high":4}},
    {"name":"e","shape":[0],"dist":{"kind":"normal"}},
    {"name":"s","scalar":1.5}]})"));
  for (const auto& d : s.inputs) EXPECT_FALSE(input_varies(d)) << d.name;
  EXPECT_FALSE(any_input_varies(s));
  s.inputs.push_back(parse_spec(json::parse(R"({"inputs":[{"name":"i","shape":[2],"dist":{"kind":"randint","low":0,"high":2}}]})")).inputs[0]);
  EXPECT_TRUE(any_input_varies(s));
}

TEST(Spec, HashCoversTheSpecAndFileInputs) {
  std::string d = tmpdir();
  std::ofstream(d + "/x.bin", std::ios::binary) << std::string(16, '\1');
  json j = json::parse(R"({"inputs":[{"shape":[4],"dist":{"kind":"file","path":"x.bin"}}]})");
  std::string h1 = spec_hash(parse_spec(j, d));
  std::ofstream(d + "/x.bin", std::ios::binary) << std::string(16, '\2');
  EXPECT_NE(h1, spec_hash(parse_spec(j, d)));
  json k = j;
  k["seed"] = 1;
  EXPECT_NE(spec_hash(parse_spec(j, d)), spec_hash(parse_spec(k, d)));
}

TEST(Stats, SummaryAndStopping) {
  Summary s = summarize({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_NEAR(s.rel_iqr, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(2.5) / 3.0, 1e-12);  // sample standard deviation / mean
  EXPECT_DOUBLE_EQ(summarize({2, 2, 2}).cv, 0);
  StopRule r;
  r.min_trials = 15;
  r.max_trials = 40;
  r.budget_s = 0;  // the fast-op budget off: the caps alone (its own test below)
  StopReason why;
  std::vector<double> flat(14, 1.0);
  EXPECT_FALSE(should_stop(r, flat, 0.1, &why));  // below the minimum
  flat.push_back(1.0);
  EXPECT_TRUE(should_stop(r, flat, 0.1, &why));
  EXPECT_EQ(why, StopReason::Converged);
  std::vector<double> noisy;
  for (int i = 0; i < 40; ++i) noisy.push_back(i % 2 ? 1.0 : 2.0);
  EXPECT_TRUE(should_stop(r, noisy, 0.1, &why));
  EXPECT_EQ(why, StopReason::MaxTrials);
  std::vector<double> few(noisy.begin(), noisy.begin() + 20);
  EXPECT_FALSE(should_stop(r, few, 0.1, &why));
  EXPECT_TRUE(should_stop(r, few, 1e9, &why));
  EXPECT_EQ(why, StopReason::TimeCap);
}

// The median's interval (issue 49): exact binomial ranks, checked against a known median.
TEST(Stats, MedianCiRanksAndEdges) {
  // n = 20: P(Bin(20, 1/2) <= 5) = 0.0207 <= 0.025 < P(<= 6) = 0.0577, so k = 6: [x6, x15], coverage 0.9586.
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  MedianCi c = median_ci_sorted(v);
  EXPECT_TRUE(c.reaches);
  EXPECT_EQ(c.k, 6u);
  EXPECT_DOUBLE_EQ(c.lo, 6);
  EXPECT_DOUBLE_EQ(c.hi, 15);
  EXPECT_NEAR(c.coverage, 0.9586, 1e-4);
  EXPECT_NEAR(binom_half_cdf(20, 5), 0.020695, 1e-6);
  // n = 6 is the fewest reaching 95 %: [min, max], 1 - 2/64.
  c = median_ci_sorted({1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(c.reaches);
  EXPECT_DOUBLE_EQ(c.lo, 1);
  EXPECT_DOUBLE_EQ(c.hi, 6);
  EXPECT_NEAR(c.coverage, 1 - 2.0 / 64, 1e-12);
  // n = 5: no rank reaches; the widest interval with its coverage 1 - 2/32.
  c = median_ci_sorted({1, 2, 3, 4, 5});
  EXPECT_FALSE(c.reaches);
  EXPECT_DOUBLE_EQ(c.lo, 1);
  EXPECT_DOUBLE_EQ(c.hi, 5);
  EXPECT_NEAR(c.coverage, 0.9375, 1e-12);
  // n = 1: a point, coverage 0; n = 0: nothing.
  c = median_ci_sorted({7});
  EXPECT_FALSE(c.reaches);
  EXPECT_DOUBLE_EQ(c.lo, 7);
  EXPECT_DOUBLE_EQ(c.hi, 7);
  EXPECT_EQ(c.coverage, 0);
  EXPECT_EQ(median_ci_sorted({}).k, 0u);
  // Ties: still order statistics, the interval holds the median.
  Summary t = summarize({2, 2, 2, 2, 2, 2, 2, 3, 3, 1});
  EXPECT_TRUE(t.ci.reaches);
  EXPECT_LE(t.ci.lo, t.median);
  EXPECT_GE(t.ci.hi, t.median);
  EXPECT_EQ(t.ci.k, 2u);  // n = 10: [x2, x9] of 1 2 2 2 2 2 2 2 3 3
  EXPECT_DOUBLE_EQ(t.ci.lo, 2);
  EXPECT_DOUBLE_EQ(t.ci.hi, 3);
  EXPECT_DOUBLE_EQ(t.rel_ci_half, 0.25);
  // Large n: no underflow (2^-5000), the ranks near n/2 -+ 1.96 sqrt(n)/2.
  std::vector<double> big;
  for (int i = 0; i < 5000; ++i) big.push_back(i);
  c = median_ci_sorted(big);
  EXPECT_TRUE(c.reaches);
  EXPECT_NEAR(double(c.k), 2500 - 1.96 * std::sqrt(5000.0) / 2, 3);
  EXPECT_GE(c.coverage, 0.95);
  // The summary's half-width is the printed interval's.
  Summary u = summarize(v);
  EXPECT_NEAR(u.rel_ci_half, (15.0 - 6.0) / 2 / 10.5, 1e-12);
}

TEST(Stats, MedianCiCoversAKnownMedian) {
  // 2000 experiments per n from a skewed distribution (exponential, median ln 2) and a discrete one
  // (ties); the interval must hold the true median in >= 93 % of them (nominal >= 95 %).
  std::mt19937_64 g(49);
  std::exponential_distribution<double> ex(1.0);
  for (size_t n : {6u, 10u, 15u, 30u, 100u}) {
    int hit = 0, hit_ties = 0;
    for (int e = 0; e < 2000; ++e) {
      std::vector<double> x(n), d(n);
      for (size_t i = 0; i < n; ++i) {
        x[i] = 0.01 + ex(g);
        d[i] = std::floor(8 * ex(g));  // median floor(8 ln 2) = 5
      }
      std::sort(x.begin(), x.end());
      std::sort(d.begin(), d.end());
      MedianCi c = median_ci_sorted(x), cd = median_ci_sorted(d);
      hit += c.lo <= 0.01 + std::log(2.0) && 0.01 + std::log(2.0) <= c.hi;
      hit_ties += cd.lo <= 5 && 5 <= cd.hi;
      ASSERT_GE(c.coverage, 0.95);
    }
    EXPECT_GE(hit, 1860) << "n=" << n;
    EXPECT_GE(hit_ties, 1860) << "n=" << n;
  }
}

TEST(Stats, StopsOnTheIntervalRelativeOrAbsolute) {
  StopRule r;
  r.min_trials = 15;
  r.max_trials = 1000;
  r.target_rel_ci = 0.005;
  r.target_abs_ms = 0.002;
  r.budget_s = 0;  // the interval's targets alone (the fast-op budget has its own test)
  StopReason why;
  // A fast op (0.01 ms) with +-10 % jitter: 0.5 % is far, 2 us is near.
  std::vector<double> fast;
  for (int i = 0; i < 15; ++i) fast.push_back(0.01 * (0.9 + 0.2 * (i % 5) / 4.0));
  EXPECT_TRUE(should_stop(r, fast, 0.1, &why));
  EXPECT_EQ(why, StopReason::Converged);
  r.target_abs_ms = 0;  // off: the relative target alone
  EXPECT_FALSE(should_stop(r, fast, 0.1, &why));
  // A slow op with the same relative jitter: 2 us is no help.
  r.target_abs_ms = 0.002;
  std::vector<double> slow;
  for (double x : fast) slow.push_back(x * 1000);
  EXPECT_FALSE(should_stop(r, slow, 0.1, &why));
  EXPECT_NE(r.describe().find("0.002ms"), std::string::npos);
}

// A fast op's budget (issue 49): a noisy op whose max_trials windows fit in the budget stops once
// the loop has run that long, only when neither target is projected in reach by max_trials.
TEST(Stats, FastOpStopsAtItsBudgetOnlyWhenTheTargetIsOutOfReach) {
  StopRule r;
  r.min_trials = 15;
  r.max_trials = 100;
  r.target_rel_ci = 0.005;
  r.target_abs_ms = 0.002;
  r.budget_s = 0.05;
  StopReason why;
  // 0.3 ms with +-15 % spread: 100 windows are 30 ms, within the 50 ms budget; 0.5 % needs thousands.
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(0.3 * (0.85 + 0.3 * double((i * 7) % 20) / 19.0));
  const Summary s = summarize(noisy);
  EXPECT_GT(projected_trials(r, s), r.max_trials);
  EXPECT_FALSE(should_stop(r, noisy, 0.049, &why));  // before the budget: on
  EXPECT_TRUE(should_stop(r, noisy, 0.05, &why));
  EXPECT_EQ(why, StopReason::Budget);
  EXPECT_STREQ(to_string(why), "budget");
  // Below min_trials the budget does not stop it.
  std::vector<double> few(noisy.begin(), noisy.begin() + 14);
  EXPECT_FALSE(should_stop(r, few, 1.0, &why));
  // A slow op (3 ms: 100 windows are 300 ms, past the budget) with the same spread runs on to max_trials.
  std::vector<double> slow;
  for (double x : noisy) slow.push_back(x * 10);
  EXPECT_FALSE(should_stop(r, slow, 1.0, &why));
  // A fast op whose interval is projected to reach the target within max_trials runs on: +-2 %.
  r.target_abs_ms = 0;
  std::vector<double> quiet;
  for (int i = 0; i < 20; ++i) quiet.push_back(0.3 * (0.98 + 0.04 * double((i * 7) % 20) / 19.0));
  const Summary q = summarize(quiet);
  EXPECT_GT(q.rel_ci_half, r.target_rel_ci);
  EXPECT_GT(projected_trials(r, q), q.n);
  EXPECT_LE(projected_trials(r, q), r.max_trials);
  EXPECT_FALSE(should_stop(r, quiet, 1.0, &why));
  // Off: to max_trials as before.
  r.budget_s = 0;
  EXPECT_FALSE(should_stop(r, noisy, 1.0, &why));
  r.budget_s = 0.05;
  EXPECT_NE(r.describe().find("budget=0.05s"), std::string::npos);
  r.budget_s = 0;
  EXPECT_EQ(r.describe().find("budget"), std::string::npos);
}

namespace {
std::map<std::string, std::string> sample_key() {
  std::map<std::string, std::string> k;
  for (const auto& f : kBaselineKeyFields) k[f] = f + "-value";
  return k;
}
}  // namespace

TEST(Baseline, RoundTripAndReuseWhenTheKeyHolds) {
  std::string d = tmpdir();
  BaselineRecord r;
  r.key = sample_key();
  r.ref_runtime_ms = 1.25;
  r.measured_at = "2026-08-15T08:29:18+00:00";
  r.trials = 30;
  write_baseline_atomic(d + "/b.json", r);
  BaselineLoad l = load_baseline(d + "/b.json");
  ASSERT_TRUE(l.record.has_value()) << l.problem;
  EXPECT_DOUBLE_EQ(l.record->ref_runtime_ms, 1.25);
  EXPECT_EQ(l.record->measured_at, r.measured_at);
  EXPECT_TRUE(invalidation_reasons(*l.record, sample_key()).empty());
  EXPECT_TRUE(l.record->load.empty());  // not measured: not written, not invented
  EXPECT_FALSE(Load::from_json(l.record->load).measured);
  r.load = json{{"cpus", 2}, {"other_cpus", 1.4}, {"window_s", 0.5}, {"contended", true}};
  write_baseline_atomic(d + "/b.json", r);
  BaselineLoad m = load_baseline(d + "/b.json");
  ASSERT_TRUE(m.record.has_value()) << m.problem;
  EXPECT_TRUE(Load::from_json(m.record->load).contended());
  EXPECT_TRUE(invalidation_reasons(*m.record, sample_key()).empty());  // the load is no key field
}

// Other processes' CPU use over a window: a process outside the root's tree counts, one inside it
// is our own.
TEST(Load, OthersCountOursDoNot) {
  auto spin_child = [](double seconds) {
    pid_t p = fork();
    if (p == 0) {
      auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      volatile double x = 0;
      while (std::chrono::steady_clock::now() < end) x = x + 1;
      _exit(0);
    }
    return p;
  };
  pid_t idle = fork();  // the root of a tree that does nothing
  if (idle == 0) {
    pause();
    _exit(0);
  }
  CpuSample a = cpu_sample(idle);
  // Children of this process, not of the idle root: enough of them to pass the threshold anywhere.
  const long n = std::max(1L, long(std::ceil(0.1 * sysconf(_SC_NPROCESSORS_ONLN)))) + 1;
  std::vector<pid_t> busy;
  for (long k = 0; k < n; ++k) busy.push_back(spin_child(0.6));
  for (pid_t p : busy) waitpid(p, nullptr, 0);
  CpuSample b = cpu_sample(idle);
  Load l = load_between(a, b);
  ASSERT_TRUE(l.measured);
  EXPECT_GT(l.window_s, 0.4);
  EXPECT_GE(l.other_cpus, 0.5) << "a spinning process outside the tree must show as load";
  EXPECT_TRUE(l.contended());
  EXPECT_EQ(l.to_json()["contended"], true);
  // The same spin inside the root's tree is the root's own CPU time (reaped children included).
  CpuSample c = cpu_sample(getpid());
  pid_t mine = spin_child(0.3);
  waitpid(mine, nullptr, 0);
  CpuSample d = cpu_sample(getpid());
  EXPECT_GT(d.own, c.own);
  kill(idle, SIGKILL);
  waitpid(idle, nullptr, 0);
  EXPECT_FALSE(load_between(CpuSample{}, d).measured);
}

TEST(Baseline, EveryKeyFieldInvalidatesWithAMessageNamingIt) {
  BaselineRecord r;
  r.key = sample_key();
  for (const auto& f : kBaselineKeyFields) {
    auto k = sample_key();
    k[f] = "other";
    auto why = invalidation_reasons(r, k);
    ASSERT_EQ(why.size(), 1u) << f;
    EXPECT_EQ(why[0], f + ": '" + f + "-value' -> 'other'");
  }
  for (const char* f : {"ref_sha256", "inputs_sha256", "device_name", "device_uuid", "driver", "backend",
                        "precision", "input_regime", "timer", "stopping_rule", "seed"})
    EXPECT_NE(std::find(kBaselineKeyFields.begin(), kBaselineKeyFields.end(), f), kBaselineKeyFields.end()) << f;
}

TEST(Baseline, AbsentFileIsNotAProblemCorruptFileIs) {
  std::string d = tmpdir();
  BaselineLoad none = load_baseline(d + "/missing.json");
  EXPECT_FALSE(none.record);
  EXPECT_TRUE(none.problem.empty());
  std::ofstream(d + "/bad.json") << "{\"format\":\"kopt-bench-baseline/1\",\"key\":{}}";
  BaselineLoad bad = load_baseline(d + "/bad.json");
  EXPECT_FALSE(bad.record);
  EXPECT_NE(bad.problem.find("missing ref_runtime_ms"), std::string::npos) << bad.problem;
  std::ofstream(d + "/junk.json") << "junk";
  EXPECT_FALSE(load_baseline(d + "/junk.json").problem.empty());
}

TEST(Baseline, AtomicWriteLeavesNoTemporaryAndReplacesWhole) {
  std::string d = tmpdir();
  BaselineRecord r;
  r.key = sample_key();
  r.ref_runtime_ms = 2;
  for (int i = 0; i < 20; ++i) {
    r.ref_runtime_ms = 1 + i;
    write_baseline_atomic(d + "/b.json", r);
  }
  EXPECT_DOUBLE_EQ(load_baseline(d + "/b.json").record->ref_runtime_ms, 20);
  int files = 0;
  std::string listing;
  for (auto* dp = opendir(d.c_str()); dp;) {
    dirent* e = readdir(dp);
    if (!e) {
      closedir(dp);
      break;
    }
    if (e->d_name[0] != '.') {
      ++files;
      listing += std::string(e->d_name) + " ";
    }
  }
  EXPECT_EQ(files, 1) << listing;
  EXPECT_THROW(write_baseline_atomic(d + "/no/such/dir/b.json", r), std::runtime_error);
}

TEST(Report, CorrectRunLinesInOrderWithKernelEvalLast) {
  Result r;
  r.artifact = "solution/kernel.cu";
  r.compiled = r.correct = true;
  r.backend = "cuda";
  r.timer = "cupti";
  r.runtime_ms = 0.452;
  r.ref_runtime_ms = 1.23;
  r.trials = 31;
  r.rel_iqr = 0.012;
  r.rel_ci = 0.004;
  r.stop_reason = "converged";
  r.ref_source = "frozen baseline (measured 2026-08-15T08:29:18+00:00)";
  r.sentinel = "PASS";
  r.tolerance_rule = "auto: fixed atol=1e-04 rtol=1e-04";
  expect_lines_match(format_output(r), {
      "COMPILED: True",
      "CORRECT: True",
      "TOLERANCE: auto: fixed atol=1e-04 rtol=1e-04",
      "BACKEND: cuda",
      "TIMER: cupti",
      "RUNTIME: 0\\.4520",
      "REF_RUNTIME: 1\\.2300",
      "SPEEDUP: 2\\.7212x",
      "TRIALS: 31 \\(stop=converged, rel_iqr=1\\.20%, ci95=0\\.40%\\)",
      "REF_SOURCE: frozen baseline \\(measured 2026-08-15T08:29:18\\+00:00\\)",
      "MUTATION_SENTINEL: PASS",
      "KERNEL_EVAL=\\{\"artifact\":\"solution/kernel\\.cu\",\"compiled\":true,\"correct\":true,"
      "\"latency_ms\":0\\.452,\"native_metrics\":\\{.*\"speedup\":2\\.7212.*\\},\"samples\":31\\}",
  });
  json p = kernel_eval_payload(r);
  EXPECT_DOUBLE_EQ(p["native_metrics"]["ref_runtime_ms"].get<double>(), 1.23);
  EXPECT_EQ(p["native_metrics"]["trials"], 31);
  EXPECT_FALSE(p.contains("reward_hack_detected"));
  EXPECT_FALSE(p.contains("error"));
}

// Issue 51: the files the build read go on a line of their own, however many there are; the payload
// keeps their count and the digest that binds that line to it.
TEST(Report, TheFilesTheBuildReadHaveTheirOwnLine) {
  Result r;
  r.artifact = "sol/k.cpp";
  r.compiled = r.correct = true;
  r.runtime_ms = 0.5;
  json files = json::array();
  for (int i = 0; i < 2000; ++i)  // far past what a KERNEL_EVAL line is read up to (20000 UTF-16 units)
    files.push_back({{"path", "/ws/vendor/include/h" + std::to_string(i) + ".h"}, {"sha256", std::string(64, 'a')}});
  r.extra_metrics["files_read"] = {{"workspace", "/ws"}, {"count", 2000}, {"sha256", std::string(64, 'b')}, {"files", files}};
  const std::string out = format_output(r);
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < out.size();) {
    size_t nl = out.find('\n', pos);
    lines.push_back(out.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_GE(lines.size(), 2u);
  ASSERT_EQ(lines[lines.size() - 2].rfind("KOPT_FILES_READ=", 0), 0u);
  json listed = json::parse(lines[lines.size() - 2].substr(16));
  EXPECT_EQ(listed["workspace"], "/ws");
  EXPECT_EQ(listed["files"], files);
  ASSERT_EQ(lines.back().rfind("KERNEL_EVAL=", 0), 0u);
  EXPECT_LT(lines.back().size(), 2000u);
  json p = json::parse(lines.back().substr(12));
  EXPECT_EQ(p["native_metrics"]["files_read"], (json{{"workspace", "/ws"}, {"count", 2000}, {"sha256", std::string(64, 'b')}}));
  EXPECT_EQ(kernel_eval_payload(r), p);
  // No build, no line.
  Result none;
  EXPECT_EQ(format_output(none).find("KOPT_FILES_READ="), std::string::npos);
}

// Issue 49: the intervals hold their printed figures exactly (outward rounding at 6 decimals), the
// reference's holds latency_ms x speedup as printed, samples is the trials; none without 95 %.
TEST(Report, IntervalsHoldThePrintedFigures) {
  Result r;
  r.artifact = "k.cpp";
  r.compiled = r.correct = true;
  r.runtime_ms = 0.01234549;  // prints 0.012345
  r.latency_ci = std::make_pair(0.01234549, 0.0123456);  // lo is the median itself (ties)
  r.ref_runtime_ms = 0.0654321;
  r.ref_ci = std::make_pair(0.0654321, 0.0654321);  // a point: the speedup's 4 decimals move the implied figure
  r.trials = 17;
  json p = kernel_eval_payload(r);
  const double lat = p["latency_ms"].get<double>();
  ASSERT_TRUE(p.contains("latency_ci_ms"));
  EXPECT_LE(p["latency_ci_ms"][0].get<double>(), lat);
  EXPECT_GE(p["latency_ci_ms"][1].get<double>(), lat);
  EXPECT_GT(p["latency_ci_ms"][0].get<double>(), 0);
  EXPECT_EQ(p["samples"], 17);
  ASSERT_TRUE(p.contains("reference_ci_ms"));
  const double implied = lat * p["native_metrics"]["speedup"].get<double>();
  EXPECT_LE(p["reference_ci_ms"][0].get<double>(), implied);
  EXPECT_GE(p["reference_ci_ms"][1].get<double>(), implied);
  EXPECT_LE(p["reference_ci_ms"][0].get<double>(), 0.0654321);
  EXPECT_GE(p["reference_ci_ms"][1].get<double>(), 0.0654321);
  // Printed and parsed back (what the projection reads): the same numbers.
  json back = json::parse(p.dump());
  EXPECT_LE(back["latency_ci_ms"][0].get<double>(), back["latency_ms"].get<double>());
  EXPECT_LE(back["latency_ms"].get<double>(), back["latency_ci_ms"][1].get<double>());
  // Through the worker's transport.
  Result t = Result::from_json(json::parse(r.to_json().dump()));
  EXPECT_EQ(kernel_eval_payload(t).dump(), p.dump());
  // Randomized: any median inside any interval, printed, still inside.
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(1e-5, 50);
  for (int i = 0; i < 20000; ++i) {
    double a = u(g), b = a * (1 + 0.1 * std::generate_canonical<double, 53>(g)), m = a + (b - a) * std::generate_canonical<double, 53>(g);
    Result q = r;
    q.runtime_ms = m;
    q.latency_ci = std::make_pair(a, b);
    q.ref_runtime_ms = m * 3.3;
    q.ref_ci = std::make_pair(a * 3.3, b * 3.3);
    json z = json::parse(kernel_eval_payload(q).dump());
    ASSERT_TRUE(z.contains("latency_ci_ms"));
    const double l = z["latency_ms"].get<double>();
    ASSERT_LE(z["latency_ci_ms"][0].get<double>(), l);
    ASSERT_LE(l, z["latency_ci_ms"][1].get<double>());
    const double ref = l * z["native_metrics"]["speedup"].get<double>();
    ASSERT_LE(z["reference_ci_ms"][0].get<double>(), ref);
    ASSERT_LE(ref, z["reference_ci_ms"][1].get<double>());
  }
  // No interval reaching 95 %: no field; not correct: none of them.
  r.latency_ci.reset();
  r.ref_ci.reset();
  p = kernel_eval_payload(r);
  EXPECT_FALSE(p.contains("latency_ci_ms"));
  EXPECT_FALSE(p.contains("reference_ci_ms"));
  r.correct = false;
  p = kernel_eval_payload(r);
  EXPECT_FALSE(p.contains("samples"));
}

// A frozen record keeps its interval; one that does not hold its figure is dropped, the figure kept.
TEST(Baseline, IntervalRoundTripAndDroppedWhenInconsistent) {
  BaselineRecord b;
  b.key = sample_key();
  b.ref_runtime_ms = 2;
  b.ci_lo_ms = 1.9;
  b.ci_hi_ms = 2.2;
  BaselineRecord c = BaselineRecord::from_json(b.to_json());
  EXPECT_DOUBLE_EQ(c.ci_lo_ms, 1.9);
  EXPECT_DOUBLE_EQ(c.ci_hi_ms, 2.2);
  json j = b.to_json();
  j["ci95_ms"] = {2.1, 2.2};
  c = BaselineRecord::from_json(j);
  EXPECT_EQ(c.ci_lo_ms, 0);
  EXPECT_DOUBLE_EQ(c.ref_runtime_ms, 2);
  b.ci_lo_ms = b.ci_hi_ms = 0;
  EXPECT_FALSE(b.to_json().contains("ci95_ms"));
}

TEST(Report, FailureShowsDeviationNotTimingAndHackFlag) {
  Result r;
  r.artifact = "k.cpp";
  r.compiled = true;
  r.correct = false;
  r.timer = "host";
  r.ref_runtime_ms = 1.0;
  r.runtime_ms = 0.1;  // must not be printed for an incorrect candidate
  r.deviation = Deviation{0.5, 0.01, 0.2, 3, 10};
  r.sentinel = "FAIL";
  r.hacks = {"mutation sentinel: inputs rewritten in place, output did not follow"};
  r.error = std::string(1000, 'e');
  std::string out = format_output(r);
  expect_lines_match(out, {
      "COMPILED: True",
      "CORRECT: False",
      "DEVIATION: max_abs=5\\.000e-01 avg_abs=1\\.000e-02 max_rel=2\\.000e-01 failed_trials=3/10",
      "BACKEND: cpu",
      "TIMER: host",
      "REF_RUNTIME: 1\\.0000",
      "MUTATION_SENTINEL: FAIL",
      "REWARD_HACK: mutation sentinel: .*",
      "ERROR: e{397}\\.\\.\\.",
      "KERNEL_EVAL=\\{.*\\}",
  });
  json p = kernel_eval_payload(r);
  EXPECT_EQ(p["reward_hack_detected"], true);
  EXPECT_FALSE(p.contains("latency_ms"));
  EXPECT_EQ(p["error"].get<std::string>().size(), 400u);
}

TEST(Report, SuccessNeverPrintsTheMargin) {
  Result r;
  r.artifact = "k.cpp";
  r.compiled = r.correct = true;
  r.deviation = Deviation{1e-6, 1e-7, 1e-6, 0, 10};
  EXPECT_EQ(format_output(r).find("DEVIATION"), std::string::npos);
}

TEST(Report, AdvisoryAndNoisyAndErrorNewlinesFlattened) {
  Result r;
  r.artifact = "k.cpp";
  r.compiled = r.correct = true;
  r.runtime_ms = 0.1;
  r.ref_runtime_ms = 2.0;
  r.trials = 100;
  r.stop_reason = "max_trials";
  r.noisy = true;
  r.advisory = {"implausible speedup 20.0000x: check the candidate computes the whole op"};
  std::string out = format_output(r);
  EXPECT_NE(out.find("TRIALS: 100 (stop=max_trials, rel_iqr=0.00%, ci95=0.00%) NOISY\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ADVISORY: implausible speedup"), std::string::npos);
  json p = kernel_eval_payload(r);
  EXPECT_EQ(p["advisory"].size(), 1u);
  EXPECT_EQ(p["native_metrics"]["noisy"], true);
  Result c;
  c.artifact = "k.cpp";
  c.error = "line one\nline two";
  std::string o2 = format_output(c);
  EXPECT_NE(o2.find("ERROR: line one line two\n"), std::string::npos);
  EXPECT_EQ(lines_of(o2).back().rfind("KERNEL_EVAL={", 0), 0u);
}

TEST(Report, ResultJsonRoundTrip) {
  Result r;
  r.artifact = "a";
  r.compiled = r.correct = true;
  r.runtime_ms = 1;
  r.kernel_ms = 0.5;
  r.launches = 2;
  r.hacks = {"h"};
  r.deviation = Deviation{1, 2, 3, 4, 5};
  Result b = Result::from_json(r.to_json());
  EXPECT_EQ(format_output(b), format_output(r));
}

TEST(Options, ParsesAndRejectsClearly) {
  auto parse = [](std::vector<std::string> a, Options* o) {
    std::vector<char*> argv{const_cast<char*>("kopt-bench")};
    for (auto& s : a) argv.push_back(s.data());
    return parse_args(int(argv.size()), argv.data(), o);
  };
  Options o;
  auto ok = parse({"--ref", "r.pt", "--solution", "a.cpp,b.cpp", "--inputs=s.json", "--max-trials", "50",
                   "--no-fresh-inputs", "--refresh-baseline"}, &o);
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(o.solution, (std::vector<std::string>{"a.cpp", "b.cpp"}));
  EXPECT_EQ(o.artifact, "a.cpp");
  EXPECT_EQ(o.stop.max_trials, 50u);
  EXPECT_FALSE(o.fresh_inputs);
  EXPECT_TRUE(o.refresh_baseline);
  Options p;
  EXPECT_EQ(parse({"--ref", "r.pt", "--inputs", "s.json"}, &p).error, "--solution is required");
  Options q;
  EXPECT_EQ(parse({"--bogus"}, &q).error, "unknown option '--bogus' (see --help)");
  Options s;
  EXPECT_EQ(parse({"--ref", "r", "--solution", "s", "--inputs", "i", "--max-trials", "x"}, &s).error,
            "--max-trials needs an integer >= 3");
  Options u;
  ASSERT_TRUE(parse({"--ref", "r", "--solution", "s", "--inputs", "i", "--off-distribution-trials", "0"}, &u).ok);
  EXPECT_EQ(u.off_distribution_trials, 0);
  EXPECT_EQ(u.non_defaults()["off_distribution_trials"], 0);
  EXPECT_EQ(Options::from_json(u.to_json()).off_distribution_trials, 0);
  Options t;
  EXPECT_EQ(Options::from_json(o.to_json()).to_json(), o.to_json());
  (void)t;
}

TEST(Proc, ReportsExitSignalAndTimeout) {
  std::string d = tmpdir();
  ProcStatus a = run_process({"sh", "-c", "echo hi; exit 3"}, d + "/a.log", 10);
  EXPECT_TRUE(a.exited);
  EXPECT_EQ(a.code, 3);
  EXPECT_EQ(read_file(d + "/a.log"), "hi\n");
  ProcStatus b = run_process({"sh", "-c", "kill -SEGV $$"}, "", 10);
  EXPECT_FALSE(b.exited);
  EXPECT_EQ(b.describe(), "killed by SIGSEGV (Segmentation fault)");
  ProcStatus c = run_process({"sh", "-c", "sleep 5 & sleep 5"}, "", 0.3);
  EXPECT_TRUE(c.timed_out);
  EXPECT_LT(c.seconds, 3);
}

// A Child dropped without a wait takes its whole group with it and is reaped (no zombie, no stray).
TEST(Proc, DroppedChildEndsItsGroupAndIsReaped) {
  std::string d = tmpdir();
  pid_t pid = -1;
  {
    Child c = start_process({"sh", "-c", "sleep 30 & echo $! > " + d + "/bg; sleep 30"}, "", {});
    ASSERT_GT(c.pid(), 0);
    pid = c.pid();
    for (int i = 0; i < 2000 && read_file(d + "/bg").empty(); ++i) usleep(1000);
  }
  const pid_t bg = pid_t(std::atoi(read_file(d + "/bg").c_str()));
  ASSERT_GT(bg, 0);
  const pid_t r = waitpid(pid, nullptr, WNOHANG);  // reaped already: not our child any more
  const int e = errno;
  EXPECT_EQ(r, -1);
  EXPECT_EQ(e, ECHILD);
  bool gone = false;  // the background sleep (reparented elsewhere) is killed with the group
  for (int i = 0; i < 2000 && !gone; ++i) {
    gone = ::kill(bg, 0) != 0 || read_file("/proc/" + std::to_string(bg) + "/stat").find(" Z ") != std::string::npos;
    if (!gone) usleep(1000);
  }
  EXPECT_TRUE(gone);
}

// spawn: stdin /dev/null, stdout+stderr where asked, passed fds at 3, 4 and nothing else open; a
// command that cannot be started says so and exits 127.
TEST(Proc, SpawnPlacesDescriptorsAndClosesTheRest) {
  std::string d = tmpdir();
  const int log = open_log(d + "/out");
  const int extra = open_log(d + "/extra");  // close-on-exec like every fd here; must not leak either way
  int p[2];
  ASSERT_EQ(pipe(p), 0);  // not close-on-exec: close_others must shut it
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "ls /proc/self/fd | sort -n | tr '\\n' ' '; cat; echo x >&3; echo err >&2"};
  o.out = o.err = log;
  o.pass = {extra};
  o.close_others = true;
  o.group = SpawnOptions::Group::kOwn;
  const pid_t pid = spawn(o);
  ASSERT_GT(pid, 0);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  // 0 1 2 3, and the fd ls itself opens to read /proc/self/fd
  EXPECT_EQ(read_file(d + "/out"), "0 1 2 3 4 err\n");
  EXPECT_EQ(read_file(d + "/extra"), "x\n");
  SpawnOptions bad;
  bad.argv = {d + "/missing"};
  bad.out = bad.err = log;
  const pid_t b = spawn(bad);
  ASSERT_GT(b, 0);
  ASSERT_EQ(waitpid(b, &st, 0), b);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 127);
  EXPECT_NE(read_file(d + "/out").find("kopt-bench: cannot start " + d + "/missing"), std::string::npos);
  for (int fd : {log, extra, p[0], p[1]}) ::close(fd);
}

// replace_file: the whole new body under the asked mode, no temporary left beside it; a failure
// says what failed and leaves the old file as it was.
TEST(Proc, ReplaceFileIsWholeOrNothing) {
  const std::string d = tmpdir(), f = d + "/record.json";
  ASSERT_EQ(replace_file(f, "old\n", 0644), "");
  ASSERT_EQ(replace_file(f, "new body\n", 0600, /*sync=*/true), "");
  EXPECT_EQ(read_file(f), "new body\n");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string missing = replace_file(d + "/no/such/dir/x", "x", 0644);
  EXPECT_NE(missing.find("cannot write " + d + "/no/such/dir/x.tmp."), std::string::npos) << missing;
  ::mkdir((d + "/taken").c_str(), 0755);  // a folder in the way: the rename fails
  ::mkdir((d + "/taken/inner").c_str(), 0755);
  const std::string in_the_way = replace_file(d + "/taken", "x", 0644);
  EXPECT_NE(in_the_way.find("cannot rename"), std::string::npos) << in_the_way;
  std::size_t entries = 0;
  if (DIR* dir = opendir(d.c_str())) {
    while (dirent* e = readdir(dir)) entries += e->d_name[0] != '.';
    closedir(dir);
  }
  EXPECT_EQ(entries, 2u) << "record.json and taken, no temporary";
  EXPECT_EQ(read_file(f), "new body\n");
  remove_tree(d);
}

// UniqueFd closes what it owns when dropped or reset, never what it released or handed on by move.
TEST(Proc, UniqueFdOwnsOneDescriptor) {
  auto open_fd = [](int fd) { return ::fcntl(fd, F_GETFD) != -1; };
  int a = -1, b = -1, c = -1;
  {
    UniqueFd x(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    a = x.get();
    ASSERT_GE(a, 0);
    EXPECT_TRUE(bool(x));
    EXPECT_TRUE(open_fd(a));
  }
  EXPECT_FALSE(open_fd(a));  // dropped: closed
  UniqueFd x(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  a = x.get();
  x.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));  // the old one closed, the new one owned
  b = x.get();
  ASSERT_GE(b, 0);
  EXPECT_TRUE(open_fd(b));
  if (a != b) EXPECT_FALSE(open_fd(a));
  UniqueFd y(std::move(x));  // moved: one owner
  EXPECT_EQ(y.get(), b);
  EXPECT_EQ(x.get(), -1);
  EXPECT_FALSE(bool(x));
  UniqueFd z(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  c = z.get();
  z = std::move(y);  // z's old descriptor closed, b kept
  EXPECT_EQ(z.get(), b);
  EXPECT_TRUE(open_fd(b));
  if (c != b) EXPECT_FALSE(open_fd(c));
  const int r = z.release();  // released: no longer closed by z
  EXPECT_EQ(r, b);
  z.reset();
  EXPECT_TRUE(open_fd(b));
  ::close(b);
  UniqueFd pr, pw;
  ASSERT_TRUE(open_pipe(&pr, &pw));
  EXPECT_EQ(::fcntl(pr.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(::fcntl(pw.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(::write(pw.get(), "x", 1), 1);
  pw.reset();  // EOF after the byte once the only write end is closed
  char buf[2];
  EXPECT_EQ(::read(pr.get(), buf, 2), 1);
  EXPECT_EQ(::read(pr.get(), buf, 2), 0);
}

// A SandboxChild dropped while it still owns its runner kills and reaps it and closes its output;
// one whose runner was taken over leaves it running.
TEST(Proc, DroppedSandboxChildEndsWhatItStillOwns) {
  const std::string d = tmpdir();
  SandboxRequest req;
  req.argv = {"/bin/sleep", "30"};
  req.scratch = d;
  pid_t pid = -1;
  int out = -1;
  {
    SandboxChild c = spawn_sandboxed(req, false);  // no bubblewrap: a process in its own session
    ASSERT_GT(c.pid, 0);
    pid = c.pid;
    out = c.out_fd.get();
    ASSERT_GE(out, 0);
    SandboxChild moved = std::move(c);  // one owner after a move
    EXPECT_EQ(c.pid, -1);
    EXPECT_EQ(moved.pid, pid);
  }
  errno = 0;
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // reaped already
  EXPECT_EQ(errno, ECHILD);
  EXPECT_EQ(::fcntl(out, F_GETFD), -1);
  pid_t kept = -1;
  {
    SandboxChild c = spawn_sandboxed(req, false);
    ASSERT_GT(c.pid, 0);
    kept = c.take_pid();
  }
  EXPECT_EQ(waitpid(kept, nullptr, WNOHANG), 0);  // still running: it was handed off
  const int st = kill_and_reap(kept, false, -1);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

// --slurm: the sbatch options are split like a shell, nothing expanded; the client's own options are
// refused; each --solution is one candidate and every other argument passes through as given.
TEST(Slurm, SplitsOptionsLikeAShellWithoutExpansion) {
  std::vector<std::string> w;
  std::string err;
  ASSERT_TRUE(split_shell_words(R"(-p gpu  --gres=gpu:1 --comment='a b' "--x=\"q\" $HOME" c\ d)", &w, &err));
  EXPECT_EQ(w, (std::vector<std::string>{"-p", "gpu", "--gres=gpu:1", "--comment=a b", "--x=\"q\" $HOME", "c d"}));
  ASSERT_TRUE(split_shell_words("", &w, &err));
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(split_shell_words("-p 'gpu", &w, &err));
  EXPECT_NE(err.find("unterminated"), std::string::npos);
  EXPECT_FALSE(split_shell_words("--comment=\"x", &w, &err));
}

TEST(Slurm, RefusesTheOptionsItSetsItself) {
  EXPECT_EQ(refuse_reserved_sbatch_options({"-p", "gpu", "--gres=gpu:1", "-t", "10", "--exclusive"}), "");
  for (std::string bad : {"--array=0-3", "-a", "--wait", "-W", "--output=x", "-ox", "--error", "--parsable", "--wrap=ls"})
    EXPECT_NE(refuse_reserved_sbatch_options({"-p", "gpu", bad}), "") << bad;
  // A longer option that merely starts like a reserved one is not refused.
  EXPECT_EQ(refuse_reserved_sbatch_options({"--array-fake"}), "");
}

TEST(Slurm, QuotesForAPosixShell) {
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(Slurm, EachSolutionIsOneCandidateOtherArgumentsPassThrough) {
  std::vector<std::string> args = {"kopt-bench", "--ref", "r.pt", "--slurm", "-p debug", "--solution", "a.cpp",
                                   "--solution=b.cpp,b2.cpp", "--inputs", "s.json", "--timeout=30", "--no-timing"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  Options o;
  ParseOutcome po = parse_args(int(argv.size()), argv.data(), &o);
  ASSERT_TRUE(po.ok) << po.error;
  EXPECT_TRUE(o.slurm);
  EXPECT_EQ(o.slurm_opts, "-p debug");
  EXPECT_EQ(o.candidates, (std::vector<std::string>{"a.cpp", "b.cpp,b2.cpp"}));
  EXPECT_EQ(o.passthrough, (std::vector<std::string>{"--ref", "r.pt", "--inputs", "s.json", "--timeout=30", "--no-timing"}));
  // --artifact would name every line the same: refused with several candidates.
  args.push_back("--artifact");
  args.push_back("x");
  argv.clear();
  for (auto& a : args) argv.push_back(a.data());
  Options o2;
  po = parse_args(int(argv.size()), argv.data(), &o2);
  EXPECT_FALSE(po.ok);
  EXPECT_NE(po.error.find("--artifact"), std::string::npos);
}
