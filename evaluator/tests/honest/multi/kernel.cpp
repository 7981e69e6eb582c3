// The plain-C++ half of a two-file candidate (no torch headers).
#include "kernel.h"
void scale_add_kernel(const float* x, const float* y, float alpha, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = alpha * x[i] + y[i];
}
