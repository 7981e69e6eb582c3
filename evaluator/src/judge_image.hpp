// The warm judge (kopt-bench --serve, which the plugin starts; docs/evaluator.md "常驻裁判"). A judge
// process spends 0.55–0.70 s in LibTorch's start before its main. The image is a kopt-bench-worker that
// has paid it and then does nothing but wait: it never reads a job, draws a seed or loads a reference.
// For each evaluation it forks a fresh judge from that state:
//   - the fork is a child of the service (CLONE_PARENT), in a process group of its own, dying with it;
//   - that child forks once more (glibc's own fork, as the zygote's runners do) and mirrors how the
//     judge ends, so the service waits on it, times it out and kills its group exactly as it does an
//     exec'd kopt-bench-worker;
//   - the judge then runs as an exec'd one does: its zygote first, then the job's path from its stdin.
// No state crosses from one evaluation to the next: each judge starts from the image, which never held
// one. The channel between service and image is an inherited socket pair, never a named socket. The
// image ends with the service (parent-death signal, and end of the channel).
#pragma once
#include <sys/types.h>

#include <string>

#include "proc.hpp"  // UniqueFd

namespace kopt::bench::judge_image {

// The image's side, in kopt-bench-worker --image SERVICE_PID (fd 3: its end of the channel). `judge`
// is the judge's work once its process exists; it returns the exit code. Returns when the channel ends.
int serve(pid_t service, int channel, int (*judge)());

// The service's side.
class Image {
 public:
  Image() = default;
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  // Starts `worker_exe --image <our pid>` (its output to `log_path`, or to our stderr when ""); false
  // with *why when it cannot.
  bool start(const std::string& worker_exe, const std::string& log_path, std::string* why);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // A fresh judge forked from the image, with `stdin_fd` as its stdin and `log_fd` as its stdout and
  // stderr: the pid of our child (its process group), or -1 with *why (the image is then ended).
  pid_t fork_judge(int stdin_fd, int log_fd, std::string* why);
  // Ends the image (SIGKILL) and reaps it.
  void stop();

 private:
  pid_t pid_ = -1;
  UniqueFd sock_;
};

}  // namespace kopt::bench::judge_image
