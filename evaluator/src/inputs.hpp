// Drawing input values from a spec, deterministically from a seed.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include "spec.hpp"

namespace kopt::bench {

at::ScalarType scalar_type_of(const std::string& dtype);

// The dtype a declared tensor gets: floating tensors take `precision`, integer ones keep theirs.
at::ScalarType effective_dtype(const InputDesc& d, const std::string& precision);

// How a correctness trial departs from the declared distribution (an input regime). A floating
// tensor drawn from normal(mean, std) or uniform(low, high) has a centre c and a spread w (mean and
// std; midpoint and half-width) and becomes, with the regime's factor f:
//   scaled    c + f*(x - c)
//   shifted   x + f*w                      (f signed)
//   wide      uniform(c - f*w, c + f*w)
//   outliers  the declared values, 1 in 64 replaced by uniform(c - f*w, c + f*w)
// Integer tensors (randint) stay in their range [low, high) and take its two ends half of the time.
// Scalars and const, arange and file inputs never change.
enum class RegimeKind { Declared, Scaled, Shifted, Wide, Outliers };
struct Regime {
  RegimeKind kind = RegimeKind::Declared;
  double f = 1;
  std::string describe() const;  // e.g. "shifted by +143 spreads"
};
// The k-th regime of a run (k = 0, 1, ...): the four kinds in an order drawn from `seed`, each
// strong (|f| in 2^[7,8]: e.g. logits past exp's overflow at 88) or mild (|f| in 2^[2,4], the
// fallback when the reference cannot handle the strong one).
Regime pick_regime(uint64_t seed, size_t k, bool mild);

// Fresh values for every input; the same (spec, seed, precision, regime) always gives the same
// values. Values are drawn on the CPU in float32/int64 and then cast and moved, so CPU and GPU runs
// see the same numbers.
std::vector<c10::IValue> draw_inputs(const InputSpec& spec, uint64_t seed, const std::string& precision,
                                     at::Device device, const Regime& regime = {});

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
