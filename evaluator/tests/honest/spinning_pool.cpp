// Honest: a persistent worker pool, started at load, whose threads spin between calls waiting for
// work (as OpenMP or a hand-rolled pool may) and compute only inside calls: a relu split between
// the pool and the caller. Spinning between calls is no work on the inputs; it must not be mistaken
// for it.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {
constexpr int kWorkers = 2;
std::atomic<uint64_t> generation{0};
std::atomic<int> pending{0};
const float* g_in = nullptr;
float* g_out = nullptr;
int64_t g_n = 0;

void chunk(int part, int parts) {
  const int64_t lo = g_n * part / parts, hi = g_n * (part + 1) / parts;
  for (int64_t i = lo; i < hi; ++i) g_out[i] = g_in[i] > 0.f ? g_in[i] : 0.f;
}

struct Pool {
  Pool() {
    for (int w = 0; w < kWorkers; ++w)
      std::thread([w] {
        uint64_t seen = 0;
        for (;;) {
          const uint64_t g = generation.load(std::memory_order_acquire);
          if (g == seen) continue;  // spin: no sleeping between calls
          seen = g;
          chunk(w + 1, kWorkers + 1);
          pending.fetch_sub(1, std::memory_order_acq_rel);
        }
      }).detach();
  }
} pool;
}  // namespace

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor y = at::empty_like(x);
  g_in = x.data_ptr<float>();
  g_out = y.data_ptr<float>();
  g_n = x.numel();
  pending.store(kWorkers, std::memory_order_release);
  generation.fetch_add(1, std::memory_order_acq_rel);
  chunk(0, kWorkers + 1);
  while (pending.load(std::memory_order_acquire) != 0) {
  }
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
