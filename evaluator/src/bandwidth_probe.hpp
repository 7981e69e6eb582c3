// The judge's probes of the machine's limits (issue 49; machine_limits.hpp keeps and uses them).
// CPU: a STREAM-like copy and triad over double arrays much larger than the last-level cache, on
// LibTorch's intra-op threads (at::parallel_for), best of a few runs; and a float32 matmul's GFLOP/s
// (at::mm, sized to take at least 20 ms). GPU (bandwidth_probe_cuda.hpp): a device copy kernel beside the peak from the device's
// properties.
#pragma once
#include <cstddef>
#include <string>

#include "machine_limits.hpp"

namespace kopt::bench {

// The array size the CPU probe uses: 4x the last-level cache, at least 64 MiB, at most 512 MiB and
// a sixteenth of the memory (per array; three arrays).
size_t stream_array_bytes(size_t llc_bytes, size_t mem_bytes);
// The largest cache the kernel lists (/sys/devices/system/cpu/cpu0/cache), else sysconf's L3; 0 unknown.
size_t last_level_cache_bytes();

// The CPU probe. `array_bytes` 0: stream_array_bytes for this machine; `runs` per kernel, best kept.
Limits probe_cpu_limits(size_t array_bytes = 0, int runs = 3);

// What the judge uses: this machine's limits for the backend it times on (cached, else probed now).
MachineLimits judge_machine_limits(const std::string& cache_dir, bool cuda);
// One clock sample for the backend (CPU frequency, or the GPU's SM clock and throttle reasons).
ClockSample judge_clock_sample(bool cuda);

}  // namespace kopt::bench
