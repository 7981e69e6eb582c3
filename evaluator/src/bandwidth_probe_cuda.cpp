// The GPU half of the machine's limits (bandwidth_probe_cuda.hpp). Compiled by every CUDA build,
// the toolkit-only one included; it has not run on a GPU yet (no task here has had one).
#include "bandwidth_probe_cuda.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "cuda_call.hpp"

namespace kopt::bench {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

// dst[i] = src[i] for i < n16, 16 bytes at a time (ld.global.nc.v4 / st.global.v4), grid-stride.
// PTX ISA 7.0 for sm_70: every driver since CUDA 11 JIT-compiles it for the device it runs on.
constexpr const char* kCopyPtx = R"PTX(.version 7.0
.target sm_70
.address_size 64

.visible .entry kopt_copy16(
	.param .u64 kopt_copy16_dst,
	.param .u64 kopt_copy16_src,
	.param .u64 kopt_copy16_n16
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<9>;

	ld.param.u64 	%rd1, [kopt_copy16_dst];
	ld.param.u64 	%rd2, [kopt_copy16_src];
	ld.param.u64 	%rd3, [kopt_copy16_n16];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	cvt.u64.u32 	%rd4, %r3;
	mad.wide.u32 	%rd4, %r1, %r2, %rd4;
	mov.u32 	%r4, %nctaid.x;
	mul.wide.u32 	%rd5, %r4, %r2;
$L_loop:
	setp.ge.u64 	%p1, %rd4, %rd3;
	@%p1 bra 	$L_done;
	shl.b64 	%rd6, %rd4, 4;
	add.s64 	%rd7, %rd2, %rd6;
	ld.global.nc.v4.u32 	{%r5, %r6, %r7, %r8}, [%rd7];
	add.s64 	%rd8, %rd1, %rd6;
	st.global.v4.u32 	[%rd8], {%r5, %r6, %r7, %r8};
	add.s64 	%rd4, %rd4, %rd5;
	bra.uni 	$L_loop;
$L_done:
	ret;
}
)PTX";

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and nvidia-smi write a device's UUID.
std::string uuid_text(const cudaUUID_t& u) {
  std::string s = "GPU-";
  char b[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += b;
  }
  return s;
}

// Best seconds of `runs` timings of `iters` back-to-back launches of `body` on `s`.
template <class F>
double best_seconds(cudaStream_t s, int runs, int iters, F body) {
  CudaEvent e0 = CudaEvent::create(), e1 = CudaEvent::create();
  body();  // warm-up (and the kernel's first-launch JIT, outside the timing)
  KOPT_CUDA_CALL(cudaStreamSynchronize(s));
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    KOPT_CUDA_CALL(cudaEventRecord(e0.get(), s));
    for (int i = 0; i < iters; ++i) body();
    KOPT_CUDA_CALL(cudaEventRecord(e1.get(), s));
    KOPT_CUDA_CALL(cudaEventSynchronize(e1.get()));
    float ms = 0;
    KOPT_CUDA_CALL(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
    best = std::min(best, double(ms) * 1e-3);
  }
  return best;
}

// NVML, loaded at run time (never linked): the few calls the clock sample makes.
struct Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*by_uuid)(const char*, Device*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*max_clock)(Device, int, unsigned*) = nullptr;
  int (*reasons)(Device, unsigned long long*) = nullptr;
  std::string problem;
};
const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml x;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      x.problem = std::string("libnvidia-ml.so.1 cannot be loaded: ") + (e ? e : "?");
      return x;
    }
    x.init = reinterpret_cast<int (*)()>(dlsym(h, "nvmlInit_v2"));
    x.by_uuid = reinterpret_cast<int (*)(const char*, Nvml::Device*)>(dlsym(h, "nvmlDeviceGetHandleByUUID"));
    x.clock = reinterpret_cast<int (*)(Nvml::Device, int, unsigned*)>(dlsym(h, "nvmlDeviceGetClockInfo"));
    x.max_clock = reinterpret_cast<int (*)(Nvml::Device, int, unsigned*)>(dlsym(h, "nvmlDeviceGetMaxClockInfo"));
    // The newer name first (NVML 12.2+), then the one it replaced.
    void* r = dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!r) r = dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    x.reasons = reinterpret_cast<int (*)(Nvml::Device, unsigned long long*)>(r);
    if (!x.init || !x.by_uuid || !x.clock) x.problem = "libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetHandleByUUID / nvmlDeviceGetClockInfo";
    else if (int rc = x.init(); rc != 0) x.problem = "nvmlInit_v2 returned " + std::to_string(rc);
    return x;
  }();
  return n;
}
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

}  // namespace

