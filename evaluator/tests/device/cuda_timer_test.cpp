// CUDA unit checks for the GPU timer, the checked-call macro, the RAII owners and the CUDA part of
// the torch-state snapshot. Needs a GPU (run by tests/device/run.sh); plain asserts, no GoogleTest
// (a GPU box may have only the pip torch). Prints one "UNIT name: PASS|FAIL detail" line per
// check; exits 1 if any failed.
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda_call.hpp"
#include "guards.hpp"
#include "timer.hpp"
#include "unit_check.hpp"

using namespace kopt::bench;

namespace {
using unit::check;

// Time of a memset of `buf` on `s` alone, by events on that stream.
double memset_ms(const DeviceBuffer& buf, cudaStream_t s) {
  CudaEvent a = CudaEvent::create(), b = CudaEvent::create();
  KOPT_CUDA_CALL(cudaEventRecord(a.get(), s));
  KOPT_CUDA_CALL(cudaMemsetAsync(buf.get(), 1, buf.size(), s));
  KOPT_CUDA_CALL(cudaEventRecord(b.get(), s));
  KOPT_CUDA_CALL(cudaEventSynchronize(b.get()));
  float ms = 0;
  KOPT_CUDA_CALL(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

void timer_checks(const char* label, bool no_cupti) {
  if (no_cupti) setenv("KOPT_BENCH_NO_CUPTI", "1", 1);
  else unsetenv("KOPT_BENCH_NO_CUPTI");
  std::string note;
  auto timer = make_cuda_timer(0, &note);
  std::printf("timer %s: %s %s\n", label, timer->name().c_str(), note.c_str());
  DeviceBuffer big(size_t(2) << 30);  // 2 GiB: a memset of a few hundred microseconds
  CudaStream side = CudaStream::create(cudaStreamNonBlocking);
  double alone = memset_ms(big, side.get());
  memset_ms(big, side.get());
  alone = std::min(alone, memset_ms(big, side.get()));

  // Work only on a side stream: the timed region must still contain it.
  timer->before_trial();
  timer->start();
  KOPT_CUDA_CALL(cudaMemsetAsync(big.get(), 2, big.size(), side.get()));
  double t_side = timer->stop_ms();
  check((std::string("side_stream_counted_") + label).c_str(), t_side >= 0.8 * alone,
        "(timed " + std::to_string(t_side) + " ms, work alone " + std::to_string(alone) + " ms, off-stream " +
            std::to_string(timer->last_stats().off_stream_ms) + " ms)");

  // Work on the current stream: event time, nothing added for other streams.
  cudaStream_t cur = c10::cuda::getCurrentCUDAStream().stream();
  timer->before_trial();
  timer->start();
  KOPT_CUDA_CALL(cudaMemsetAsync(big.get(), 3, big.size(), cur));
  double t_cur = timer->stop_ms();
  check((std::string("current_stream_timed_") + label).c_str(), t_cur >= 0.8 * alone && t_cur <= 1.5 * alone,
        "(timed " + std::to_string(t_cur) + " ms, alone " + std::to_string(alone) + " ms, off-stream " +
            std::to_string(timer->last_stats().off_stream_ms) + " ms)");

  // A persisting-L2 limit set inside the timed region is reported and reset (where supported).
  int persist_max = 0;
  KOPT_CUDA_CALL(cudaDeviceGetAttribute(&persist_max, cudaDevAttrMaxPersistingL2CacheSize, 0));
  if (persist_max > 0) {
    timer->before_trial();
    timer->start();
    KOPT_CUDA_CALL(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, size_t(persist_max)));
    timer->stop_ms();
    size_t after = 1;
    KOPT_CUDA_CALL(cudaDeviceGetLimit(&after, cudaLimitPersistingL2CacheSize));
    check((std::string("persisting_l2_flagged_and_reset_") + label).c_str(),
          timer->last_stats().persisting_l2 && after == 0, "(limit after " + std::to_string(after) + ")");
  } else {
    std::printf("UNIT persisting_l2_%s: SKIP device has no persisting L2\n", label);
  }
}
}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("UNIT cuda_device: FAIL no CUDA device\n");
    return 1;
  }
  // The checked call throws with the call, file:line and CUDA's error name.
  try {
    KOPT_CUDA_CALL(cudaSetDevice(n + 100));
    check("cuda_call_throws", false, "(no exception)");
  } catch (const CudaError& e) {
    std::string w = e.what();
    check("cuda_call_throws",
          w.find("cuda_timer_test.cpp:") != std::string::npos && w.find("cudaErrorInvalidDevice") != std::string::npos,
          "(" + w + ")");
  }
  check("cuda_call_clears_error", cudaGetLastError() == cudaSuccess);

  // RAII owners: moved-from handles are empty, nothing leaks an error.
  {
    CudaEvent e = CudaEvent::create();
    CudaEvent e2 = std::move(e);
    CudaStream s = CudaStream::create();
    DeviceBuffer b(1 << 20), b2 = std::move(b);
    check("raii_move", !e && bool(e2) && bool(s) && b.get() == nullptr && b2.get() != nullptr && b2.size() == (1u << 20));
  }
  check("raii_release_clean", cudaGetLastError() == cudaSuccess);

  try {
    timer_checks("no_cupti", true);
    timer_checks("cupti_if_available", false);
  } catch (const std::exception& e) {
    check("timer_checks", false, std::string("(exception: ") + e.what() + ")");
  }

  // The torch-state snapshot sees a switched current stream and a persisting-L2 limit.
  TorchState before = snapshot_torch_state();
  c10::cuda::CUDAStream old = c10::cuda::getCurrentCUDAStream();
  c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromPool());
  auto changes = torch_state_changes(before, snapshot_torch_state());
  c10::cuda::setCurrentCUDAStream(old);
  std::string joined;
  for (const auto& c : changes) joined += c + "; ";
  check("snapshot_sees_current_stream", joined.find("cuda_current_stream") != std::string::npos, "(" + joined + ")");
  check("snapshot_stable", torch_state_changes(before, snapshot_torch_state()).empty());
  check("snapshot_has_device_flags", before.values.count("cuda_device_flags") == 1 &&
                                         before.values.count("cuda_persisting_l2_limit") == 1);

  return unit::summary();
}
