// GPU timing. The timed region starts with a CUDA event on the current stream and ends when a
// device-wide synchronize returns: time = event time on the timing stream + the time the device
// stayed busy afterwards (work the candidate left on other streams). Nothing here depends on
// CUPTI; when libcupti can be loaded at run time (dlopen; never linked) it adds per-kernel records
// (kernel-only time, launch/memcpy counts, streams) as information. Before every trial: an L2
// flush (2x the device's L2, preallocated) and a persisting-L2 reset. Every CUDA/CUPTI call is
// checked (cuda_call.hpp). Needs the CUDA toolkit only, not a LibTorch with CUDA: the stream comes
// from current_cuda_stream() (cuda_stream.cpp), so the toolkit-only build compiles and links it too.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "cuda_call.hpp"
#include "timer.hpp"

#ifdef KOPT_HAVE_CUPTI_H
#include <cupti.h>
#endif

namespace kopt::bench {
namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

#ifdef KOPT_HAVE_CUPTI_H
// The leading fields shared by every CUpti_ActivityKernelN record version: we read only these,
// so the evaluator works with whichever libcupti the machine has.
struct KernelRecordPrefix {
  CUpti_ActivityKind kind;
  uint8_t cache_config;
  uint8_t shared_memory_config;
  uint16_t registers_per_thread;
  int32_t partitioned_requested;
  int32_t partitioned_executed;
  uint64_t start;
  uint64_t end;
  uint64_t completed;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
};

struct Cupti {
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*result_string)(CUptiResult, const char**) = nullptr;
  void* handle = nullptr;
};
Cupti g_cupti;

