// Shared declaration for the two-file honest candidate.
#pragma once
#include <cstdint>
void scale_add_kernel(const float* x, const float* y, float alpha, float* out, int64_t n);
