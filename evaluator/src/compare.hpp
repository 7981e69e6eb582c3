// How a candidate's outputs are compared with the reference's: the element-wise tolerance (or the
// fp64 oracle in auto mode), the low-signal rule, and the relative L2 error.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kopt::bench {

using Outputs = std::vector<at::Tensor>;

struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
  bool auto_mode = true;   // fixed, else fp64 oracle
  double oracle_factor = 8.0;
  double l2_floor = 1e-5;  // relative L2 error always accepted (fp32); 1e-2 for fp16/bf16
};

struct Verdict {
  bool ok = true;
  bool fatal = false;  // shape/count mismatch: no point in more trials
  std::string message;
  std::string rule;    // fixed | oracle | relative | exact-zero
  double max_abs = 0, avg_abs = 0, max_rel = 0, rel_l2 = 0;
  bool low_signal = false;
};

// The fp64 oracle, computed only when a rule needs it (it costs a float64 run of the reference).
struct LazyOracle {
  std::function<std::optional<Outputs>()> fn;
  bool done = false;
  std::optional<Outputs> value;
  const std::optional<Outputs>& get() {
    if (!done && fn) value = fn();
    done = true;
    return value;
  }
};

Verdict judge(const Outputs& cand, const Outputs& ref, LazyOracle& oracle, const Tolerance& tol);

}  // namespace kopt::bench
