// Checked CUDA runtime calls and RAII owners for the objects the GPU timer and the device tests
// create. Every CUDA API call in evaluator/src goes through KOPT_CUDA_CALL: a failure throws
// CudaError naming the call, file:line and CUDA's own error name and string, so a broken device
// becomes a reported error instead of a silently wrong time. Destructors use the _NOEXCEPT form
// (they may run while an exception unwinds) and only print.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace kopt::bench {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {
inline std::string cuda_error_text(cudaError_t e, const char* expr, const char* file, int line) {
  return std::string("CUDA call ") + expr + " failed at " + file + ":" + std::to_string(line) + ": " +
         cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}
[[noreturn]] inline void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  cudaGetLastError();  // a non-sticky error must not surface again at the next unrelated check
  throw CudaError(e, cuda_error_text(e, expr, file, line));
}
inline void warn_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  cudaGetLastError();
  std::fprintf(stderr, "kopt-bench: %s\n", cuda_error_text(e, expr, file, line).c_str());
}
}  // namespace detail

// Why device 0 cannot be used, or "" when it can: CUDA's own error name and text when the runtime
// cannot reach a driver or a device (no libcuda, no /dev/nvidia*, a too-old driver), or a count of 0.
// The one answer to "is there a CUDA device" (the judge and the GPU timer ask it); never throws.
inline std::string cuda_no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(e) + " (" +
           cudaGetErrorString(e) + ")";
  }
  if (n < 1) return "no CUDA device: cudaGetDeviceCount found none";
  return "";
}

// The stream the op's work goes on and the timer's events are recorded on: LibTorch's current CUDA
// stream when LibTorch has CUDA (KOPT_TORCH_CUDA); in the toolkit-only build (KOPT_BENCH_CUDA=TOOLKIT,
// a LibTorch without CUDA) CUDA's legacy default stream, the only stream such a process has.
cudaStream_t current_cuda_stream();

}  // namespace kopt::bench

#define KOPT_CUDA_CALL(expr)                                                               \
  do {                                                                                     \
    const cudaError_t kopt_cuda_err_ = (expr);                                             \
    if (kopt_cuda_err_ != cudaSuccess)                                                     \
      ::kopt::bench::detail::throw_cuda(kopt_cuda_err_, #expr, __FILE__, __LINE__);        \
  } while (0)

#define KOPT_CUDA_CALL_NOEXCEPT(expr)                                                      \
  do {                                                                                     \
    const cudaError_t kopt_cuda_err_ = (expr);                                             \
    if (kopt_cuda_err_ != cudaSuccess)                                                     \
      ::kopt::bench::detail::warn_cuda(kopt_cuda_err_, #expr, __FILE__, __LINE__);         \
  } while (0)

namespace kopt::bench {

// One owner per handle: created in the constructor, released in the destructor, movable only.
template <class Handle, class Traits>
class CudaHandle {
 public:
  CudaHandle() = default;
  explicit CudaHandle(Handle h) : h_(h) {}
  CudaHandle(const CudaHandle&) = delete;
  CudaHandle& operator=(const CudaHandle&) = delete;
  CudaHandle(CudaHandle&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  CudaHandle& operator=(CudaHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  ~CudaHandle() { reset(); }
  Handle get() const { return h_; }
  explicit operator bool() const { return h_ != Handle{}; }
  void reset() {
    if (h_ != Handle{}) Traits::release(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

struct EventTraits {
  static void release(cudaEvent_t e) { KOPT_CUDA_CALL_NOEXCEPT(cudaEventDestroy(e)); }
};
struct StreamTraits {
  static void release(cudaStream_t s) { KOPT_CUDA_CALL_NOEXCEPT(cudaStreamDestroy(s)); }
};

class CudaEvent : public CudaHandle<cudaEvent_t, EventTraits> {
 public:
  static CudaEvent create(unsigned flags = cudaEventDefault) {
    cudaEvent_t e{};
    KOPT_CUDA_CALL(cudaEventCreateWithFlags(&e, flags));
    return CudaEvent(e);
  }
  using CudaHandle::CudaHandle;
};

class CudaStream : public CudaHandle<cudaStream_t, StreamTraits> {
 public:
  static CudaStream create(unsigned flags = cudaStreamNonBlocking) {
    cudaStream_t s{};
    KOPT_CUDA_CALL(cudaStreamCreateWithFlags(&s, flags));
    return CudaStream(s);
  }
  using CudaHandle::CudaHandle;
};

// Device memory of a fixed size.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { KOPT_CUDA_CALL(cudaMalloc(&p_, bytes)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }
  void* get() const { return p_; }
  size_t size() const { return bytes_; }

 private:
  void release() {
    if (p_) KOPT_CUDA_CALL_NOEXCEPT(cudaFree(p_));
    p_ = nullptr;
  }
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace kopt::bench
