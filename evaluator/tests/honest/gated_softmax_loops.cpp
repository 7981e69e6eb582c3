// HONEST (trap for the no-oracle magnitude rule): the gated softmax of ref_gated_softmax.cpp in
// plain loops (exp(x - max) / sum, the sums in another order), the row's largest value, and the
// residues summed backwards: its residues are different rounding noise from the reference's (other signs,
// other sizes) beside values of ~8. The perturbed reference finds those residues unreliable, so
// they are not held against it; the small gated rows it computes, so it passes.
#include <kopt/op.h>
#include <ATen/ATen.h>

#include <cmath>

static std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& x_) {
  at::Tensor x = x_.contiguous();
  const int64_t n = x.size(0), d = x.size(1);
  at::Tensor y = at::empty_like(x), s = at::empty({n, 2}, x.options());
  const float* a = x.data_ptr<float>();
  float* o = y.data_ptr<float>();
  float* so = s.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* r = a + i * d;
    float m = r[0];
    for (int64_t j = 1; j < d; ++j) m = std::max(m, r[j]);
    float z = 0;
    for (int64_t j = d - 1; j >= 0; --j) z += std::exp(r[j] - m);
    const float g = i < 8 ? 64.0f : 1e-4f;
    for (int64_t j = 0; j < d; ++j) o[i * d + j] = std::exp(r[j] - m) / z * g;
    float sum = 0;
    for (int64_t j = d - 1; j >= 0; --j) sum += r[j];
    const float mean = sum / float(d);
    float res = 0;
    for (int64_t j = d - 1; j >= 0; --j) res += r[j] - mean;
    so[2 * i] = m;
    so[2 * i + 1] = res * 1e-3f;
  }
  return {y, s};
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x) -> (Tensor, Tensor)"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
