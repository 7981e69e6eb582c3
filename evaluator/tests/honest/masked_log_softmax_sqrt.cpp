// Honest for nonfinite.pt: a hand-written masked log-softmax (-inf exactly where the reference masks;
// NaN for a row masked whole, as the reference) and a square root (NaN exactly where x < 0).
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <tuple>

static std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  at::Tensor ls = at::empty_like(x), sq = at::empty_like(x);
  const int64_t R = x.size(0), C = x.size(1);
  const float* X = x.data_ptr<float>();
  float *L = ls.data_ptr<float>(), *S = sq.data_ptr<float>();
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < R; ++r) {
    const float* in = X + r * C;
    float mx = ninf;
    for (int64_t c = 0; c < C; ++c) mx = std::max(mx, in[c] < -1.f ? ninf : in[c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(double(in[c] < -1.f ? ninf : in[c]) - mx);
    const float lse = float(mx + std::log(s));
    for (int64_t c = 0; c < C; ++c) L[r * C + c] = (in[c] < -1.f ? ninf : in[c]) - lse;
  }
  for (int64_t i = 0, n = x.numel(); i < n; ++i) S[i] = std::sqrt(X[i]);
  return {ls, sq};
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> (Tensor, Tensor)"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
