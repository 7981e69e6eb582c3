#include "guards.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DefaultDtype.h>

#include <functional>

#ifdef KOPT_WITH_CUDA
#include "cuda_call.hpp"
#endif
#ifdef KOPT_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace kopt::bench {

DispatcherSnapshot snapshot_dispatcher() {
  DispatcherSnapshot s;
  auto& d = c10::Dispatcher::singleton();
  for (const auto& name : d.getAllOpNames()) {
    auto op = d.findOp(name);
    if (!op) continue;
    s.tables[c10::toString(name)] = std::hash<std::string>{}(op->dumpComputedTable());
  }
  return s;
}

namespace {
DispatcherSnapshot* g_pristine = nullptr;  // inherited through fork; never freed (the process's own)
}  // namespace

void take_pristine_dispatcher() {
  if (!g_pristine) g_pristine = new DispatcherSnapshot(snapshot_dispatcher());
}

const DispatcherSnapshot* pristine_dispatcher() { return g_pristine; }

std::vector<std::string> dispatcher_changes(const DispatcherSnapshot& before, const DispatcherSnapshot& after,
                                            const std::string& own_prefix,
                                            std::vector<std::string>* new_foreign_ops) {
  std::vector<std::string> out;
  for (const auto& [name, h] : after.tables) {
    if (!own_prefix.empty() && name.rfind(own_prefix, 0) == 0) continue;
    auto it = before.tables.find(name);
    if (it == before.tables.end()) {
      if (new_foreign_ops) new_foreign_ops->push_back(name);
    } else if (it->second != h) {
      out.push_back(name);
    }
  }
  for (const auto& [name, h] : before.tables)
    if (!after.tables.count(name)) out.push_back(name + " (removed)");
  return out;
}

TorchState snapshot_torch_state() {
  TorchState s;
  auto& ctx = at::globalContext();
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  s.values["num_threads"] = std::to_string(at::get_num_threads());
  s.values["num_interop_threads"] = std::to_string(at::get_num_interop_threads());
  s.values["default_dtype"] = std::string(c10::toString(c10::typeMetaToScalarType(c10::get_default_dtype())));
  s.values["grad_mode"] = b(at::GradMode::is_enabled());
  s.values["deterministic_algorithms"] = b(ctx.deterministicAlgorithms());
  s.values["mkldnn_enabled"] = b(ctx.userEnabledMkldnn());
  s.values["cudnn_enabled"] = b(ctx.userEnabledCuDNN());
  s.values["cudnn_benchmark"] = b(ctx.benchmarkCuDNN());
  s.values["cudnn_deterministic"] = b(ctx.deterministicCuDNN());
  s.values["allow_tf32_cublas"] = b(ctx.allowTF32CuBLAS());
  s.values["allow_tf32_cudnn"] = b(ctx.allowTF32CuDNN());
  s.values["allow_fp16_reduction_cublas"] = b(ctx.allowFP16ReductionCuBLAS());
  s.values["float32_matmul_precision"] = std::to_string(int(ctx.float32MatmulPrecision()));
#if defined(__x86_64__) || defined(__i386__)
  // Flush-to-zero and denormals-are-zero of the calling thread (torch.set_flush_denormal sets them
  // there): the thread that runs the op's calls.
  s.values["flush_denormal"] = b((_mm_getcsr() & 0x8040u) != 0);
#endif
#ifdef KOPT_WITH_CUDA
  // The CUDA side a candidate could switch for the judge: the current device and stream (timing
  // events go on the current stream), the device flags, the persisting-L2 limit. Read with plain
  // calls: an error is recorded as the value (it then shows as a change), never thrown.
  if (cuda_no_device_reason().empty()) {
    auto cuda_value = [](cudaError_t e, const std::string& v) {
      if (e == cudaSuccess) return v;
      cudaGetLastError();
      return std::string("error ") + cudaGetErrorName(e);
    };
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    s.values["cuda_current_device"] = cuda_value(e, std::to_string(cur));
    unsigned flags = 0;
    e = cudaGetDeviceFlags(&flags);
    s.values["cuda_device_flags"] = cuda_value(e, std::to_string(flags));
    size_t persist = 0;
    e = cudaDeviceGetLimit(&persist, cudaLimitPersistingL2CacheSize);
    s.values["cuda_persisting_l2_limit"] = cuda_value(e, std::to_string(persist));
#ifdef KOPT_TORCH_CUDA
    c10::cuda::CUDAStream st = c10::cuda::getCurrentCUDAStream();
    bool is_default = st == c10::cuda::getDefaultCUDAStream(st.device_index());
    s.values["cuda_current_stream"] = std::to_string(st.id()) + (is_default ? " (default)" : " (not the default stream)");
#endif
  }
#endif
  return s;
}

std::vector<std::string> torch_state_changes(const TorchState& before, const TorchState& after) {
  std::vector<std::string> out;
  for (const auto& [k, v] : before.values) {
    auto it = after.values.find(k);
    std::string w = it == after.values.end() ? "?" : it->second;
    if (w != v) out.push_back(k + ": " + v + " -> " + w);
  }
  return out;
}

}  // namespace kopt::bench
