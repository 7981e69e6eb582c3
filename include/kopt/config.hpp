// Routing configuration of the projection (spec ): which tool names mean what.
#pragma once
#include <string>
#include <vector>

#include "kopt/json.hpp"

namespace kopt {

struct ProjectionConfig {
  std::vector<std::string> benchTools{"kernel_evaluate"};
  std::vector<std::string> profileTools{"kernel_profile"};
  std::vector<std::string> profileCommands{"ncu",   "nv-nsight-cu-cli", "nsys",      "nvprof",  "rocprof",
                                           "rocprofv2", "rocprofv3",    "omniperf",  "vtune",   "perf",
                                           "xctrace",   "instruments",  "sample"};
  std::vector<std::string> finalizeTools{"run_finalize", "kernel_finalize"};
  std::vector<std::string> changeTools{"write", "edit"};
  std::vector<std::string> shellTools{"bash"};
  std::vector<std::string> jobTools{"job_output"};

  // Overrides the defaults key by key from a record (unknown keys ignored; plan/env names are fixed).
  // Returns an error message for a key of the wrong type, else empty.
  std::string apply_json(const json& overrides);
  json to_json() const;
};

inline constexpr const char* kPlanTool = "kernel_plan";
inline constexpr const char* kEnvTool = "kernel_env";

}  // namespace kopt
