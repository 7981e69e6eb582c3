// kernel_evaluate (DV-13): the plugin runs kopt-bench itself and returns its verdict as the tool result.
// This file holds the two decisions about such a run: which arguments are acceptable (and the kopt-bench
// command line they become), and what the tool result says. lib/evaluate.mjs only moves bytes.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/json.hpp"

namespace kopt {

// One file the evaluation reads: its role ("solution" | "reference" | "inputs"), the path as the agent
// gave it, and where it really is (symbolic links resolved, inside the working directory).
struct EvaluateFile {
  std::string role, given, real;
};

struct EvaluateRequest {
  std::vector<EvaluateFile> files;  // the solution files in order, then the reference, then the input spec
  std::vector<std::string> argv;    // kopt-bench's arguments (the program not included)
  std::string artifact;             // the name the result reports (artifact_path, else the first solution path)
  bool slurm = false;               // where: "slurm" (kopt-bench --slurm, run as its own process)
};

struct EvaluateCheck {
  std::optional<EvaluateRequest> request;
  std::string error;  // why nothing runs (one line; names the argument)
};

// The options an agent may choose (each a kopt-bench option; docs/evaluator.md lists which lower trust).
const std::vector<std::string>& evaluate_option_names();

// Checks kernel_evaluate's arguments against the session's working directory `cwd` (absolute):
// solution (a path or a list of 1..32 paths), reference, inputs (paths), artifact_path?, options? (a record
// of evaluate_option_names() keys), where? ("local" | "slurm"), slurm_options? (a string, with where
// "slurm"). Every path must name an existing regular file inside cwd once symbolic links are resolved
// (options.baseline: inside cwd, may not exist yet). Any other key, or a value of the wrong type, is an
// error; nothing about the run is decided anywhere else.
EvaluateCheck check_evaluate_args(const json& args, std::string_view cwd);
// The same from JSON text (not JSON, or nested too deep: an error).
EvaluateCheck check_evaluate_args_text(std::string_view args_json, std::string_view cwd);

// What the tool result says. `in`: {artifact, output (kopt-bench's stdout), code (its exit status, or
// null), sources {solution: [{path, sha256}], reference, inputs}, evaluationId, cancelled?, failure?
// (why kopt-bench gave no result: not installed, killed, the files changed while it ran)}.
// The result is one JSON record: the last KERNEL_EVAL payload of the output (or, without one, a record
// that says the evaluator failed and why), marked `measured_by` = the plugin id, with `sources`,
// `evaluation_id` and `report` (the output's other lines, bounded). A cancelled run says "cancelled".
std::string evaluate_result(const json& in);

}  // namespace kopt
