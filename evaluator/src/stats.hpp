// Order statistics for timing samples and the noise-aware stopping rule.
#pragma once
#include <string>
#include <vector>

namespace kopt::bench {

struct Summary {
  size_t n = 0;
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  double rel_iqr = 0;       // (q3 - q1) / median
  double rel_ci_half = 0;   // distribution-free 95 % confidence half-width of the median / median
  double cv = 0;            // coefficient of variation: standard deviation / mean (how noisy, in words)
};

// Linear-interpolated quantile of sorted data, q in [0,1].
double quantile_sorted(const std::vector<double>& sorted, double q);
Summary summarize(std::vector<double> samples);

struct StopRule {
  size_t min_trials = 15;
  size_t max_trials = 100;
  double target_rel_ci = 0.005;  // stop when the median's relative CI half-width is at most this
  double max_seconds = 30.0;     // wall-time cap for the timed loop
  // The text that goes into the baseline key: a change of rule re-measures the reference.
  std::string describe() const;
};

enum class StopReason { Converged, MaxTrials, TimeCap };
const char* to_string(StopReason r);

// Decides after each sample; `elapsed_s` is the timed loop's wall time so far.
bool should_stop(const StopRule& rule, const std::vector<double>& samples, double elapsed_s,
                 StopReason* why);

}  // namespace kopt::bench
