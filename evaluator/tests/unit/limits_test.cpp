// Distance to the limit (issue 49), torch-free: the spec's bytes/flops declarations, the machine
// probe's cache (probed once, read back, refused from another machine or when edited), the
// fractions an evaluation reports, and the clock evidence.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "integrity.hpp"
#include "machine_limits.hpp"
#include "proc.hpp"
#include "spec.hpp"

using namespace kopt::bench;
using nlohmann::json;

namespace {

std::string scratch(const std::string& what) {
  std::string t = "/tmp/kopt-limits-" + what + ".XXXXXX";
  return mkdtemp(t.data());
}

const json kInputs = json::array({{{"name", "x"}, {"shape", {64, 256}}}});

InputSpec spec_with(const json& extra) {
  json j = {{"inputs", kInputs}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return parse_spec(j);
}

std::string spec_error(const json& extra) {
  try {
    spec_with(extra);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

Limits fake_limits(double gbps) {
  Limits l;
  l.bandwidth_gbps = gbps;
  l.bandwidth_method = "fake";
  l.compute_gflops = 100.0;
  l.compute_method = "fake matmul";
  return l;
}

}  // namespace

TEST(SpecLimits, BytesAndFlopsAreParsed) {
  InputSpec s = spec_with({{"bytes", 131072}, {"flops", 2e9}});
  ASSERT_TRUE(s.bytes.has_value());
  EXPECT_EQ(*s.bytes, 131072u);
  ASSERT_TRUE(s.flops.has_value());
  EXPECT_EQ(*s.flops, 2e9);
  InputSpec none = spec_with(json::object());
  EXPECT_FALSE(none.bytes.has_value());
  EXPECT_FALSE(none.flops.has_value());
}

TEST(SpecLimits, MalformedDeclarationsAreRefusedWithTheirPlace) {
  EXPECT_NE(spec_error({{"bytes", "131072"}}).find("spec.bytes: must be a number"), std::string::npos);
  EXPECT_NE(spec_error({{"bytes", 0}}).find("spec.bytes: must be a whole number > 0"), std::string::npos);
  EXPECT_NE(spec_error({{"bytes", -8}}).find("spec.bytes: must be a whole number > 0"), std::string::npos);
  EXPECT_NE(spec_error({{"bytes", 1.5}}).find("spec.bytes: must be a whole number > 0"), std::string::npos);
  EXPECT_NE(spec_error({{"bytes", 1e300}}).find("spec.bytes: must be a whole number > 0 and at most"), std::string::npos);
  EXPECT_NE(spec_error({{"flops", json::array({1})}}).find("spec.flops: must be a number"), std::string::npos);
  EXPECT_NE(spec_error({{"flops", 0.25}}).find("spec.flops: must be a whole number > 0"), std::string::npos);
  EXPECT_NE(spec_error({{"flops", nullptr}}).find("spec.flops"), std::string::npos);
}

TEST(MachineLimitsCache, ProbedOnceThenReadBack) {
  const std::string dir = scratch("once");
  const std::string key = judge_key(dir, nullptr);
  const MachineIdentity id = host_identity(2);
  int probes = 0;
  auto probe = [&] {
    ++probes;
    return fake_limits(12.5);
  };
  MachineLimits first = machine_limits(dir, key, id, probe);
  ASSERT_TRUE(first.limits.has_value()) << first.note;
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(probes, 1);
  EXPECT_TRUE(first.note.empty()) << first.note;
  EXPECT_FALSE(first.limits->measured_at.empty());
  MachineLimits second = machine_limits(dir, key, id, probe);
  ASSERT_TRUE(second.limits.has_value());
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(probes, 1);  // not probed again
  EXPECT_DOUBLE_EQ(second.limits->bandwidth_gbps, 12.5);
  EXPECT_EQ(second.identity_sha, first.identity_sha);
  // Another identity (more threads) is another record: probed, not read.
  MachineLimits other = machine_limits(dir, key, host_identity(4), probe);
  EXPECT_FALSE(other.cached);
  EXPECT_EQ(probes, 2);
  EXPECT_NE(limits_path(dir, host_identity(4)), limits_path(dir, id));
  remove_tree(dir);
}

TEST(MachineLimitsCache, AProbeFromAnotherMachineIsRefusedAndProbedAgain) {
  const std::string dir = scratch("other");
  const std::string key = judge_key(dir, nullptr);
  MachineIdentity here = host_identity(2);
  MachineIdentity there = here;
  there["cpu_model"] = "Some Other CPU @ 9.9GHz";
  ::mkdir((dir + "/machine").c_str(), 0700);
  // A record measured elsewhere, with a MAC that verifies, where this machine's record would be (a
  // cache copied between machines).
  ASSERT_TRUE(write_limits(limits_path(dir, here), key, there, fake_limits(99.0)));
  CachedLimits c = read_limits(limits_path(dir, here), key, here);
  EXPECT_FALSE(c.limits.has_value());
  EXPECT_NE(c.refused.find("it was measured on another machine (cpu_model: 'Some Other CPU @ 9.9GHz' -> '" + here["cpu_model"] + "')"),
            std::string::npos)
      << c.refused;
  int probes = 0;
  MachineLimits ml = machine_limits(dir, key, here, [&] {
    ++probes;
    return fake_limits(10.0);
  });
  EXPECT_EQ(probes, 1);
  ASSERT_TRUE(ml.limits.has_value());
  EXPECT_FALSE(ml.cached);
  EXPECT_DOUBLE_EQ(ml.limits->bandwidth_gbps, 10.0);
  EXPECT_NE(ml.note.find("was refused: it was measured on another machine"), std::string::npos) << ml.note;
  EXPECT_NE(ml.note.find("; probed again"), std::string::npos) << ml.note;
  // The record now holds this machine's probe.
  CachedLimits again = read_limits(limits_path(dir, here), key, here);
  ASSERT_TRUE(again.limits.has_value()) << again.refused;
  EXPECT_DOUBLE_EQ(again.limits->bandwidth_gbps, 10.0);
  remove_tree(dir);
}

TEST(MachineLimitsCache, AnEditedRecordOrAnotherKeyIsRefused) {
  const std::string dir = scratch("edited");
  const std::string key = judge_key(dir, nullptr);
  const MachineIdentity id = host_identity(2);
  ::mkdir((dir + "/machine").c_str(), 0700);
  const std::string path = limits_path(dir, id);
  ASSERT_TRUE(write_limits(path, key, id, fake_limits(10.0)));
  ASSERT_TRUE(read_limits(path, key, id).limits.has_value());
  // Raise the figure by hand: the MAC no longer verifies.
  json j = json::parse(read_file(path));
  j["record"]["limits"]["bandwidth_gbps"] = 1000.0;
  std::ofstream(path) << j.dump();
  CachedLimits c = read_limits(path, key, id);
  EXPECT_FALSE(c.limits.has_value());
  EXPECT_NE(c.refused.find("MAC does not verify"), std::string::npos) << c.refused;
  // Another cache's key, the same bytes: refused too.
  ASSERT_TRUE(write_limits(path, key, id, fake_limits(10.0)));
  EXPECT_NE(read_limits(path, std::string(64, 'a'), id).refused.find("MAC does not verify"), std::string::npos);
  // Not JSON at all.
  std::ofstream(path) << "{not json";
  EXPECT_NE(read_limits(path, key, id).refused.find("cannot be read"), std::string::npos);
  // A probe that fails leaves no limits and says why; nothing is stored.
  MachineLimits ml = machine_limits(dir, key, id, []() -> Limits { throw std::runtime_error("no memory"); });
  EXPECT_FALSE(ml.limits.has_value());
  EXPECT_NE(ml.note.find("could not be probed: no memory"), std::string::npos) << ml.note;
  remove_tree(dir);
}

TEST(MachineLimitsMetrics, FractionsOfTheProbedLimits) {
  MachineLimits ml;
  ml.limits = fake_limits(20.0);  // 20 GB/s, 100 GFLOP/s
  ml.cached = true;
  ml.limits->measured_at = "2025-01-01T00:00:00+00:00";
  json m = json::object();
  // 1 MB in 0.1 ms = 10 GB/s: half the probed bandwidth; 5e6 FLOPs in 0.1 ms = 50 GFLOP/s: half the peak.
  add_limit_metrics(m, ml, 1000000, false, 5e6, 0.1);
  EXPECT_DOUBLE_EQ(m["bandwidth_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["gflops"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(m["compute_fraction"].get<double>(), 0.5);
  EXPECT_FALSE(m.contains("bytes_declared"));
  EXPECT_EQ(m["machine_limits"]["bandwidth_gbps"], 20.0);
  EXPECT_EQ(m["machine_limits"]["compute_gflops"], 100.0);
  EXPECT_EQ(m["machine_limits"]["source"].get<std::string>().rfind("cached (probed 2025-01-01T00:00:00+00:00", 0), 0u);
  // A tiny fraction keeps four significant digits, never a zero.
  json tiny = json::object();
  add_limit_metrics(tiny, ml, 64, true, std::nullopt, 1.0);
  EXPECT_GT(tiny["bandwidth_fraction"].get<double>(), 0);
  EXPECT_NEAR(tiny["bandwidth_fraction"].get<double>(), 64 / 1e-3 / 1e9 / 20.0, 1e-12);
  EXPECT_EQ(tiny["bytes_declared"], true);
  EXPECT_FALSE(tiny.contains("compute_fraction"));  // no FLOPs declared
  EXPECT_FALSE(tiny.contains("gflops"));
  // No limits: no fraction, and why.
  MachineLimits none;
  none.note = "the machine's limits could not be probed: x";
  json n = json::object();
  add_limit_metrics(n, none, 1000, false, 1e6, 0.1);
  EXPECT_FALSE(n.contains("bandwidth_fraction"));
  EXPECT_EQ(n["machine_limits"]["unavailable"], none.note);
  // No compute peak: FLOPs give the rate, not a fraction.
  MachineLimits bw_only;
  bw_only.limits = fake_limits(20.0);
  bw_only.limits->compute_gflops.reset();
  json b = json::object();
  add_limit_metrics(b, bw_only, 1000, false, 1e6, 0.1);
  EXPECT_TRUE(b.contains("gflops"));
  EXPECT_FALSE(b.contains("compute_fraction"));
  EXPECT_EQ(b["machine_limits"]["source"].get<std::string>().rfind("probed now", 0), 0u);
}

TEST(ClockEvidence, CpuFrequencyWhereTheKernelExposesIt) {
  const std::string root = scratch("cpufreq");
  // No cpufreq at all (this VM's case): not readable, and why.
  ::mkdir((root + "/cpu0").c_str(), 0700);
  ClockSample none = cpu_clock_sample(root);
  EXPECT_FALSE(none.readable);
  EXPECT_NE(none.why.find("not readable: no " + root + "/cpu*/cpufreq/scaling_cur_freq"), std::string::npos) << none.why;
  json m = json::object();
  EXPECT_EQ(clocks_evidence(m, none, none), "");
  EXPECT_EQ(m["clocks"]["readable"], false);
  // Two CPUs at 2.0 and 3.0 GHz (kHz in sysfs); "cpufreq" and "cpuidle" are not CPUs.
  ::mkdir((root + "/cpu1").c_str(), 0700);
  for (const char* c : {"cpu0", "cpu1"}) ::mkdir((root + "/" + c + "/cpufreq").c_str(), 0700);
  ::mkdir((root + "/cpufreq").c_str(), 0700);
  std::ofstream(root + "/cpu0/cpufreq/scaling_cur_freq") << "2000000\n";
  std::ofstream(root + "/cpu1/cpufreq/scaling_cur_freq") << "3000000\n";
  ClockSample s = cpu_clock_sample(root);
  ASSERT_TRUE(s.readable) << s.why;
  EXPECT_EQ(s.units, 2);
  EXPECT_DOUBLE_EQ(s.min_mhz, 2000);
  EXPECT_DOUBLE_EQ(s.max_mhz, 3000);
  EXPECT_DOUBLE_EQ(s.mean_mhz, 2500);
  json c = json::object();
  EXPECT_EQ(clocks_evidence(c, s, s), "");  // a CPU is never marked throttled: its frequency is reported
  EXPECT_EQ(c["clocks"]["before"]["mhz"], 2500);
  EXPECT_EQ(c["clocks"]["after"]["min_mhz"], 2000);
  EXPECT_FALSE(c["clocks"].contains("throttled"));
  remove_tree(root);
}

TEST(ClockEvidence, AGpuThrottledWhileTimedMarksThePoint) {
  ClockSample cool;
  cool.readable = true;
  cool.units = 1;
  cool.mean_mhz = cool.min_mhz = cool.max_mhz = 1980;
  cool.max_clock_mhz = 1980;
  ClockSample hot = cool;
  hot.throttle_reasons = 0x40;
  hot.throttle_words = "hardware thermal slowdown";
  json m = json::object();
  EXPECT_EQ(clocks_evidence(m, cool, cool), "");
  EXPECT_FALSE(m["clocks"].contains("throttled"));
  const std::string a = clocks_evidence(m, cool, hot);
  EXPECT_EQ(a.rfind("timed while the GPU was throttled (hardware thermal slowdown)", 0), 0u) << a;
  EXPECT_EQ(m["clocks"]["throttled"], true);
  EXPECT_EQ(m["clocks"]["after"]["throttle"], "hardware thermal slowdown");
  // No reason given, but the SM clock under 3/4 of its maximum (nvbench's rule).
  ClockSample slow = cool;
  slow.mean_mhz = 1000;
  json s = json::object();
  EXPECT_NE(clocks_evidence(s, slow, cool).find("SM clock 1000 MHz, under 3/4 of its 1980 MHz maximum"), std::string::npos);
}
