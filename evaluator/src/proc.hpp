// Child processes, in one place: the fork/exec primitive every exec'd child goes through (spawn), the
// steps a freshly forked child takes before it runs anything (die_with_parent, place_fds), the owner of
// a started child (Child), how one ends (kill_and_reap, reap_all_children) and how its end reads
// (ProcStatus, describe_signal). The commands kopt-bench runs (compilers, the judge, scancel) use
// start_process/wait_process/run_process: output in a file, a timeout, the whole process group killed.
// The sandbox (sandbox.cpp), the zygote, the warm judge image and sbatch build on the same pieces.
// UniqueFd: the owner of a descriptor, for the judge's side and the runner's alike.
#pragma once
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

namespace kopt::bench {

// An owned file descriptor: closed when dropped or reset. close() is called once and not retried on
// EINTR (on Linux the descriptor is released either way; a retry could close one that another
// thread has just been given). Not for code between fork and exec in the child (place_fds, the
// zygote's child): that code closes raw descriptors itself and runs no destructors.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // The descriptor, no longer owned (-1 when none).
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the one owned (if any) and owns `fd` instead.
  void reset(int fd = -1) {
    const int old = fd_;
    fd_ = fd;
    if (old >= 0) ::close(old);
  }

 private:
  int fd_ = -1;
};

// A close-on-exec pipe, both ends owned; false (both left empty) when pipe2 fails.
bool open_pipe(UniqueFd* read_end, UniqueFd* write_end);

struct ProcStatus {
  bool started = false;
  bool exited = false;   // exited normally (code valid)
  int code = -1;
  int signal = 0;        // killed by this signal
  bool timed_out = false;
  double seconds = 0;
  std::string describe() const;  // "exit 0", "killed by SIGSEGV (Segmentation fault)", "timed out after 3.0 s"
};

// "SIGSEGV (Segmentation fault)"
std::string describe_signal(int sig);

// --- steps for a child between fork and exec (async-signal-safe: no allocation) ---
// SIGKILL when `parent` ends; false when it has ended already (the child then leaves).
bool die_with_parent(pid_t parent);
// Descriptors for a child: kNull (/dev/null), kKeep (as inherited) or a descriptor.
inline constexpr int kNull = -1;
inline constexpr int kKeep = -2;
// Puts in/out/err at 0/1/2 and pass[i] at 3+i (each lifted above them first, so no placement
// overwrites a descriptor still to be placed); close_others: closes every other descriptor below
// 1024. False when a descriptor could not be lifted. Runs in the forked child: raw close()/dup2 only,
// no UniqueFd (no allocation, no destructors there).
bool place_fds(int in, int out, int err, const int* pass, int n, bool close_others);

// --- the fork/exec primitive ---
struct SpawnOptions {
  std::vector<std::string> argv;
  bool search_path = false;              // argv[0] looked up in PATH
  bool own_env = false;                  // env is the whole environment; otherwise ours plus env
  std::vector<std::string> env;          // "NAME=value"
  int in = kNull, out = kKeep, err = kKeep;
  std::vector<int> pass;                 // become fds 3, 4, ...
  bool close_others = false;             // nothing else open across exec (CLOEXEC aside)
  enum class Group { kOurs, kOwn, kSession } group = Group::kOurs;  // kOwn: setpgid from both sides
  bool die_with_parent = false;
};
// The child's pid, or -1 when fork failed. A failed exec prints one line on the child's stderr and
// exits 127.
pid_t spawn(const SpawnOptions& o);

// Opens a child's log for writing (truncated, close-on-exec; "" = /dev/null); -1 when it cannot.
int open_log(const std::string& path, mode_t mode = 0644);

// A started child in a process group of its own, owned: when it is dropped without having been
// waited for (wait_process), it is killed with its group and reaped.
class Child {
 public:
  Child() = default;
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() { end(); }
  Child(Child&& o) noexcept : pid_(o.release()) {}
  Child& operator=(Child&& o) noexcept {
    if (this != &o) {
      end();
      pid_ = o.release();
    }
    return *this;
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }
  pid_t release() {
    const pid_t p = pid_;
    pid_ = -1;
    return p;
  }
  // SIGKILL to its group and itself, then reaped; true when there was one.
  bool end();

 private:
  pid_t pid_ = -1;
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

// SIGKILL a child (group: its process group too) and wait for it, for at most max_seconds (< 0: for
// as long as it takes). Returns the wait status, or -1 (none, or not reaped in time).
// The bound differs by caller for a reason: a runner stuck in the GPU driver must not hang the judge
// (bounded; reap_all_children collects it later), while the judge and the commands it runs are waited
// for until they are gone (no zombie outlives the wait).
int kill_and_reap(pid_t pid, bool group = false, double max_seconds = 2.0);
// With PR_SET_CHILD_SUBREAPER set, orphaned descendants become our children: kill and reap every
// child we still have, so nothing a candidate started is alive when we print (bounded wait). `spare`:
// one child that is not the evaluation's and stays (kopt-bench --serve's warm judge image).
void reap_all_children(double max_seconds, pid_t spare = 0);

// Cancellation (kopt-bench --serve, which the plugin stops with SIGTERM): every process group started
// here is recorded while it runs; cancel_all() — async-signal-safe, for a signal handler — kills them
// all with SIGKILL, and until reset_cancel() no new process starts (start_process gives pid -1).
void track_group(pid_t pgid);
void untrack_group(pid_t pgid);
void cancel_all();
bool cancel_requested();
void reset_cancel();

std::string read_file(const std::string& path);                 // "" when unreadable
// Replaces `path` with `body` whole: written to a temporary file beside it (named for this process
// and a draw), synced first when `sync`, then renamed over it, so a reader sees the old file or the
// new one, never part of either. "" when done, else what failed (the temporary removed).
std::string replace_file(const std::string& path, std::string_view body, mode_t mode, bool sync = false);
std::string tail_of(const std::string& text, size_t max_chars);  // the last max_chars characters
std::string self_exe();                                          // /proc/self/exe resolved
void remove_tree(const std::string& path);                       // a folder and all below it (no symlink followed)

}  // namespace kopt::bench
