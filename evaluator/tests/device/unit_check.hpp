// The plain checks of the CUDA unit programs (cuda_timer_test.cpp on a GPU, cuda_nodevice_test.cpp
// without one): one "UNIT name: PASS|FAIL detail" line each, and the exit status they add up to.
#pragma once
#include <cstdio>
#include <string>

namespace kopt::bench::unit {
inline int g_fail = 0;
inline void check(const char* name, bool ok, const std::string& detail = "") {
  std::printf("UNIT %s: %s %s\n", name, ok ? "PASS" : "FAIL", detail.c_str());
  if (!ok) ++g_fail;
}
// The last line and the exit status: 1 if any check failed.
inline int summary() {
  std::printf("unit summary: %s\n", g_fail ? "FAILED" : "all passed");
  return g_fail ? 1 : 0;
}
}  // namespace kopt::bench::unit
