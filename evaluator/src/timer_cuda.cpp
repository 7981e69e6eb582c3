// GPU timing: CUDA events on the current stream, an L2 flush (2x the device's L2, preallocated)
// and a persisting-L2 reset before every trial, and CUPTI kernel records when libcupti can be
// loaded at run time (dlopen; never linked), falling back to events and saying why.
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "timer.hpp"

#ifdef KOPT_HAVE_CUPTI_H
#include <cupti.h>
#endif

namespace kopt::bench {
namespace {

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
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  void* handle = nullptr;
};
Cupti g_cupti;

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

bool load_cupti(std::string* why) {
  const char* names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8"};
  for (const char* n : names)
    if ((g_cupti.handle = dlopen(n, RTLD_NOW | RTLD_LOCAL))) break;
  if (!g_cupti.handle) {
    *why = "libcupti not found (set LD_LIBRARY_PATH to CUDA's extras/CUPTI/lib64)";
    return false;
  }
  auto sym = [&](const char* s) { return dlsym(g_cupti.handle, s); };
  g_cupti.register_callbacks = reinterpret_cast<decltype(g_cupti.register_callbacks)>(sym("cuptiActivityRegisterCallbacks"));
  g_cupti.enable = reinterpret_cast<decltype(g_cupti.enable)>(sym("cuptiActivityEnable"));
  g_cupti.disable = reinterpret_cast<decltype(g_cupti.disable)>(sym("cuptiActivityDisable"));
  g_cupti.flush_all = reinterpret_cast<decltype(g_cupti.flush_all)>(sym("cuptiActivityFlushAll"));
  g_cupti.next_record = reinterpret_cast<decltype(g_cupti.next_record)>(sym("cuptiActivityGetNextRecord"));
  if (!g_cupti.register_callbacks || !g_cupti.enable || !g_cupti.flush_all || !g_cupti.next_record) {
    *why = "libcupti lacks the activity API";
    return false;
  }
  if (g_cupti.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      g_cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    *why = "CUPTI activity API refused (profiling not permitted or another profiler attached)";
    return false;
  }
  g_cupti.enable(CUPTI_ACTIVITY_KIND_MEMCPY);
  return true;
}
#endif

class CudaTimer : public Timer {
 public:
  CudaTimer(int device, bool cupti) : cupti_(cupti) {
    cudaSetDevice(device);
    cudaEventCreate(&e0_);
    cudaEventCreate(&e1_);
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    flush_bytes_ = size_t(std::max(l2, 1 << 20)) * 2;
    if (cudaMalloc(&flush_, flush_bytes_) != cudaSuccess) flush_ = nullptr;
  }
  ~CudaTimer() override {
    if (flush_) cudaFree(flush_);
    cudaEventDestroy(e0_);
    cudaEventDestroy(e1_);
  }
  std::string name() const override { return cupti_ ? "cupti" : "cuda_event"; }

  void before_trial() override {
    cudaStream_t s = c10::cuda::getCurrentCUDAStream().stream();
    // Undo anything that would keep the candidate's data in L2 across trials, then flush L2.
    cudaStreamAttrValue attr;
    std::memset(&attr, 0, sizeof attr);
    cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr);
    cudaCtxResetPersistingL2Cache();
    if (flush_) cudaMemsetAsync(flush_, trial_++ & 0xff, flush_bytes_, s);
    cudaStreamSynchronize(s);
#ifdef KOPT_HAVE_CUPTI_H
    if (cupti_) {
      g_cupti.flush_all(1);
      std::lock_guard<std::mutex> lock(g_mu);
      g_rec = TrialRecords{};
    }
#endif
  }
  void start() override {
    stream_ = c10::cuda::getCurrentCUDAStream().stream();
    host0_ = std::chrono::steady_clock::now();
    cudaEventRecord(e0_, stream_);
  }
  double stop_ms() override {
    cudaEventRecord(e1_, stream_);
    cudaEventSynchronize(e1_);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0_, e1_);
    // Device-wide: work left on other streams finishes here (and shows in the wall time).
    cudaDeviceSynchronize();
    wall_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host0_).count();
    stats_ = KernelStats{};
    cudaStreamAttrValue attr;
    std::memset(&attr, 0, sizeof attr);
    if (cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attr) == cudaSuccess &&
        attr.accessPolicyWindow.num_bytes > 0)
      stats_.persisting_l2 = true;
    size_t persist = 0;
    if (cudaDeviceGetLimit(&persist, cudaLimitPersistingL2CacheSize) == cudaSuccess && persist > 0)
      stats_.persisting_l2 = true;
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
#ifdef KOPT_HAVE_CUPTI_H
    if (cupti_) {
      g_cupti.flush_all(1);
      std::lock_guard<std::mutex> lock(g_mu);
      if (!g_rec.bad_layout) {
        stats_.valid = true;
        stats_.kernel_ms = g_rec.kernel_ns / 1e6;
        stats_.launches = g_rec.kernels;
        stats_.memcpys = g_rec.memcpys;
        stats_.streams = int(g_rec.streams.size());
        // Kernel time beyond the timed window: work ran where the timing stream's events do not see
        // it (a side stream left running past the call).
        stats_.foreign_stream = stats_.kernel_ms > 1.2 * ms + 0.01;
      }
    }
#endif
    cudaGetLastError();
    return ms;
  }
  KernelStats last_stats() const override { return stats_; }
  double last_wall_ms() const override { return wall_; }

 private:
  bool cupti_;
  cudaEvent_t e0_{}, e1_{};
  cudaStream_t stream_{};
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  unsigned trial_ = 0;
  std::chrono::steady_clock::time_point host0_;
  double wall_ = 0;
  KernelStats stats_;
};

}  // namespace

std::unique_ptr<Timer> make_cuda_timer(int device, std::string* note) {
  bool cupti = false;
  if (const char* e = std::getenv("KOPT_BENCH_NO_CUPTI"); e && std::string(e) == "1") {
    *note = "CUPTI disabled by KOPT_BENCH_NO_CUPTI=1";
  } else {
#ifdef KOPT_HAVE_CUPTI_H
    std::string why;
    cupti = load_cupti(&why);
    if (!cupti) *note = "fallback to CUDA events: " + why;
#else
    *note = "fallback to CUDA events: built without cupti.h";
#endif
  }
  return std::make_unique<CudaTimer>(device, cupti);
}

}  // namespace kopt::bench
