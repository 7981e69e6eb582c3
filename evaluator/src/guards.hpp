// Process-wide state a candidate must not change: the op dispatcher's tables and torch globals.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kopt::bench {

struct DispatcherSnapshot {
  // operator name -> hash of its registered kernels; kBackendFallbacks -> which keys have a fallback
  std::map<std::string, size_t> tables;
};
// Not an operator name (those are `ns::name[.overload]`): the dispatcher's backend fallbacks.
inline constexpr const char* kBackendFallbacks = "(backend fallbacks)";
DispatcherSnapshot snapshot_dispatcher(size_t max_threads = 8);

// The dispatcher before any job, taken once in a process that never holds one (the warm image,
// else the zygote as it starts) and inherited by the runners forked from it: a forked runner's
// own snapshot before it loads a library reads the same tables (nothing between the fork and the
// load registers an operator), so it compares against this one instead of taking it again.
// nullptr where none was taken (an exec'd runner takes its own).
void take_pristine_dispatcher();
const DispatcherSnapshot* pristine_dispatcher();

// Operators (outside `own_prefix`, e.g. "kopt_ab12::") whose tables changed or that disappeared.
std::vector<std::string> dispatcher_changes(const DispatcherSnapshot& before, const DispatcherSnapshot& after,
                                            const std::string& own_prefix,
                                            std::vector<std::string>* new_foreign_ops = nullptr);

struct TorchState {
  std::map<std::string, std::string> values;  // num_threads, default_dtype, grad_mode, backend flags ...
};
TorchState snapshot_torch_state();
std::vector<std::string> torch_state_changes(const TorchState& before, const TorchState& after);

}  // namespace kopt::bench
