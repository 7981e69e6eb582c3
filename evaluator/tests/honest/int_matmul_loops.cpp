// Honest for ref_int_matmul.cpp: the int64 product by hand (i-k-j loops over contiguous rows), exact.
#include <kopt/op.h>
#include <ATen/ATen.h>

static at::Tensor forward(const at::Tensor& a_, const at::Tensor& b_) {
  at::Tensor a = a_.contiguous(), b = b_.contiguous();
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  at::Tensor c = at::zeros({n, m}, a.options());
  const int64_t* A = a.data_ptr<int64_t>();
  const int64_t* B = b.data_ptr<int64_t>();
  int64_t* C = c.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const int64_t x = A[i * k + p];
      for (int64_t j = 0; j < m; ++j) C[i * m + j] += x * B[p * m + j];
    }
  return c;
}

KOPT_LIBRARY(m) { m.def("forward(Tensor a, Tensor b) -> Tensor"); }
KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }
