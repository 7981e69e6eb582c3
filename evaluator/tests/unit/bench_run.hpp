// Running the kopt-bench binary from a test, as the user does: the whole output, the exit status
// and the KERNEL_EVAL payload.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt_test {

struct BenchRun {
  int code = -1;
  std::string out;
  nlohmann::json eval;  // the KERNEL_EVAL payload (null if absent)
  std::string last_line;
  double seconds = 0;
};

inline std::string q(const std::string& s) { return "'" + s + "'"; }

// A fresh directory under /tmp named after `what`.
inline std::string tmpdir(const std::string& what) {
  std::string t = "/tmp/kopt-bench-" + what + ".XXXXXX";
  return mkdtemp(t.data());
}

// `env`: assignments (or a wrapper command) put before the binary.
inline BenchRun run_bench(const std::vector<std::string>& args, const std::string& env = "") {
  std::string cmd = env + " " + q(KOPT_BENCH_BIN);
  for (const auto& a : args) cmd += " " + q(a);
  cmd += " 2>/dev/null";
  BenchRun r;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::stringstream ss(r.out);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) r.last_line = line;
  if (r.last_line.rfind("KERNEL_EVAL=", 0) == 0) r.eval = nlohmann::json::parse(r.last_line.substr(12));
  return r;
}

// One evaluation with small budgets (20 timed trials, 3 s), a baseline file of its own in `dir`,
// the suite's shared compile cache.
inline BenchRun evaluate_small(const std::string& dir, const std::string& ref, const std::string& spec,
                               const std::string& solution, const std::vector<std::string>& extra = {},
                               const std::string& env = "") {
  static int counter = 0;
  std::vector<std::string> a{"--ref", ref, "--inputs", spec, "--solution", solution, "--cache-dir", KOPT_TEST_CACHE,
                             "--baseline", dir + "/b-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".json",
                             "--max-trials", "20", "--max-time", "3"};
  a.insert(a.end(), extra.begin(), extra.end());
  return run_bench(a, env);
}

inline bool has(const std::string& s, const std::string& re) {
  return std::regex_search(s, std::regex(re, std::regex::multiline));
}

// Correct, no reward hack, the sentinel passed.
inline void expect_honest_result(const BenchRun& r) {
  ASSERT_TRUE(r.eval.is_object()) << r.out;
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.eval["correct"], true) << r.out;
  EXPECT_FALSE(r.eval.contains("reward_hack_detected")) << r.out;
  EXPECT_TRUE(has(r.out, "MUTATION_SENTINEL: PASS")) << r.out;
}

}  // namespace kopt_test
