// How sure a difference between two measurements is (spec N, issue 49): one rule, here, read by the
// per-point labels (vsBest, vsReference), the finalize gap, the loop's significant progress, the chart,
// the report and the digest. In the spirit of nvbench's comparison: the two intervals and a minimum effect.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kopt {

// An interval of a latency, ms: lo ≤ hi, both positive and finite.
struct Interval {
  double lo = 0, hi = 0;
};
// A reported interval is kept only when it is one and holds its latency (lo ≤ latency ≤ hi).
std::optional<Interval> valid_interval(double lo, double hi, double latency);

// FASTER / SAME / SLOWER / UNSURE; `none` where there is nothing to compare (no label on the wire).
enum class Versus : std::uint8_t { none = 0, faster, same, slower, unsure };
const char* versus_name(Versus v);                  // "faster" | "same" | "slower" | "unsure" | ""
Versus versus_from(std::string_view name);          // none for anything else

// Below this many percent a difference is called SAME whatever the intervals say.
inline constexpr double kMinEffectPct = 1.0;

// a against b (latencies, positive): `effectPct` = how much faster a is, in % of b (negative: slower);
// `pmPct` = the half-width of that effect from the two intervals (√(ha² + hb²) / b, in %).
// unsure when either interval is missing; faster when a's interval lies wholly below b's and the effect
// is at least kMinEffectPct; slower the other way round; else same (the intervals overlap, or the
// effect is too small to matter).
struct Comparison {
  Versus verdict = Versus::unsure;
  double effectPct = 0, pmPct = 0;
};
Comparison compare_latencies(double a, const std::optional<Interval>& ia, double b, const std::optional<Interval>& ib);

}  // namespace kopt
