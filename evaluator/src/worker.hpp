// The evaluation worker: a separate process that loads the reference and the candidate, checks,
// times and writes its findings as JSON. The parent never runs candidate code itself.
#pragma once
#include <string>

namespace kopt::bench {

// job_path: JSON written by the parent. Writes <result_path> (and <stage_path> as soon as the
// reference has been timed). Returns the process exit code.
int worker_main(const std::string& job_path);

}  // namespace kopt::bench