const char* copy_kernel_ptx() { return kCopyPtx; }

int fp32_lanes_per_sm(int major, int minor) {
  if (major == 7) return 64;                          // Volta, Turing
  if (major == 8) return minor == 0 ? 64 : 128;       // A100: 64; GA10x, Ada: 128
  if (major == 9 || major == 10 || major == 12) return 128;  // Hopper, Blackwell
  return 0;
}

std::string throttle_words(unsigned long long r) {
  static const std::pair<unsigned long long, const char*> kSlowdowns[] = {
      {0x4ULL, "software power cap"},         {0x8ULL, "hardware slowdown"},
      {0x20ULL, "software thermal slowdown"}, {0x40ULL, "hardware thermal slowdown"},
      {0x80ULL, "hardware power brake"}};
  std::string out;
  for (const auto& [bit, w] : kSlowdowns)
    if (r & bit) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

MachineIdentity cuda_identity(int device) {
  cudaDeviceProp p{};
  KOPT_CUDA_CALL(cudaGetDeviceProperties(&p, device));
  int drv = 0;
  KOPT_CUDA_CALL(cudaDriverGetVersion(&drv));
  MachineIdentity id;
  id["backend"] = "cuda";
  id["device_name"] = p.name;
  id["device_uuid"] = uuid_text(p.uuid);
  id["memory_bytes"] = std::to_string(p.totalGlobalMem);
  id["sms"] = std::to_string(p.multiProcessorCount);
  id["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  id["driver"] = std::to_string(drv);
  return id;
}

Limits probe_cuda_limits(int device) {
  KOPT_CUDA_CALL(cudaSetDevice(device));
  cudaDeviceProp p{};
  KOPT_CUDA_CALL(cudaGetDeviceProperties(&p, device));
  Limits l;
  const int mem_khz = attribute(cudaDevAttrMemoryClockRate, device);
  const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
  const int sm_khz = attribute(cudaDevAttrClockRate, device);
  if (mem_khz > 0 && bus_bits > 0) l.peak_bandwidth_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  // Buffers far past the L2 (8x, at least 256 MiB), at most 1 GiB each and an eighth of the memory.
  size_t bytes = std::max<size_t>(8 * size_t(std::max(p.l2CacheSize, 0)), 256 * kMiB);
  bytes = std::min<size_t>({bytes, 1024 * kMiB, std::max<size_t>(p.totalGlobalMem / 8, 16 * kMiB)});
  bytes = bytes / (1 * kMiB) * kMiB;
  DeviceBuffer src(bytes), dst(bytes);
  KOPT_CUDA_CALL(cudaMemset(src.get(), 1, bytes));
  KOPT_CUDA_CALL(cudaMemset(dst.get(), 0, bytes));
  CudaStream stream = CudaStream::create();
  const cudaStream_t s = stream.get();
  const int runs = 5, iters = 10;

  double kernel_gbps = 0;
  std::string kernel_note;
  cudaLibrary_t lib{};
  const cudaError_t le = cudaLibraryLoadData(&lib, kCopyPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (le != cudaSuccess) {
    cudaGetLastError();
    kernel_note = std::string("the copy kernel did not load: ") + cudaGetErrorName(le);
  } else {
    try {
      cudaKernel_t k{};
      KOPT_CUDA_CALL(cudaLibraryGetKernel(&k, lib, "kopt_copy16"));
      void* d = dst.get();
      const void* sp = src.get();
      unsigned long long n16 = bytes / 16;
      void* args[] = {&d, &sp, &n16};
      const dim3 block(256), grid(unsigned(std::min(p.multiProcessorCount * 8, 65535)));
      const double t = best_seconds(s, runs, iters, [&] {
        KOPT_CUDA_CALL(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, args, 0, s));
      });
      kernel_gbps = 2.0 * double(bytes) * iters / t / 1e9;
    } catch (const CudaError& e) {
      kernel_note = std::string("the copy kernel failed: ") + e.what();
    }
    KOPT_CUDA_CALL_NOEXCEPT(cudaLibraryUnload(lib));
  }
  const double memcpy_s = best_seconds(s, runs, iters, [&] {
    KOPT_CUDA_CALL(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
  });
  const double memcpy_gbps = 2.0 * double(bytes) * iters / memcpy_s / 1e9;

  l.bandwidth_gbps = std::max(kernel_gbps, memcpy_gbps);
  char m[300];
  std::snprintf(m, sizeof m, "device copy of %zu MiB (a PTX copy kernel%s and cudaMemcpy device-to-device), %d x %d copies, best",
                bytes / kMiB, kernel_gbps > 0 ? "" : " failed", runs, iters);
  l.bandwidth_method = m;
  l.detail["copy_kernel_gbps"] = kernel_gbps;
  l.detail["memcpy_d2d_gbps"] = memcpy_gbps;
  if (!kernel_note.empty()) l.detail["copy_kernel_note"] = kernel_note;
  l.detail["buffer_mib"] = bytes / kMiB;
  l.detail["memory_clock_khz"] = mem_khz;
  l.detail["bus_width_bits"] = bus_bits;
  const int lanes = fp32_lanes_per_sm(p.major, p.minor);
  if (lanes > 0 && sm_khz > 0) {
    l.compute_gflops = double(p.multiProcessorCount) * lanes * 2.0 * sm_khz * 1e3 / 1e9;
    std::snprintf(m, sizeof m, "FP32 peak from properties: %d SMs x %d lanes x 2 (FMA) x %.0f MHz (not tensor cores)",
                  p.multiProcessorCount, lanes, sm_khz / 1e3);
    l.compute_method = m;
  }
  return l;
}

ClockSample gpu_clock_sample(int device) {
  ClockSample s;
  s.source = "NVML SM clock and clock-event reasons";
  const Nvml& n = nvml();
  if (!n.problem.empty()) {
    s.why = "not readable: " + n.problem;
    return s;
  }
  try {
    cudaDeviceProp p{};
    KOPT_CUDA_CALL(cudaGetDeviceProperties(&p, device));
    Nvml::Device d = nullptr;
    const std::string uuid = uuid_text(p.uuid);
    if (int rc = n.by_uuid(uuid.c_str(), &d); rc != 0) {
      s.why = "not readable: nvmlDeviceGetHandleByUUID(" + uuid + ") returned " + std::to_string(rc);
      return s;
    }
    unsigned mhz = 0;
    if (int rc = n.clock(d, kNvmlClockSm, &mhz); rc != 0) {
      s.why = "not readable: nvmlDeviceGetClockInfo returned " + std::to_string(rc);
      return s;
    }
    s.readable = true;
    s.units = 1;
    s.min_mhz = s.max_mhz = s.mean_mhz = mhz;
    unsigned max_mhz = 0;
    if (n.max_clock && n.max_clock(d, kNvmlClockSm, &max_mhz) == 0 && max_mhz > 0) s.max_clock_mhz = max_mhz;
    unsigned long long r = 0;
    if (n.reasons && n.reasons(d, &r) == 0) {
      s.throttle_reasons = r;
      s.throttle_words = throttle_words(r);
    }
  } catch (const CudaError& e) {
    s.readable = false;
    s.why = std::string("not readable: ") + e.what();
  }
  return s;
}

}  // namespace kopt::bench
