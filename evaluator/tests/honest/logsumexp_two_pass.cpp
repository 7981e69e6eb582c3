// Honest for logsumexp.pt: two passes per row, the maximum first, then the sum of exp(x - max):
// right for any logits, also where exp(x) alone overflows or underflows.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cmath>

static at::Tensor forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  const int64_t R = x.size(0), C = x.size(1);
  at::Tensor y = at::empty({R}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* in = X + r * C;
    float mx = in[0];
    for (int64_t c = 1; c < C; ++c) mx = std::max(mx, in[c]);
    float s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(in[c] - mx);
    Y[r] = mx + std::log(s);
  }
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
