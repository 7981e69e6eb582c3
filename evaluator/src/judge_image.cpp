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
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != service) _exit(1);
  setpgid(0, 0);
  const int hin = fcntl(in, F_DUPFD_CLOEXEC, 100);
  const int hlog = fcntl(log, F_DUPFD_CLOEXEC, 100);
  if (hin < 0 || hlog < 0) _exit(125);
  dup2(hin, 0);
  dup2(hlog, 1);
  dup2(hlog, 2);
  for (int fd = 3; fd < 1024; ++fd) ::close(fd);  // the image's channel included
  // The judge proper is one more fork, through glibc (its thread state is the image's after the clone).
  const pid_t me = getpid();
  const pid_t j = fork();
  if (j < 0) _exit(125);
  if (j > 0) {
    for (int fd = 0; fd < 3; ++fd) ::close(fd);
    zygote::mirror(j);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != me) _exit(1);
  prctl(PR_SET_NAME, "kopt-judge");
  std::exit(judge());
}

}  // namespace

int serve(pid_t service, int channel, int (*judge)()) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != service) return 0;
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
  const std::string me = std::to_string(getpid());
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    *why = std::string("fork: ") + std::strerror(errno);
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    setpgid(0, 0);  // not in the group a cancel kills
    const int nul = ::open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    // Its own output (nothing, unless it fails): a file when one is named, else our stderr.
    const int out = log_path.empty() ? 2 : ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    dup2(sv[1], 3);  // inherited (dup2 clears close-on-exec); the only way in
    execl(worker_exe.c_str(), worker_exe.c_str(), "--image", me.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(sv[1]);
  pid_ = pid;
  sock_ = sv[0];
  return true;
}

pid_t Image::fork_judge(int stdin_fd, int log_fd, std::string* why) {
  if (pid_ <= 0) {
    *why = "no warm image";
    return -1;
  }
  const int fds[2] = {stdin_fd, log_fd};
  // The first request may wait for the image's LibTorch start (it was started with the service).
  const int32_t reply = zygote::ask_with_fds(sock_, kForkJudge, fds, 2, 30000);
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
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

}  // namespace kopt::bench::judge_image
