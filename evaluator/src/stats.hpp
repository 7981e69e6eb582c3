// Order statistics for timing samples and the noise-aware stopping rule.
#pragma once
#include <string>
#include <vector>

namespace kopt::bench {

// A distribution-free confidence interval of the median from order statistics: with X_(1..n) sorted,
// [X_(k), X_(n+1-k)] holds the true median with probability >= 1 - 2 P(Bin(n, 1/2) <= k-1) for any
// continuous distribution (ties only widen it). k is the largest rank reaching `level`. Below 6
// samples no rank reaches 95 %: the interval is then [min, max] with its actual coverage
// 1 - 2^(1-n) and `reaches` false (n = 1: coverage 0).
struct MedianCi {
  double lo = 0, hi = 0;
  double coverage = 0;  // the interval's exact coverage for a continuous distribution
  size_t k = 0;         // 1-based rank of lo (hi is rank n+1-k); 0 when empty
  bool reaches = false; // coverage >= level
};
MedianCi median_ci_sorted(const std::vector<double>& sorted, double level = 0.95);
// P(Bin(n, 1/2) <= j), in log space (no underflow for large n).
double binom_half_cdf(size_t n, size_t j);

struct Summary {
  size_t n = 0;
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  double rel_iqr = 0;       // (q3 - q1) / median
  double rel_ci_half = 0;   // (ci.hi - ci.lo) / 2 / median: the half-width of `ci` relative to the median
  MedianCi ci;              // the median's distribution-free 95 % interval (median_ci_sorted)
  double cv = 0;            // coefficient of variation: standard deviation / mean (how noisy, in words)
};


// Linear-interpolated quantile of sorted data, q in [0,1].
double quantile_sorted(const std::vector<double>& sorted, double q);
Summary summarize(std::vector<double> samples);

struct StopRule {
  size_t min_trials = 15;
  size_t max_trials = 100;
  double target_rel_ci = 0.005;  // stop when the median's relative CI half-width is at most this
  // ... or when its absolute half-width is at most this (ms): a fast op's window carries the judge's
  // channel, whose microsecond jitter no number of trials makes comparable across evaluations.
  double target_abs_ms = 0.002;
  double max_seconds = 30.0;     // wall-time cap for the timed loop
  // A fast op's budget (s; 0: off): an op whose max_trials windows would fit in it (median * max_trials
  // <= budget) stops once its loop has run this long, if its interval is not projected to reach
  // either target within max_trials at the spread seen so far. Its loop is then mostly the judge's
  // own per-call work, and the samples left would narrow an interval that stays wider than the
  // target anyway (by sqrt(n / max_trials)). The result still says noisy, with its interval.
  double budget_s = 0.05;
  // The text that goes into the baseline key: a change of rule re-measures the reference.
  std::string describe() const;
};

enum class StopReason { Converged, MaxTrials, TimeCap, Budget };
const char* to_string(StopReason r);

// How many samples the interval needs to reach either target, projected from `s` (the half-width
// shrinks as 1/sqrt(n)); SIZE_MAX where no projection can be made.
size_t projected_trials(const StopRule& rule, const Summary& s);

// Decides after each sample; `elapsed_s` is the timed loop's wall time so far.
bool should_stop(const StopRule& rule, const std::vector<double>& samples, double elapsed_s,
                 StopReason* why);

}  // namespace kopt::bench
