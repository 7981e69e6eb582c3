// The CUDA half on a machine without a CUDA device (run by tests/cuda-build.sh; torch-free, so it
// builds against the CUDA toolkit alone): the checked-call macro, the RAII owners and the GPU timer
// must end in a clear "no CUDA device" error, never a crash or a hang. Plain checks, one
// "UNIT name: PASS|FAIL detail" line each; exits 1 if any failed, 3 if a device is present (this
// program checks the opposite case: tests/device/run.sh covers a device).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "bandwidth_probe_cuda.hpp"
#include "cuda_call.hpp"
#include "timer.hpp"
#include "unit_check.hpp"

using namespace kopt::bench;

namespace {
using unit::check;
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Runs f, which must throw CudaError; returns its text ("" when it did not throw one).
template <class F>
std::string cuda_error_of(F f) {
  try {
    f();
  } catch (const CudaError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a CudaError) ") + e.what();
  }
  return "";
}
}  // namespace

int main() {
  const std::string reason = cuda_no_device_reason();
  if (reason.empty()) {
    std::printf("UNIT no_device: SKIP a CUDA device is present: this program checks the no-device path\n");
    return 3;
  }
  check("no_device_reason", has(reason, "no CUDA device") && has(reason, "cudaError"), "(" + reason + ")");
  check("no_device_reason_stable", cuda_no_device_reason() == reason);

  // The checked call: throws CudaError naming the call, this file:line and CUDA's error name. Without
  // a driver every runtime call fails with the same initialization error, so what matters is that
  // each failure names its own call, not an earlier one.
  int n = -1;
  std::string w = cuda_error_of([&] { KOPT_CUDA_CALL(cudaGetDeviceCount(&n)); });
  check("cuda_call_throws", has(w, "cudaGetDeviceCount(&n)") && has(w, "cuda_nodevice_test.cpp:") && has(w, "cudaError"),
        "(" + w + ")");
  int dev = -1;
  w = cuda_error_of([&] { KOPT_CUDA_CALL(cudaGetDevice(&dev)); });
  check("cuda_call_names_its_own_call", has(w, "cudaGetDevice(&dev)") && !has(w, "cudaGetDeviceCount"), "(" + w + ")");

  // RAII owners: empty ones release nothing; creating one without a device throws, and nothing is
  // left half-made (the destructor of an owner that never got a handle makes no CUDA call).
  {
    CudaEvent e;
    CudaStream s;
    DeviceBuffer b;
    check("raii_empty", !e && !s && b.get() == nullptr && b.size() == 0);
  }
  w = cuda_error_of([] { DeviceBuffer b(1 << 20); });
  check("device_buffer_throws", has(w, "cudaMalloc") && has(w, "cudaError"), "(" + w + ")");
  w = cuda_error_of([] { CudaEvent::create(); });
  check("event_create_throws", has(w, "cudaEventCreateWithFlags") && has(w, "cudaError"), "(" + w + ")");
  w = cuda_error_of([] { CudaStream::create(); });
  check("stream_create_throws", has(w, "cudaStreamCreateWithFlags") && has(w, "cudaError"), "(" + w + ")");

  // The GPU timer, as the runner's CUDA branch makes it: a "no CUDA device" CudaError, CUPTI on or off.
  for (const char* no_cupti : {"0", "1"}) {
    setenv("KOPT_BENCH_NO_CUPTI", no_cupti, 1);
    std::string note;
    w = cuda_error_of([&] { make_cuda_timer(0, &note); });
    check(no_cupti[0] == '1' ? "timer_no_device_no_cupti" : "timer_no_device", has(w, "no CUDA device") && has(w, "cudaError"),
          "(" + w + ")");
  }
  unsetenv("KOPT_BENCH_NO_CUPTI");

  // CUPTI: the library the timer would load, and its activity API, found without a device (only
  // looked up; nothing is enabled). Where libcupti is not on the library path, say so.
  std::string why;
  const bool found = cupti_activity_api_found(&why);
  const char* want = std::getenv("KOPT_EXPECT_CUPTI");
  if (want && std::string(want) == "1") check("cupti_activity_api_found", found, "(" + (found ? std::string("libcupti loaded") : why) + ")");
  else std::printf("UNIT cupti_activity_api_found: INFO %s\n", found ? "found" : why.c_str());

  // The machine's limits on a GPU (issue 49, bandwidth_probe_cuda.cpp): without a device the identity
  // and the probe end in a CudaError, the clock sample says why it is not readable; the PTX copy kernel
  // assembles for sm_90 (ptxas, where KOPT_PTXAS names it) and the tables answer as documented.
  w = cuda_error_of([] { cuda_identity(0); });
  check("limits_identity_throws", has(w, "cudaGetDeviceProperties") && has(w, "cudaError"), "(" + w + ")");
  w = cuda_error_of([] { probe_cuda_limits(0); });
  check("limits_probe_throws", has(w, "cudaSetDevice") && has(w, "cudaError"), "(" + w + ")");
  const ClockSample clocks = gpu_clock_sample(0);
  check("clock_sample_not_readable", !clocks.readable && has(clocks.why, "not readable: "), "(" + clocks.why + ")");
  check("throttle_words", throttle_words(0).empty() && throttle_words(0x1 | 0x2 | 0x10).empty() &&
                              throttle_words(0x4 | 0x40) == "software power cap, hardware thermal slowdown",
        "(" + throttle_words(0x4 | 0x40) + ")");
  check("fp32_lanes", fp32_lanes_per_sm(9, 0) == 128 && fp32_lanes_per_sm(8, 0) == 64 && fp32_lanes_per_sm(8, 6) == 128 &&
                          fp32_lanes_per_sm(6, 1) == 0);
  const std::string ptx = copy_kernel_ptx();
  check("copy_kernel_ptx", has(ptx, ".visible .entry kopt_copy16(") && has(ptx, "ld.global.nc.v4.u32"));
  if (const char* ptxas = std::getenv("KOPT_PTXAS"); ptxas && *ptxas) {
    char path[] = "/tmp/kopt-copy16-XXXXXX";
    const int fd = mkstemp(path);
    bool wrote = fd >= 0 && write(fd, ptx.data(), ptx.size()) == ssize_t(ptx.size());
    if (fd >= 0) close(fd);
    const std::string cmd = std::string(ptxas) + " -arch=sm_90 " + path + " -o /dev/null 2>&1";
    const int rc = wrote ? std::system(cmd.c_str()) : -1;
    unlink(path);
    check("copy_kernel_ptxas_sm90", rc == 0, "(" + cmd + ": " + std::to_string(rc) + ")");
  } else {
    std::printf("UNIT copy_kernel_ptxas_sm90: INFO KOPT_PTXAS not set: the PTX was not assembled\n");
  }

  return unit::summary();
}
