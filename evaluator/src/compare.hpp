// The output contract: how a candidate's outputs are compared with the reference's, rule by rule.
// Every rule lives here, in the order it is applied; `Verdict::failed_rule` names the one that
// decided a failure (native_metrics.failed_rule), `Verdict::rule` the one that accepted.
//   count, undefined, shape, dtype, device  the output's contract: fatal, no point in more trials
//   exact         integer, boolean and index outputs: every value equal to the reference's (unless
//                 the spec declares "integer_outputs": "tolerance"; then the float rules below)
//   non-finite    NaN/inf where the reference has a number, or the other way round (positions where
//                 both are NaN, or both the same infinity, are equal and leave every later rule)
//   element-wise  |c - r| <= atol + rtol*|r|, else the fp64 oracle (auto), or relative error when the
//                 reference is too small for atol to mean anything (low signal)
//   magnitude     exact zeros, flipped signs or values off by more than 8x where the reference is a
//                 reliable normal non-zero value, on more than a sliver of the positions
//   relative L2   ||c - r|| / ||r|| against the floor, else against the oracle's own error
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
  bool integer_exact = true;  // integer and boolean outputs compared exactly (the spec's integer_outputs)
};

struct Verdict {
  bool ok = true;
  bool fatal = false;       // count/shape/dtype/device mismatch: no point in more trials
  std::string message;
  std::string rule;         // accepted by: fixed | oracle | relative | exact-zero | exact
  std::string failed_rule;  // decided a failure: see the header comment
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
  // Where there is no fp64 oracle: the reference again, in its own precision, three times, on its
  // float32/64 inputs each scaled by (1 + 2^-16 u), u uniform in [-1, 1], a different draw each time
  // (nullopt when it has no such inputs or fails). A value the reference computes reliably moves by
  // about its condition number times 2^-16; a cancellation residue is fresh rounding noise each
  // time (it lands on the same few ulps by chance only now and then: three draws make that rare).
  std::function<std::optional<std::vector<Outputs>>()> perturbed_fn;
  bool perturbed_done = false;
  std::optional<std::vector<Outputs>> perturbed_value;
  const std::optional<std::vector<Outputs>>& perturbed() {
    if (!perturbed_done && perturbed_fn) perturbed_value = perturbed_fn();
    perturbed_done = true;
    return perturbed_value;
  }
};

// `cand_devices`: where each candidate output lived in its own process (the copies in `cand` are on
// the CPU); empty = the tensors' own devices. `one_pass`: a finite CPU float output that passes every
// rule outright is judged in one pass over its values (the same arithmetic; anything else, and any
// result near a bound, goes through the rules as tensor ops); false only to check that both agree.
Verdict judge(const Outputs& cand, const Outputs& ref, LazyOracle& oracle, const Tolerance& tol,
              const std::vector<c10::DeviceType>& cand_devices = {}, bool one_pass = true);

// The bytes one call must move at least (issue 49): every defined input tensor read once plus every
// defined output written once (an input updated in place counts once, as read). A lower bound: it
// knows nothing of re-reads, workspaces or caches. `inputs` may hold non-tensors (scalars: 0 bytes).
uint64_t bytes_moved(const std::vector<at::Tensor>& inputs, const Outputs& outputs);

// Positions where an output's values are not finite (NaN or +-inf), per output.
std::vector<bool> nonfinite_outputs(const Outputs& out);

}  // namespace kopt::bench
