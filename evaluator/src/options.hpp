// Command-line options of kopt-bench (parsed in the parent, passed to the worker as JSON).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats.hpp"

namespace kopt::bench {

struct Options {
  std::string ref;
  std::vector<std::string> solution;
  std::string inputs;
  std::string artifact;              // default: the first solution path
  std::string precision;             // "" = the spec's, else float32
  std::string device = "auto";       // auto | cpu | cuda
  std::string timer = "auto";        // auto: the judge's clock (CPU), the device timer (GPU) | device: the device path on CPU too
  int num_correct_trials = 10;
  int off_distribution_trials = 3;  // extra correctness trials off the declared distribution (inputs.hpp)
  int warmup = 10;
  StopRule stop;
  bool fresh_inputs = true;
  std::string tolerance = "auto";    // auto | fixed
  std::optional<double> atol, rtol;
  std::string baseline = ".bench-baseline.json";
  bool refresh_baseline = false;
  std::string cache_dir;             // "" = default
  bool cache_dir_given = false;
  double timeout_s = 600;
  bool no_timing = false;            // correctness only
  bool namespaces = true;            // false: --no-namespaces (no bubblewrap; Landlock + seccomp only)
  bool allow_weaker_isolation = false;  // --allow-weaker-isolation: run on where a confinement step fails
  std::optional<uint64_t> seed;
  // --slurm OPTS: run as a Slurm job array, one element per --solution (slurm_client.hpp). Not sent to
  // the worker: the elements run kopt-bench with `passthrough` and their own --solution.
  bool slurm = false;
  std::string slurm_opts;                 // sbatch options, split like a shell (no expansion)
  std::vector<std::string> candidates;    // each --solution value as given (one candidate; commas = its files)
  std::vector<std::string> passthrough;   // every other argument as given, in order
  bool artifact_given = false;

  nlohmann::json to_json() const;
  static Options from_json(const nlohmann::json& j);
  // Every option that differs from its default, as structured fields (native_metrics.options).
  nlohmann::json non_defaults() const;
};

struct ParseOutcome {
  bool ok = false;
  bool help = false;
  std::string error;
};

ParseOutcome parse_args(int argc, char** argv, Options* out);
std::string usage_text();

}  // namespace kopt::bench
