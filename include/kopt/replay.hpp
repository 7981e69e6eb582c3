// Replay runner (spec H-7): re-runs a recorded benchmark command for the finalize re-measurement.
// `bash -c <command>` in the given directory with the server's environment, under a helper that is a
// child subreaper: on timeout or cancel every descendant (also ones that setsid or double-fork) gets
// SIGTERM, then SIGKILL, and when bash exits everything it left behind is killed (after 0.5 s). The
// command's data size is capped (RLIMIT_DATA: counts what a program allocates, not the address space
// CUDA reserves without backing, which RLIMIT_AS would wrongly count). Output (stdout and
// stderr interleaved) is capped, keeping the head and the tail, since the contract line usually
// comes last.
#pragma once
#include <atomic>
#include <cstddef>
#include <string>

namespace kopt {

struct ReplayOptions {
  std::string command;
  std::string cwd;
  double timeout_sec = 900;             // > 0
  std::size_t head_cap = 16 * 1024;     // bytes kept from the start
  std::size_t tail_cap = 240 * 1024;    // bytes kept from the end
  double kill_grace_sec = 2;            // SIGTERM -> SIGKILL
  std::size_t memory_limit_bytes = std::size_t{8} << 30;  // RLIMIT_DATA; 0 = none
  const std::atomic<bool>* cancel = nullptr;  // polled; true = stop now (treated like a timeout)
};

struct ReplayResult {
  bool started = false;      // the child process ran
  std::string output;        // capped output; a marker line replaces the elided middle
  bool truncated = false;
  std::size_t output_bytes = 0;  // total bytes the command wrote
  int exit_code = -1;        // exit status when it exited normally, else -1
  int term_signal = 0;       // the signal that ended it, else 0
  bool timed_out = false;
  bool cancelled = false;
  bool memory_limit_hit = false;  // failed and printed an allocation failure under the cap
  std::string failure;       // why the replay is not a measurement (empty when it ran to an exit 0)
  double wall_ms = 0;
  std::string slurm_path;  // the Slurm path the command re-submits through (kopt::slurm_path), "" when none
};

// Runs the command and waits for it (blocking; call it off the event loop). Never throws.
ReplayResult run_replay(const ReplayOptions& options);

}  // namespace kopt
