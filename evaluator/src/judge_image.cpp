#include "judge_image.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "proc.hpp"
#include "zygote.hpp"

namespace kopt::bench::judge_image {
namespace {

const std::string kForkJudge = "judge";

// The raw clone below copies only the calling thread and skips glibc's fork handlers: safe only while
// the image has no other thread (it has none once LibTorch has loaded; checked every time).
bool single_threaded() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n == 1;
}

// In the process the image cloned (the service's child). Never returns.
[[noreturn]] void become_judge(int in, int log, pid_t service, int (*judge)()) {
  if (!die_with_parent(service)) _exit(1);
  setpgid(0, 0);
  if (!place_fds(in, log, log, nullptr, 0, true)) _exit(125);  // closes the image's channel too
  // The judge proper is one more fork, through glibc (its thread state is the image's after the clone).
  const int forked = zygote::fork_behind_mirror(3);
  if (forked < 0) _exit(125);
  if (forked == 0) _exit(1);
  prctl(PR_SET_NAME, "kopt-judge");
  std::exit(judge());
}

}  // namespace

int serve(pid_t service, int channel, int (*judge)()) {
  if (!die_with_parent(service)) return 0;
  prctl(PR_SET_NAME, "kopt-judge-img");
  for (;;) {
    char buf[64];
    int fds[2] = {-1, -1};
    int got = 0;
    const ssize_t n = zygote::receive_with_fds(channel, buf, sizeof buf, fds, 2, &got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;  // the service is gone, or done with us
    int32_t reply = -EINVAL;
    if (got == 2 && std::string(buf, size_t(n)) == kForkJudge) {
      if (!single_threaded()) {
        reply = -EAGAIN;
      } else {
        // CLONE_PARENT: the judge is the service's child, as an exec'd kopt-bench-worker would be.
        const long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
        if (pid == 0) become_judge(fds[0], fds[1], service, judge);
        reply = pid > 0 ? int32_t(pid) : -errno;
      }
    }
    for (int i = 0; i < got; ++i) ::close(fds[i]);
    if (::send(channel, &reply, sizeof reply, MSG_NOSIGNAL) != sizeof reply) return 0;
  }
}

Image::~Image() { stop(); }

bool Image::start(const std::string& worker_exe, const std::string& log_path, std::string* why) {
  stop();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    *why = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  UniqueFd ours(sv[0]), its(sv[1]);
  const std::string me = std::to_string(getpid());
  // Its own output (nothing, unless it fails): a file when one is named, else our stderr.
  // (our stderr, fd 2, is borrowed, not owned)
  UniqueFd log(log_path.empty() ? -1 : open_log(log_path, 0600));
  const int out = log_path.empty() ? 2 : log.get();
  SpawnOptions o;
  o.argv = {worker_exe, "--image", me};
  o.out = o.err = out >= 0 ? out : kKeep;
  o.pass = {its.get()};                         // fd 3: the only way in
  o.group = SpawnOptions::Group::kOwn;          // not in the group a cancel kills
  o.die_with_parent = true;
  const pid_t pid = spawn(o);
  const int spawn_errno = errno;
  log.reset();
  its.reset();  // the image's end: ours closed either way
  if (pid < 0) {
    *why = std::string("fork: ") + std::strerror(spawn_errno);
    return false;  // ours closed by its owner
  }
  pid_ = pid;
  sock_ = std::move(ours);
  return true;
}

pid_t Image::fork_judge(int stdin_fd, int log_fd, std::string* why) {
  if (pid_ <= 0) {
    *why = "no warm image";
    return -1;
  }
  const int fds[2] = {stdin_fd, log_fd};
  // The first request may wait for the image's LibTorch start (it was started with the service).
  const int32_t reply = zygote::ask_with_fds(sock_.get(), kForkJudge, fds, 2, 30000);
  if (reply == 0) {
    *why = std::string("the warm image did not answer (") + std::strerror(errno) + ")";
    stop();
    return -1;
  }
  if (reply <= 0) {
    *why = reply == -EAGAIN ? std::string("the warm image is not single-threaded")
                            : std::string("the warm image could not fork: ") + std::strerror(-reply);
    stop();
    return -1;
  }
  setpgid(reply, reply);  // as the judge does itself, so a kill of its group never races that
  return pid_t(reply);
}

void Image::stop() {
  sock_.reset();
  kill_and_reap(pid_, false, -1);
  pid_ = -1;
}

}  // namespace kopt::bench::judge_image
