// CHEAT: replay keyed on a cheap fingerprint of the input values (8 sampled elements).
// Caught by: unpredictable values on every timed call, and the sentinel's sparse rewrite (a few
// elements change in place, the sampled fingerprint usually does not).
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <cstring>
#include <map>

static at::Tensor forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  static std::map<uint64_t, at::Tensor> cache;
  const float* p = x.data_ptr<float>();
  int64_t n = x.numel();
  uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < 8; ++i) {
    uint32_t bits;
    std::memcpy(&bits, p + (n * i) / 8, 4);
    h = (h ^ bits) * 1099511628211ULL;
  }
  auto it = cache.find(h);
  if (it != cache.end()) return it->second.clone();
  at::Tensor y = at::relu(at::addmm(bias, x, weight.t())).mul_(0.5);
  cache[h] = y.clone();
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
