// How one call is timed: the host steady clock on CPU; on GPU the timed region runs from a CUDA
// event on the current stream to the end of a device-wide synchronize, so work left on any stream
// is counted (an L2 flush and a persisting-L2 reset come before each trial). CUPTI, when it can be
// loaded, only adds per-kernel records: kernel-only time, launch and memcpy counts, streams.
#pragma once
#include <memory>
#include <string>

namespace kopt::bench {

struct KernelStats {
  // Measured on every GPU trial, CUPTI or not.
  double off_stream_ms = 0;     // device still busy after the timing stream finished (other streams); counted
  bool persisting_l2 = false;   // the candidate set an L2 persistence window / persisting-L2 limit
  // CUPTI only (valid == true): information, never a verdict by itself.
  bool valid = false;     // CUPTI records were collected for the last trial
  double kernel_ms = 0;   // sum of kernel durations
  long launches = 0;
  long memcpys = 0;
  int streams = 0;        // distinct streams that ran kernels
};

class Timer {
 public:
  virtual ~Timer() = default;
  virtual std::string name() const = 0;  // host | cuda_event | cupti
  virtual void before_trial() {}         // outside the timed region
  virtual void start() = 0;
  virtual double stop_ms() = 0;          // waits for all the work (device-wide on GPU); elapsed ms
  virtual KernelStats last_stats() const { return {}; }
  // Wall time of the last trial including a device-wide synchronize (GPU; equals stop_ms on CPU).
  virtual double last_wall_ms() const = 0;
};

std::unique_ptr<Timer> make_host_timer();
#ifdef KOPT_WITH_CUDA
// Tries CUPTI (dlopen libcupti), else CUDA events; `note` says why a fallback happened. Without a
// usable device it throws CudaError (cuda_call.hpp) saying "no CUDA device" and CUDA's own reason.
std::unique_ptr<Timer> make_cuda_timer(int device, std::string* note);
// Whether libcupti can be loaded and has the activity API the timer reads (no device needed; nothing
// is enabled); `why` says what is missing.
bool cupti_activity_api_found(std::string* why);
#endif

}  // namespace kopt::bench
