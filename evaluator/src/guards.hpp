// Process-wide state a candidate must not change: the op dispatcher's tables and torch globals.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace kopt::bench {

struct DispatcherSnapshot {
  std::map<std::string, size_t> tables;  // operator name -> hash of its computed dispatch table
};
DispatcherSnapshot snapshot_dispatcher();

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
