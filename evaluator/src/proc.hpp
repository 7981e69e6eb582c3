// Child processes: run a command with its output in a file, a timeout, and its whole process
// group killed when time is up.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace kopt::bench {

struct ProcStatus {
  bool started = false;
  bool exited = false;   // exited normally (code valid)
  int code = -1;
  int signal = 0;        // killed by this signal
  bool timed_out = false;
  double seconds = 0;
  std::string describe() const;  // "exit 0", "killed by SIGSEGV (Segmentation fault)", "timed out after 3.0 s"
};

// A started child, in a process group of its own.
struct Child {
  pid_t pid = -1;
};

// argv[0] is looked up in PATH. stdout and stderr go to `log_path` (truncated first; "" = /dev/null);
// stdin is `stdin_fd` (-1: /dev/null). `extra_env` entries are "NAME=value".
Child start_process(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::vector<std::string>& extra_env = {}, int stdin_fd = -1);
// Waits for the child (timeout_s counted from this call; <= 0: none), then kills what is left of
// its process group. A timed-out child is killed with its group.
ProcStatus wait_process(Child& c, double timeout_s);
// start_process + wait_process.
ProcStatus run_process(const std::vector<std::string>& argv, const std::string& log_path,
                       double timeout_s, const std::vector<std::string>& extra_env = {});

// Cancellation (kopt-bench --serve, which the plugin stops with SIGTERM): every process group started
// here is recorded while it runs; cancel_all() — async-signal-safe, for a signal handler — kills them
// all with SIGKILL, and until reset_cancel() no new process starts (start_process gives pid -1).
void track_group(pid_t pgid);
void untrack_group(pid_t pgid);
void cancel_all();
bool cancel_requested();
void reset_cancel();

std::string read_file(const std::string& path);                 // "" when unreadable
std::string tail_of(const std::string& text, size_t max_chars);  // the last max_chars characters
std::string self_exe();                                           // /proc/self/exe resolved

}  // namespace kopt::bench
