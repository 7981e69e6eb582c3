// Drawing input values from a spec, deterministically from a seed.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include "spec.hpp"

namespace kopt::bench {

at::ScalarType scalar_type_of(const std::string& dtype);

// The dtype a declared tensor gets: floating tensors take `precision`, integer ones keep theirs.
at::ScalarType effective_dtype(const InputDesc& d, const std::string& precision);

// Fresh values for every input; the same (spec, seed, precision) always gives the same values.
// Values are drawn on the CPU in float32/int64 and then cast and moved, so CPU and GPU runs see
// the same numbers.
std::vector<c10::IValue> draw_inputs(const InputSpec& spec, uint64_t seed, const std::string& precision,
                                     at::Device device);

// Deep copy (tensors cloned, scalars copied).
std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& in);

// Same values cast to float64 (for the oracle); integer tensors and scalars unchanged.
std::vector<c10::IValue> to_double(const std::vector<c10::IValue>& in);

// Overwrites the bytes of `dst`'s tensors with the values of `src` (same shapes/dtypes) without
// going through ATen ops, so the tensors' version counters do not move.
void overwrite_bytes(std::vector<c10::IValue>& dst, const std::vector<c10::IValue>& src);

// A checksum of all tensor bytes (to detect in-place modification of inputs).
uint64_t checksum(const std::vector<c10::IValue>& in);
uint64_t checksum(const at::Tensor& t);
uint64_t checksum_bytes(const void* data, size_t n);

}  // namespace kopt::bench
