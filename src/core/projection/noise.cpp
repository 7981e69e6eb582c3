#include "kopt/noise.hpp"

#include <cmath>

namespace kopt {

std::optional<Interval> valid_interval(double lo, double hi, double latency) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo > 0) || lo > hi) return std::nullopt;
  if (std::isfinite(latency) && (latency < lo || latency > hi)) return std::nullopt;
  return Interval{lo, hi};
}

const char* versus_name(Versus v) {
  switch (v) {
    case Versus::faster: return "faster";
    case Versus::same: return "same";
    case Versus::slower: return "slower";
    case Versus::unsure: return "unsure";
    case Versus::none: break;
  }
  return "";
}

Versus versus_from(std::string_view name) {
  for (Versus v : {Versus::faster, Versus::same, Versus::slower, Versus::unsure})
    if (name == versus_name(v)) return v;
  return Versus::none;
}

Comparison compare_latencies(double a, const std::optional<Interval>& ia, double b, const std::optional<Interval>& ib) {
  Comparison c;
  if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) return c;
  c.effectPct = (b - a) / b * 100.0;
  if (!ia || !ib) return c;  // unsure: one side has no noise estimate
  const double ha = (ia->hi - ia->lo) / 2, hb = (ib->hi - ib->lo) / 2;
  c.pmPct = std::sqrt(ha * ha + hb * hb) / b * 100.0;
  if (ia->hi < ib->lo && c.effectPct >= kMinEffectPct) c.verdict = Versus::faster;
  else if (ia->lo > ib->hi && -c.effectPct >= kMinEffectPct) c.verdict = Versus::slower;
  else c.verdict = Versus::same;
  return c;
}

}  // namespace kopt
