// What else the machine did while the reference was timed: other processes' CPU use over the
// measurement window, from /proc/stat minus the CPU time of our own process tree. A baseline frozen
// while others kept the CPUs busy is marked as measured under load (baseline.hpp).
#pragma once
#include <sys/types.h>

#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace kopt::bench {

struct CpuSample {
  bool ok = false;
  uint64_t busy = 0, total = 0;  // /proc/stat's cpu line, clock ticks over all CPUs
  uint64_t own = 0;              // CPU ticks of `root` and every process below it (reaped children included)
  int cpus = 0;
};
CpuSample cpu_sample(pid_t root);

struct Load {
  bool measured = false;
  int cpus = 0;
  double other_cpus = 0;  // other processes' average CPU use over the window, in CPUs
  double window_s = 0;
  // Contended: others used at least half a CPU, or a tenth of the machine, on average.
  bool contended() const { return measured && other_cpus >= std::max(0.5, 0.1 * cpus); }
  nlohmann::json to_json() const;
  static Load from_json(const nlohmann::json& j);  // {} or a malformed object: not measured
};
Load load_between(const CpuSample& before, const CpuSample& after);

}  // namespace kopt::bench
