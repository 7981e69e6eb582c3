// The runner's fast start. A LibTorch process spends 0.5–0.8 s of CPU in LibTorch's own start
// (operator registration) before main; the judge has paid it already. So the judge forks a copy of
// itself first thing in main — before it reads its job, draws a seed or computes a reference
// output — and that copy (the zygote) forks each runner on request. A runner forked this way:
//   - is a child of the judge (CLONE_PARENT), which waits on it and kills it as before;
//   - joins the namespaces of a bubblewrap sandbox that holds nothing but a `sleep` (user, mount,
//     PID, net, IPC, UTS, cgroup), takes its root, forks once more so it is inside the PID
//     namespace, drops every capability, starts a new session and dies with its parent;
//   - then runs the runner's own main (confinement, Landlock, seccomp, the op) unchanged.
// Without a holder (no bubblewrap, or --no-namespaces) it is the process-level runner: a new
// session and a parent-death signal. Whatever fails, the judge falls back to exec'ing the runner.
#pragma once
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kopt::bench::zygote {

using Entry = int (*)(int argc, char** argv);

// Forks the zygote. Call once, first thing in the judge's main: what the judge holds at this
// moment is what every runner will hold.
// before_serving: run once in the zygote before it forks any runner (the judge's dispatcher
// snapshot, guards.hpp), so that every runner inherits what it made.
void start(Entry runner_main, void (*before_serving)() = nullptr);

struct Launch {
  pid_t holder = 0;               // a process inside the sandbox whose namespaces to join; 0: none
  std::vector<std::string> argv;  // the runner's argv (argv[0] included)
  std::vector<std::string> env;   // its whole environment
  std::string cwd;                // its working directory (inside the sandbox when holder != 0)
};

// fds: commands (read end), replies (write end), input region, output region, the runner's
// stdout+stderr (write end); they become 3, 4, 5, 6 and 1+2 in the runner. Returns the pid of the
// runner's process (a child of the caller), or -1 with *why set.
pid_t spawn(const Launch& l, const std::array<int, 5>& fds, std::string* why);

bool available();

// The request/reply pair both the zygote and the warm judge image (judge_image.hpp) speak over their
// SOCK_SEQPACKET channel: one message with up to 8 file descriptors, answered by one int32.
// ask_with_fds: the reply, or 0 with errno set when there was none within timeout_ms.
int32_t ask_with_fds(int sock, const std::string& request, const int* fds, int n, int timeout_ms);
// receive_with_fds: the message's length (0 at the end of the channel, < 0 on error); its first `max`
// descriptors in fds (count in *got), any others closed.
ssize_t receive_with_fds(int sock, char* buf, size_t len, int* fds, int max, int* got);

// Waits for `child` and ends this process the same way (its exit code, or its signal without a core
// dump), so whoever waits on this process reads the child's status as if it had waited on the child.
[[noreturn]] void mirror(pid_t child);
// One more fork, with this process left behind as the child's mirror (it first closes its descriptors
// below `held`, so pipes see EOF when the child ends). Returns in the child only: 1, or 0 when its
// parent could not be confirmed (gone, or read as 0 from inside a PID namespace; the death signal is
// set either way); -1 in the caller when fork failed.
int fork_behind_mirror(int held);

// How a forked runner that could not enter the sandbox starts its last words (on its output pipe):
// the judge then execs the runner instead.
inline constexpr const char* kSetupFailed = "kopt-bench sandbox setup failed";

}  // namespace kopt::bench::zygote
