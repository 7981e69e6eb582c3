// How a runner is started: the one description both sides read. The judge fills it (worker.cpp,
// remote_op.cpp), the sandbox passes it on unchanged (argv; the four channel descriptors at fds 3-6
// in this order; the scratch folder in the environment), and the runner reads it back
// (runner_main.cpp). Torch-free, so the sandbox (kopt_bench_base) spells it the same way.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kopt::bench {

struct RunnerLaunch {
  // The channel's descriptors in the runner, in the order the launcher passes them.
  static constexpr int kCommandsFd = 3, kRepliesFd = 4, kInputsFd = 5, kOutputsFd = 6;
  // The runner's writable folder as it sees it (/tmp/scratch inside bubblewrap).
  static constexpr const char* kScratchEnv = "KOPT_RUNNER_SCRATCH";

  enum class Mode { Candidate, RefOp, RefScript, Python, RefPython };
  Mode mode = Mode::Candidate;
  std::string op;  // what it loads: a library (.so), a TorchScript module (.pt), a Python file
  // What the mode needs beside the op, one field each: a library's namespace (Candidate, RefOp); a
  // TorchScript module's precision and training mode (RefScript); a Python op's launch file, written
  // by its build stage (Python, RefPython).
  std::string ns, precision, launch_file;
  bool train = false;
  bool cuda = false;

  bool is_candidate() const { return mode == Mode::Candidate || mode == Mode::Python; }
  bool is_python() const { return mode == Mode::Python || mode == Mode::RefPython; }
  const char* mode_name() const;

  // argv as exec'd: EXE MODE OP DETAIL DEVICE (DETAIL: the namespace, PRECISION[/train] or the
  // launch file, by mode).
  std::vector<std::string> argv(const std::string& exe) const;
  // The runner's reading of its argv; nullopt (and *why) when it is not one.
  static std::optional<RunnerLaunch> from_argv(int argc, char** argv, std::string* why);
};

}  // namespace kopt::bench
