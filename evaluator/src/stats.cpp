#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kopt::bench {

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  double pos = q * double(s.size() - 1);
  size_t lo = size_t(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double f = pos - double(lo);
  return s[lo] * (1 - f) + s[hi] * f;
}

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = quantile_sorted(v, 0.5);
  s.q1 = quantile_sorted(v, 0.25);
  s.q3 = quantile_sorted(v, 0.75);
  double mean = 0, ss = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  if (v.size() > 1 && mean > 0) s.cv = std::sqrt(ss / double(v.size() - 1)) / mean;
  if (s.median > 0) {
    s.rel_iqr = (s.q3 - s.q1) / s.median;
    // Ranks n/2 -+ 1.96 sqrt(n)/2 bound the median with ~95 % confidence whatever the distribution
    // (binomial normal approximation), which suits skewed timing noise better than a t-interval.
    double n = double(v.size());
    double half = 1.959964 * std::sqrt(n) / 2.0;
    double lo_r = std::max(0.0, n / 2.0 - half), hi_r = std::min(n - 1, n / 2.0 + half);
    double lo = quantile_sorted(v, lo_r / std::max(1.0, n - 1));
    double hi = quantile_sorted(v, hi_r / std::max(1.0, n - 1));
    s.rel_ci_half = (hi - lo) / 2.0 / s.median;
  }
  return s;
}

std::string StopRule::describe() const {
  std::ostringstream o;
  o << "median; ci95<=" << target_rel_ci << "; min=" << min_trials << "; max=" << max_trials
    << "; cap=" << max_seconds << "s";
  return o.str();
}

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::Converged: return "converged";
    case StopReason::MaxTrials: return "max_trials";
    case StopReason::TimeCap: return "time_cap";
  }
  return "?";
}

bool should_stop(const StopRule& rule, const std::vector<double>& samples, double elapsed_s,
                 StopReason* why) {
  if (samples.size() >= rule.max_trials) { *why = StopReason::MaxTrials; return true; }
  if (elapsed_s >= rule.max_seconds && samples.size() >= 3) { *why = StopReason::TimeCap; return true; }
  if (samples.size() >= rule.min_trials && summarize(samples).rel_ci_half <= rule.target_rel_ci) {
    *why = StopReason::Converged;
    return true;
  }
  return false;
}

}  // namespace kopt::bench
