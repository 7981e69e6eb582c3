// The evaluation result and the exact lines kopt-bench prints (the KERNEL_EVAL line last).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

struct Deviation {
  double max_abs = 0, avg_abs = 0, max_rel = 0;
  size_t failed_trials = 0, trials = 0;
};

struct Result {
  std::string artifact;
  bool compiled = false;
  bool correct = false;
  std::string backend = "cpu";
  std::string timer;       // host | cuda_event | cupti
  std::string timer_note;  // why a fallback happened
  std::optional<double> runtime_ms, ref_runtime_ms, kernel_ms;
  // The medians' distribution-free 95 % intervals (stats.hpp), ms: the candidate's, and the one of the
  // reference figure that gives the speedup. Absent when the trials were too few to reach 95 %.
  std::optional<std::pair<double, double>> latency_ci, ref_ci;
  std::optional<long> launches;
  std::string ref_source;
  std::string sentinel = "NOT_RUN";  // PASS | FAIL | NOT_RUN
  std::string tolerance_rule;
  std::optional<Deviation> deviation;
  size_t trials = 0;
  double rel_iqr = 0, rel_ci = 0;
  std::string stop_reason;
  bool noisy = false;
  std::vector<std::string> hacks;     // reward hacks detected (non-empty => reward_hack_detected)
  std::vector<std::string> advisory;  // worth a look, not a failure
  std::vector<std::string> notes;     // e.g. why the baseline was re-measured
  std::string error;
  bool evaluator_failed = false;      // the evaluator could not judge (bad input, environment)
  nlohmann::json extra_metrics = nlohmann::json::object();

  nlohmann::json to_json() const;            // transport between worker and parent
  static Result from_json(const nlohmann::json& j);
};

// Everything kopt-bench prints on stdout for one evaluation, each line ending in '\n'.
std::string format_output(const Result& r);
// The lines of an evaluation that never started because the command line or the input was wrong
// (exit status 2): not compiled, not correct, evaluator_failed, the error. Every such error ends in
// a KERNEL_EVAL line, so a caller reading the contract always finds one.
std::string input_error_output(const std::string& artifact, const std::string& error);
// Just the payload of the KERNEL_EVAL line.
nlohmann::json kernel_eval_payload(const Result& r);
std::string truncate_error(const std::string& s, size_t max = 400);
// 4 decimals, like the old bench's RUNTIME lines.
std::string fixed4(double v);

}  // namespace kopt::bench
