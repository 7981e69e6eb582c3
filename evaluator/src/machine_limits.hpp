// Distance to the limit (issue 49): what this machine can reach — the memory bandwidth of a
// STREAM-like probe (CPU) or a device copy kernel (GPU), and a compute peak — measured once per
// machine and kept in kopt-bench's cache under the judge's MAC, keyed by the machine's identity; and
// what one evaluation makes of it (native_metrics.bandwidth_fraction, compute_fraction). Torch-free:
// the probes themselves are bandwidth_probe.cpp (CPU, LibTorch's threads) and bandwidth_probe_cuda.cpp.
// Also the clock evidence around the timed loop (CPU frequency where the kernel exposes it).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kopt::bench {

// What names a machine for the probe: CPU model, online CPUs, memory size, kernel release, the
// threads the judge computes with; on a GPU the device's name, UUID, memory and driver. A cached
// probe whose identity differs in any field is refused and measured again.
using MachineIdentity = std::map<std::string, std::string>;
MachineIdentity host_identity(int threads);

// One probe's figures (10^9 B/s, 10^9 FLOP/s).
struct Limits {
  double bandwidth_gbps = 0;               // the best the probe reached; 0 = none
  std::string bandwidth_method;            // how, in words
  std::optional<double> peak_bandwidth_gbps;  // GPU: from the device's properties (memory clock x bus width)
  std::optional<double> compute_gflops;    // CPU: a float32 matmul measured; GPU: FP32 peak from properties
  std::string compute_method;
  double probe_ms = 0;                     // what measuring cost, once
  std::string measured_at;                 // UTC, ISO 8601
  bool contended = false;                  // other processes kept the CPUs busy meanwhile (load.hpp)
  nlohmann::json detail = nlohmann::json::object();  // each kernel's figure, the sizes, the load
  nlohmann::json to_json() const;
  static Limits from_json(const nlohmann::json& j);  // throws on a malformed record
};

// Where the probe of this identity is kept: <cache>/machine/<first 24 hex of SHA-256(identity)>.json.
std::string limits_path(const std::string& cache_dir, const MachineIdentity& id);

// A record as read back: the figures, or why it was refused ("" with no figures: there was none).
struct CachedLimits {
  std::optional<Limits> limits;
  std::string refused;
};
// The record holds {"record": {format, identity, limits}, "mac": HMAC(key, record)}: a record whose
// MAC does not verify (edited, or another cache's key), whose format is unknown, or whose identity is
// not `id` (copied or renamed from another machine's) is refused, with the reason.
CachedLimits read_limits(const std::string& path, const std::string& key, const MachineIdentity& id);
// Atomic (a temporary file renamed into place); false when it could not be written.
bool write_limits(const std::string& path, const std::string& key, const MachineIdentity& id, const Limits& l);

// The limits one evaluation uses: read from the cache, else probed now (once: concurrent judges on
// the same cache wait for the one probing, through a lock file) and stored. `probe` never throws out
// of here: a probe that fails leaves no limits and says why.
struct MachineLimits {
  std::optional<Limits> limits;
  bool cached = false;
  std::string note;       // why it was probed again (a refused record), or why there are no limits
  double this_ms = 0;     // this evaluation's cost: reading the record, or the probe
  std::string identity_sha;
};
MachineLimits machine_limits(const std::string& cache_dir, const std::string& key, const MachineIdentity& id,
                             const std::function<Limits()>& probe);

// native_metrics for one evaluation: bandwidth_fraction = bandwidth_gbps (bytes / median) over the
// probed bandwidth; with declared FLOPs, gflops and compute_fraction against the compute peak; and
// the object machine_limits saying where the figures came from. Nothing without limits or a median.
void add_limit_metrics(nlohmann::json& metrics, const MachineLimits& ml, uint64_t bytes, bool bytes_declared,
                       std::optional<double> flops, double median_ms);

// Clock evidence around the timed loop (issue 49). CPU: every online CPU's
// /sys/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq; GPU (bandwidth_probe_cuda.cpp): the SM clock
// and NVML's throttle reasons. `readable` false says why not (e.g. no cpufreq in a VM).
struct ClockSample {
  bool readable = false;
  std::string why, source;
  double min_mhz = 0, max_mhz = 0, mean_mhz = 0;
  int units = 0;                      // CPUs read, or 1 GPU
  std::optional<double> max_clock_mhz;  // GPU: the SM clock's maximum
  uint64_t throttle_reasons = 0;      // GPU: NVML's bit mask
  std::string throttle_words;         // GPU: the reasons that slow it, in words ("" none)
};
ClockSample cpu_clock_sample(const std::string& sysfs_cpu_root = "/sys/devices/system/cpu");
// native_metrics.clocks {source, before, after} (or {readable: false, why}); on a GPU a point timed
// while throttled gets `throttled: true` and returns the advisory to add ("" none).
std::string clocks_evidence(nlohmann::json& metrics, const ClockSample& before, const ClockSample& after);

}  // namespace kopt::bench
