#include "bandwidth_probe.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "integrity.hpp"
#include "proc.hpp"

#ifdef KOPT_WITH_CUDA
#include "bandwidth_probe_cuda.hpp"
#endif

namespace kopt::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMiB = size_t(1) << 20;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// "260M" / "32768K" / "4096" (sysfs cache sizes) in bytes; 0 when unreadable.
size_t parse_size(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !(v > 0)) return 0;
  const char u = *end;
  return size_t(v * (u == 'K' ? 1024.0 : u == 'M' ? double(kMiB) : u == 'G' ? 1024.0 * double(kMiB) : 1.0));
}

size_t mem_total_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
}

// An array the probe owns: mapped anonymously, so it goes back to the system when the probe ends.
struct Mapped {
  double* p = nullptr;
  size_t bytes = 0;
  explicit Mapped(size_t b) : bytes(b) {
    void* m = ::mmap(nullptr, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error("cannot map " + std::to_string(b / kMiB) + " MiB for the bandwidth probe");
    p = static_cast<double*>(m);
  }
  ~Mapped() {
    if (p) ::munmap(p, bytes);
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
};

// One pass of a kernel over [0, n) on LibTorch's intra-op threads, one contiguous block per thread.
template <class F>
double timed_pass(int64_t n, int threads, F body) {
  const int64_t grain = std::max<int64_t>(4096, (n + threads - 1) / threads);
  const auto t0 = Clock::now();
  at::parallel_for(0, n, grain, [&](int64_t b, int64_t e) { body(b, e); });
  return seconds_since(t0);
}

}  // namespace

size_t last_level_cache_bytes() {
  size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    const std::string level = read_file(dir + "/level");
    if (level.empty()) break;
    const std::string type = read_file(dir + "/type");
    if (type.rfind("Instruction", 0) == 0) continue;
    const int lv = std::atoi(level.c_str());
    const size_t sz = parse_size(read_file(dir + "/size"));
    if (lv > best_level || (lv == best_level && sz > best)) {
      best_level = lv;
      best = sz;
    }
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (best == 0) {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) best = size_t(l3);
  }
#endif
  return best;
}

size_t stream_array_bytes(size_t llc, size_t mem) {
  size_t want = std::max<size_t>(4 * llc, 64 * kMiB);
  size_t cap = 512 * kMiB;
  if (mem > 0) cap = std::min(cap, std::max<size_t>(mem / 16, 8 * kMiB));
  want = std::min(want, cap);
  return want / (64 * 1024) * (64 * 1024);  // whole 64 KiB blocks
}

Limits probe_cpu_limits(size_t array_bytes, int runs) {
  const size_t llc = last_level_cache_bytes();
  if (array_bytes == 0) array_bytes = stream_array_bytes(llc, mem_total_bytes());
  const int threads = std::max(1, at::get_num_threads());
  const int64_t n = int64_t(array_bytes / sizeof(double));
  Mapped ma(array_bytes), mb(array_bytes), mc(array_bytes);
  double *a = ma.p, *b = mb.p, *c = mc.p;
  // First touch on the threads that use them (their pages land near those threads).
  timed_pass(n, threads, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.0;
    }
  });
  const double scalar = 3.0;
  double copy_s = 1e30, triad_s = 1e30;
  for (int r = 0; r < std::max(1, runs); ++r) {
    copy_s = std::min(copy_s, timed_pass(n, threads, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) c[i] = a[i];
    }));
    triad_s = std::min(triad_s, timed_pass(n, threads, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) b[i] = a[i] + scalar * c[i];
    }));
  }
  // STREAM's check: the arrays hold what the kernels wrote (so the compiler cannot drop them).
  const double want = 1.0 + scalar * 1.0;
  if (b[0] != want || b[n - 1] != want || c[n / 2] != 1.0)
    throw std::runtime_error("the bandwidth probe's arrays do not hold what it wrote");
  const double copy_gbps = 2.0 * double(array_bytes) / copy_s / 1e9;
  const double triad_gbps = 3.0 * double(array_bytes) / triad_s / 1e9;

  Limits l;
  l.bandwidth_gbps = std::max(copy_gbps, triad_gbps);
  char m[240];
  std::snprintf(m, sizeof m, "STREAM-like copy and triad, 3 double arrays of %zu MiB (last-level cache %zu MiB), %d threads, best of %d",
                array_bytes / kMiB, llc / kMiB, threads, std::max(1, runs));
  l.bandwidth_method = m;
  l.detail["copy_gbps"] = copy_gbps;
  l.detail["triad_gbps"] = triad_gbps;
  l.detail["array_mib"] = array_bytes / kMiB;
  l.detail["llc_mib"] = double(llc) / double(kMiB);
  l.detail["threads"] = threads;

  // A float32 matmul large enough to be compute-bound (2 n^3 FLOPs): n doubles from 256 until one
  // takes 20 ms (at most 2048), then the best of the runs at that size.
  {
    at::NoGradGuard no_grad;
    int64_t mm = 256;
    at::Tensor x, y, z;
    double best = 1e30;
    for (;;) {
      x = at::rand({mm, mm}, at::kFloat), y = at::rand({mm, mm}, at::kFloat);
      z = at::mm(x, y);
      const auto t0 = Clock::now();
      at::mm_out(z, x, y);
      best = seconds_since(t0);
      if (best >= 0.02 || mm >= 2048) break;
      mm *= 2;
    }
    for (int r = 1; r < std::max(1, runs); ++r) {
      const auto t0 = Clock::now();
      at::mm_out(z, x, y);
      best = std::min(best, seconds_since(t0));
    }
    l.compute_gflops = 2.0 * double(mm) * double(mm) * double(mm) / best / 1e9;
    std::snprintf(m, sizeof m, "float32 matmul %lldx%lldx%lld (at::mm), %d threads, best of %d", (long long)mm, (long long)mm,
                  (long long)mm, threads, std::max(1, runs));
    l.compute_method = m;
  }
  return l;
}

MachineLimits judge_machine_limits(const std::string& cache_dir, bool cuda) {
  const std::string key = judge_key(cache_dir, nullptr);
#ifdef KOPT_WITH_CUDA
  if (cuda) {
    MachineIdentity id;
    try {
      id = cuda_identity(0);
    } catch (const std::exception& e) {
      MachineLimits ml;
      ml.note = std::string("the GPU's identity could not be read: ") + e.what();
      return ml;
    }
    return machine_limits(cache_dir, key, id, [] { return probe_cuda_limits(0); });
  }
#else
  (void)cuda;
#endif
  return machine_limits(cache_dir, key, host_identity(at::get_num_threads()), [] { return probe_cpu_limits(); });
}

ClockSample judge_clock_sample(bool cuda) {
#ifdef KOPT_WITH_CUDA
  if (cuda) return gpu_clock_sample(0);
#else
  (void)cuda;
#endif
  return cpu_clock_sample();
}

}  // namespace kopt::bench
