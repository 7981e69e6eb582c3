#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

namespace kopt::bench {

double binom_half_cdf(size_t n, size_t j) {
  if (j >= n) return 1.0;
  const double ln2n = double(n) * std::log(2.0), lgn = std::lgamma(double(n) + 1);
  double sum = 0;
  for (size_t i = 0; i <= j; ++i)
    sum += std::exp(lgn - std::lgamma(double(i) + 1) - std::lgamma(double(n - i) + 1) - ln2n);
  return std::min(1.0, sum);
}

MedianCi median_ci_sorted(const std::vector<double>& v, double level) {
  MedianCi c;
  const size_t n = v.size();
  if (n == 0) return c;
  const double alpha_half = (1 - level) / 2;
  // The largest k with P(Bin <= k-1) <= alpha/2; the cumulative sum grows with j, stop at the first miss.
  size_t k = 0;
  const double ln2n = double(n) * std::log(2.0), lgn = std::lgamma(double(n) + 1);
  double cdf = 0;
  for (size_t j = 0; j < (n + 1) / 2; ++j) {
    cdf += std::exp(lgn - std::lgamma(double(j) + 1) - std::lgamma(double(n - j) + 1) - ln2n);
    if (cdf > alpha_half) break;
    k = j + 1;
  }
  c.reaches = k > 0;
  if (k == 0) k = 1;  // [min, max]: the widest there is, below the level
  c.k = k;
  c.lo = v[k - 1];
  c.hi = v[n - k];
  c.coverage = std::max(0.0, 1 - 2 * binom_half_cdf(n, k - 1));
  if (n == 1) c.coverage = 0;
  return c;
}

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
  s.ci = median_ci_sorted(v);
  if (s.median > 0) {
    s.rel_iqr = (s.q3 - s.q1) / s.median;
    // The exact order-statistic interval (binomial ranks), the same one printed as latency_ci_ms.
    s.rel_ci_half = (s.ci.hi - s.ci.lo) / 2.0 / s.median;
  }
  return s;
}

std::string StopRule::describe() const {
  std::ostringstream o;
  o << "median; ci95<=" << target_rel_ci << " or " << target_abs_ms << "ms; exact ranks; min=" << min_trials << "; max=" << max_trials
    << "; cap=" << max_seconds << "s";
  if (budget_s > 0) o << "; fast-op budget=" << budget_s << "s unless projected to converge";
  return o.str();
}

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::Converged: return "converged";
    case StopReason::MaxTrials: return "max_trials";
    case StopReason::TimeCap: return "time_cap";
    case StopReason::Budget: return "budget";
  }
  return "?";
}

size_t projected_trials(const StopRule& rule, const Summary& s) {
  if (!s.ci.reaches || s.n == 0 || s.median <= 0) return SIZE_MAX;
  const double half = (s.ci.hi - s.ci.lo) / 2;
  auto need = [&](double h, double target) -> double {
    if (target <= 0) return INFINITY;
    if (h <= target) return double(s.n);
    return double(s.n) * (h / target) * (h / target);
  };
  const double n = std::min(need(s.rel_ci_half, rule.target_rel_ci), need(half, rule.target_abs_ms));
  return n >= 1e18 ? SIZE_MAX : size_t(std::ceil(n));
}

bool should_stop(const StopRule& rule, const std::vector<double>& samples, double elapsed_s,
                 StopReason* why) {
  if (samples.size() >= rule.max_trials) { *why = StopReason::MaxTrials; return true; }
  if (elapsed_s >= rule.max_seconds && samples.size() >= 3) { *why = StopReason::TimeCap; return true; }
  if (samples.size() < rule.min_trials) return false;
  const Summary s = summarize(samples);
  if (s.ci.reaches && (s.rel_ci_half <= rule.target_rel_ci || (s.ci.hi - s.ci.lo) / 2 <= rule.target_abs_ms)) {
    *why = StopReason::Converged;
    return true;
  }
  if (rule.budget_s > 0 && elapsed_s >= rule.budget_s && s.median * double(rule.max_trials) <= rule.budget_s * 1e3 &&
      projected_trials(rule, s) > rule.max_trials) {
    *why = StopReason::Budget;
    return true;
  }
  return false;
}

}  // namespace kopt::bench
