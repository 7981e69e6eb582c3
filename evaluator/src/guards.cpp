#include "guards.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DefaultDtype.h>

#include <sched.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>

#ifdef KOPT_WITH_CUDA
#include "cuda_call.hpp"
#endif
#ifdef KOPT_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace kopt::bench {

namespace {
// The CPUs this process may run on (its affinity), at least 1.
size_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}
}  // namespace

// Each operator's registered kernels as the dispatcher states them (OperatorHandle::dumpState: every
// kernel of every key, the inactive ones under an override included, with where each was
// registered), and which runtime keys have a backend fallback. The computed table is a function of
// exactly these, so they show every change it would (and an override that a later one hides), at
// about two thirds of the cost of recomputing the table key by key; the operators are split over
// up to `max_threads` threads on the runner's CPUs (nothing else runs in it while a snapshot is taken:
// before the op is loaded, after it loaded, and at the end of the run).
DispatcherSnapshot snapshot_dispatcher(size_t max_threads) {
  auto& d = c10::Dispatcher::singleton();
  const std::vector<c10::OperatorName> names = d.getAllOpNames();
  std::vector<std::optional<size_t>> hashes(names.size());
  auto hash_range = [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i)
      if (auto op = d.findOp(names[i])) hashes[i] = std::hash<std::string>{}(op->dumpState());
  };
  constexpr size_t kOpsPerThread = 400;  // below this a thread costs more than it saves
  const size_t workers = std::min<size_t>({usable_cpus(), std::max<size_t>(max_threads, 1), std::max<size_t>(1, names.size() / kOpsPerThread)});
  const size_t per = (names.size() + workers - 1) / std::max<size_t>(workers, 1);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(workers);
  size_t done_here_from = names.size();
  for (size_t w = 1; w < workers; ++w) {
    const size_t lo = w * per, hi = std::min(names.size(), lo + per);
    if (lo >= hi) break;
    try {
      threads.emplace_back([&, lo, hi, w] {
        try {
          hash_range(lo, hi);
        } catch (...) {
          errors[w] = std::current_exception();
        }
      });
    } catch (const std::system_error&) {  // no thread to be had: the rest on this one
      done_here_from = lo;
      break;
    }
  }
  try {
    hash_range(0, std::min(per, names.size()));
    if (done_here_from < names.size()) hash_range(done_here_from, names.size());
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  DispatcherSnapshot s;
  for (size_t i = 0; i < names.size(); ++i)
    if (hashes[i]) s.tables[c10::toString(names[i])] = *hashes[i];
  std::string fallbacks;
  for (auto k : c10::DispatchKeySet(c10::DispatchKeySet::FULL))
    if (d.hasBackendFallbackForDispatchKey(k)) fallbacks += std::string(c10::toString(k)) + ",";
  s.tables[kBackendFallbacks] = std::hash<std::string>{}(fallbacks);
  return s;
}

namespace {
DispatcherSnapshot* g_pristine = nullptr;  // inherited through fork; never freed (the process's own)
}  // namespace

void take_pristine_dispatcher() {
  // On this thread alone: the process forks runners afterwards (judge_image.cpp: single_threaded).
  if (!g_pristine) g_pristine = new DispatcherSnapshot(snapshot_dispatcher(1));
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
