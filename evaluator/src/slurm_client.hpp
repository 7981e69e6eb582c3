// kopt-bench --slurm: the evaluation runs on a Slurm node. Each --solution becomes one element of a
// job array; every element runs this same kopt-bench (judge and confinement included) on its node,
// and this process prints one KERNEL_EVAL line per candidate, with native_metrics.slurm
// {job_id, node, partition, gpu}, as each element finishes. A failed or cancelled element is a line
// with its error, never a gap. Ctrl-C, SIGTERM or the deadline cancels the whole array (scancel).
#pragma once
#include <string>
#include <vector>

#include "options.hpp"

namespace kopt::bench {

// The sbatch options as words, split the way a shell splits them (quotes and backslashes), with no
// expansion of any kind. Returns false with `error` set for an unterminated quote.
bool split_shell_words(const std::string& text, std::vector<std::string>* words, std::string* error);

// The sbatch options this client sets itself; a user's copy of one is refused with a clear message.
// Returns "" when `words` are acceptable, else the message.
std::string refuse_reserved_sbatch_options(const std::vector<std::string>& words);

// One shell word that a POSIX shell reads back as exactly `s`.
std::string shell_quote(const std::string& s);

// Runs the whole array and prints the lines. The exit status follows kopt-bench's: 0 when every
// candidate is correct, 1 when one is not (or its element failed), 2 for bad input, 130/143 when
// interrupted, 124 past the deadline.
int run_slurm(const Options& opt);

}  // namespace kopt::bench
