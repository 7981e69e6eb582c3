// Honest: a long-K fp32 matmul summed in 8 interleaved partial sums (re-associated). Its
// rounding differs from the reference's; the fp64 oracle rule must accept it.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& a_, const at::Tensor& b_) {
  at::Tensor a = a_.contiguous(), bt = b_.t().contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = bt.size(0);
  at::Tensor c = at::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = bt.data_ptr<float>();
  float* C = c.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t k = 0;
      for (; k + 8 <= K; k += 8)
        for (int u = 0; u < 8; ++u) p[u] += A[i * K + k + u] * B[j * K + k + u];
      float tail = 0;
      for (; k < K; ++k) tail += A[i * K + k] * B[j * K + k];
      C[i * N + j] = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])) + tail;
    }
  return c;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor a, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