class CuptiError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cupti(CUptiResult r, const char* expr, const char* file, int line) {
  const char* s = nullptr;
  if (!g_cupti.result_string || g_cupti.result_string(r, &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI result";
  throw CuptiError(std::string("CUPTI call ") + expr + " failed at " + file + ":" + std::to_string(line) + ": " +
                   std::to_string(int(r)) + " (" + s + ")");
}
#define KOPT_CUPTI_CALL(expr)                                          \
  do {                                                                 \
    const CUptiResult kopt_cupti_r_ = (expr);                          \
    if (kopt_cupti_r_ != CUPTI_SUCCESS) throw_cupti(kopt_cupti_r_, #expr, __FILE__, __LINE__); \
  } while (0)

std::mutex g_mu;
struct TrialRecords {
  double kernel_ns = 0;
  long kernels = 0;
  long memcpys = 0;
  std::set<uint32_t> streams;
  bool bad_layout = false;
} g_rec;

void CUPTIAPI buffer_requested(uint8_t** buf, size_t* size, size_t* max_records) {
  *size = 4 << 20;
  *buf = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

// Runs on a CUPTI thread: never throws; a failed record walk only ends the walk.
void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  while (g_cupti.next_record(buf, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const KernelRecordPrefix*>(rec);
      if (k->end < k->start || k->end - k->start > 60ull * 1000000000ull) {
        g_rec.bad_layout = true;
        continue;
      }
      g_rec.kernel_ns += double(k->end - k->start);
      ++g_rec.kernels;
      g_rec.streams.insert(k->stream_id);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      ++g_rec.memcpys;
    }
  }
  std::free(buf);
}

// CUPTI is optional: any refusal here is a reason for the fallback, not an error.
bool load_cupti(std::string* why) {
  if (!cupti_activity_api_found(why)) return false;
  try {
    KOPT_CUPTI_CALL(g_cupti.register_callbacks(buffer_requested, buffer_completed));
    KOPT_CUPTI_CALL(g_cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    KOPT_CUPTI_CALL(g_cupti.enable(CUPTI_ACTIVITY_KIND_MEMCPY));
  } catch (const CuptiError& e) {
    *why = std::string("CUPTI activity API refused (profiling not permitted or another profiler attached): ") + e.what();
    return false;
  }
  return true;
}
#endif

}  // namespace

#ifdef KOPT_HAVE_CUPTI_H
bool cupti_activity_api_found(std::string* why) {
  if (g_cupti.handle) return true;
  // Sonames first: a libcupti LibTorch already loaded matches by soname and is reused, never loaded twice.
  const char* names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so"};
  for (const char* n : names)
    if ((g_cupti.handle = dlopen(n, RTLD_NOW | RTLD_LOCAL))) break;
  if (!g_cupti.handle) {
    *why = "libcupti not found (set LD_LIBRARY_PATH to CUDA's extras/CUPTI/lib64)";
    return false;
  }
  auto sym = [&](const char* s) { return dlsym(g_cupti.handle, s); };
  g_cupti.register_callbacks = reinterpret_cast<decltype(g_cupti.register_callbacks)>(sym("cuptiActivityRegisterCallbacks"));
  g_cupti.enable = reinterpret_cast<decltype(g_cupti.enable)>(sym("cuptiActivityEnable"));
  g_cupti.flush_all = reinterpret_cast<decltype(g_cupti.flush_all)>(sym("cuptiActivityFlushAll"));
  g_cupti.next_record = reinterpret_cast<decltype(g_cupti.next_record)>(sym("cuptiActivityGetNextRecord"));
  g_cupti.result_string = reinterpret_cast<decltype(g_cupti.result_string)>(sym("cuptiGetResultString"));
  if (!g_cupti.register_callbacks || !g_cupti.enable || !g_cupti.flush_all || !g_cupti.next_record) {
    *why = "libcupti lacks the activity API";
    dlclose(g_cupti.handle);
    g_cupti = Cupti{};
    return false;
  }
  return true;
}
#else
bool cupti_activity_api_found(std::string* why) {
  *why = "built without cupti.h";
  return false;
}
#endif

namespace {

class CudaTimer : public Timer {
 public:
  CudaTimer(int device, bool cupti) : cupti_(cupti) {
    KOPT_CUDA_CALL(cudaSetDevice(device));
    e0_ = CudaEvent::create();
    e1_ = CudaEvent::create();
    int l2 = 0, persist_max = 0;
    KOPT_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    KOPT_CUDA_CALL(cudaDeviceGetAttribute(&persist_max, cudaDevAttrMaxPersistingL2CacheSize, device));
    persist_supported_ = persist_max > 0;  // pre-Ampere devices have no persisting L2
    flush_ = DeviceBuffer(size_t(std::max(l2, 1 << 20)) * 2);
    calibrate_idle_sync();
  }
  std::string name() const override { return cupti_ ? "cupti" : "cuda_event"; }

  void before_trial() override {
    cudaStream_t s = current_cuda_stream();
    // Undo anything that would keep the candidate's data in L2 across trials, then flush L2.
    if (persist_supported_) {
      cudaStreamAttrValue attr;
      std::memset(&attr, 0, sizeof attr);
      KOPT_CUDA_CALL(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr));
      KOPT_CUDA_CALL(cudaCtxResetPersistingL2Cache());
    }
    KOPT_CUDA_CALL(cudaMemsetAsync(flush_.get(), trial_++ & 0xff, flush_.size(), s));
    KOPT_CUDA_CALL(cudaDeviceSynchronize());
#ifdef KOPT_HAVE_CUPTI_H
    if (cupti_) {
      KOPT_CUPTI_CALL(g_cupti.flush_all(1));
      std::lock_guard<std::mutex> lock(g_mu);
      g_rec = TrialRecords{};
    }
#endif
  }
  void start() override {
    stream_ = current_cuda_stream();
    host0_ = Clock::now();
    KOPT_CUDA_CALL(cudaEventRecord(e0_.get(), stream_));
  }
  double stop_ms() override {
    KOPT_CUDA_CALL(cudaEventRecord(e1_.get(), stream_));
    KOPT_CUDA_CALL(cudaEventSynchronize(e1_.get()));
    const auto stream_done = Clock::now();
    // Device-wide: the timed region ends only when every stream is idle. An asynchronous fault
    // of the candidate's kernels surfaces here as a CudaError.
    KOPT_CUDA_CALL(cudaDeviceSynchronize());
    const auto idle = Clock::now();
    float ms = 0;
    KOPT_CUDA_CALL(cudaEventElapsedTime(&ms, e0_.get(), e1_.get()));
    wall_ = ms_between(host0_, idle);
    stats_ = KernelStats{};
    // The sync's own cost on an idle device is subtracted; below the calibrated jitter nothing is added.
    double tail = ms_between(stream_done, idle) - idle_sync_ms_;
    if (tail > idle_jitter_ms_) stats_.off_stream_ms = tail;
    if (persist_supported_) {
      cudaStreamAttrValue attr;
      std::memset(&attr, 0, sizeof attr);
      KOPT_CUDA_CALL(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr));
      if (attr.accessPolicyWindow.num_bytes > 0) stats_.persisting_l2 = true;
      size_t persist = 0;
      KOPT_CUDA_CALL(cudaDeviceGetLimit(&persist, cudaLimitPersistingL2CacheSize));
      if (persist > 0) stats_.persisting_l2 = true;
      KOPT_CUDA_CALL(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    }
#ifdef KOPT_HAVE_CUPTI_H
    if (cupti_) {
      KOPT_CUPTI_CALL(g_cupti.flush_all(1));
      std::lock_guard<std::mutex> lock(g_mu);
      if (!g_rec.bad_layout) {
        stats_.valid = true;
        stats_.kernel_ms = g_rec.kernel_ns / 1e6;
        stats_.launches = g_rec.kernels;
        stats_.memcpys = g_rec.memcpys;
        stats_.streams = int(g_rec.streams.size());
      }
    }
#endif
    return double(ms) + stats_.off_stream_ms;
  }
  KernelStats last_stats() const override { return stats_; }
  double last_wall_ms() const override { return wall_; }

 private:
  // What cudaDeviceSynchronize costs when nothing is running: its median, and a margin (the spread
  // up to the 90th percentile, at least 2 us) below which a tail is noise, not work.
  void calibrate_idle_sync() {
    KOPT_CUDA_CALL(cudaDeviceSynchronize());
    std::vector<double> v;
    for (int i = 0; i < 33; ++i) {
      auto a = Clock::now();
      KOPT_CUDA_CALL(cudaDeviceSynchronize());
      v.push_back(ms_between(a, Clock::now()));
    }
    std::sort(v.begin(), v.end());
    idle_sync_ms_ = v[v.size() / 2];
    idle_jitter_ms_ = std::max(0.002, v[v.size() * 9 / 10] - idle_sync_ms_);
  }

  bool cupti_;
  bool persist_supported_ = false;
  CudaEvent e0_, e1_;
  cudaStream_t stream_{};
  DeviceBuffer flush_;
  unsigned trial_ = 0;
  Clock::time_point host0_;
  double wall_ = 0;
  double idle_sync_ms_ = 0, idle_jitter_ms_ = 0.002;
  KernelStats stats_;
};

}  // namespace

std::unique_ptr<Timer> make_cuda_timer(int device, std::string* note) {
  // No device: one clear error before anything else is tried (CUPTI, allocations).
  if (const std::string why = cuda_no_device_reason(); !why.empty()) throw CudaError(cudaErrorNoDevice, why);
  bool cupti = false;
  if (const char* e = std::getenv("KOPT_BENCH_NO_CUPTI"); e && std::string(e) == "1") {
    *note = "CUPTI disabled by KOPT_BENCH_NO_CUPTI=1 (timing unchanged; no per-kernel records)";
  } else {
#ifdef KOPT_HAVE_CUPTI_H
    std::string why;
    cupti = load_cupti(&why);
    if (!cupti) *note = "no CUPTI records: " + why;
#else
    *note = "no CUPTI records: built without cupti.h";
#endif
  }
  return std::make_unique<CudaTimer>(device, cupti);
}

}  // namespace kopt::bench
