#include "zygote.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "proc.hpp"

extern char** environ;

namespace kopt::bench::zygote {
namespace {

constexpr size_t kMaxRequest = 64 * 1024;
UniqueFd g_sock;  // the judge's end; none when there is no zygote (closed at exit: the zygote then ends)

[[noreturn]] void die(const char* what) {
  // stderr is the runner's output pipe here: the judge shows it with the failure
  std::fprintf(stderr, "%s: %s: %s\n", kSetupFailed, what, std::strerror(errno));
  _exit(126);
}

// Joins every namespace of `holder` and takes its root (the sandbox's read-only tree). Runs in the
// process the zygote cloned, before the runner's code: descriptors here (and in serve's loop and
// fork_behind_mirror, which may _exit) are closed by hand, with no owner whose destructor would run.
// bubblewrap nests two user namespaces: the outer one owns the mounts and the other namespaces,
// the holder runs in the inner one (unprivileged, and as root with --uid 65534). Root has the
// capabilities to join the others from where it is; anyone else first joins the outer user
// namespace, which gives them. Either way the inner one comes last, after the root is taken.
void join(pid_t holder) {
  const std::string base = "/proc/" + std::to_string(holder);
  // Opened first: after the user and mount namespaces change, /proc is no longer the judge's.
  const char* kinds[] = {"mnt", "net", "ipc", "uts", "cgroup", "pid"};
  int fds[6];
  for (int i = 0; i < 6; ++i)
    if ((fds[i] = ::open((base + "/ns/" + kinds[i]).c_str(), O_RDONLY | O_CLOEXEC)) < 0) die("opening the sandbox's namespaces");
  const int inner = ::open((base + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC);
  const int root_fd = ::open((base + "/root").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (inner < 0 || root_fd < 0) die("opening the sandbox's user namespace and root");
  const int outer = ioctl(fds[0], NS_GET_USERNS);  // the mounts' owner
  if (outer < 0) die("finding the owner of the sandbox's mounts");
  struct stat in_st {}, out_st {};
  fstat(inner, &in_st);
  fstat(outer, &out_st);
  const bool nested = in_st.st_ino != out_st.st_ino || in_st.st_dev != out_st.st_dev;
  if (geteuid() != 0 && setns(outer, CLONE_NEWUSER) != 0) die("user (the mounts' owner)");
  for (int i = 0; i < 6; ++i) {
    if (setns(fds[i], 0) != 0) die(kinds[i]);
    ::close(fds[i]);
  }
  if (fchdir(root_fd) != 0 || chroot(".") != 0) die("entering the sandbox's root");
  if ((geteuid() == 0 || nested) && setns(inner, CLONE_NEWUSER) != 0) die("user");
  ::close(root_fd);
  ::close(inner);
  ::close(outer);
}

// In the process the zygote cloned (a child of the judge). Never returns.
[[noreturn]] void become_runner(Entry entry, const nlohmann::json& req, const int in[5], pid_t judge) {
  if (!die_with_parent(judge)) _exit(1);
  // fds: 0 /dev/null, 1+2 the output pipe, 3..6 the channel; nothing else (the zygote's socket).
  if (!place_fds(kNull, in[4], in[4], in, 4, true)) die("placing the runner's descriptors");
  const pid_t holder = req.value("holder", 0);
  if (holder > 0) join(holder);
  // The runner proper is one more fork: inside the PID namespace (setns moves only children), and
  // with glibc's own view of its thread id (the clone above bypassed glibc).
  const int forked = fork_behind_mirror(7);
  if (forked < 0) die("fork");
  // Inside a PID namespace the parent reads as 0: there only the death signal is set.
  if (forked == 0 && holder == 0) _exit(1);
  prctl(PR_SET_NAME, "kopt-runner");
  setsid();  // capabilities (those a user namespace grants, or root's) go in confine_self
  const std::string cwd = req.value("cwd", "");
  if (!cwd.empty() && chdir(cwd.c_str()) != 0) die("chdir");
  clearenv();
  for (const auto& e : req["env"]) {
    const std::string kv = e.get<std::string>();
    const auto eq = kv.find('=');
    if (eq != std::string::npos) setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  std::vector<std::string> args = req["argv"].get<std::vector<std::string>>();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::exit(entry(int(args.size()), argv.data()));
}

// Wipes the environment strings the judge started with (an agent's shell may hold keys there):
// the runners are forked from this memory.
void wipe_environment() {
  for (char** e = environ; e && *e; ++e) std::memset(*e, 0, std::strlen(*e));
  clearenv();
}

[[noreturn]] void serve(Entry entry, int sock, pid_t judge, void (*before_serving)()) {
  if (before_serving) before_serving();  // once, inherited by every runner forked below
  std::vector<char> buf(kMaxRequest);
  for (;;) {
    int fds[5] = {-1, -1, -1, -1, -1};
    int got = 0;
    const ssize_t n = receive_with_fds(sock, buf.data(), buf.size(), fds, 5, &got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(0);  // the judge is done
    int32_t reply = -EINVAL;
    nlohmann::json req = nlohmann::json::parse(buf.data(), buf.data() + n, nullptr, false);
    if (got == 5 && req.is_object() && req.contains("argv") && req.contains("env")) {
      // CLONE_PARENT: the runner is the judge's child, as an exec'd one would be.
      long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
      if (pid == 0) become_runner(entry, req, fds, judge);
      reply = pid > 0 ? int32_t(pid) : -errno;
    }
    for (int i = 0; i < std::min(got, 5); ++i) ::close(fds[i]);
    if (::send(sock, &reply, sizeof reply, MSG_NOSIGNAL) != sizeof reply) _exit(0);
  }
}

}  // namespace

ssize_t receive_with_fds(int sock, char* buf, size_t len, int* fds, int max, int* got) {
  iovec iov{buf, len};
  alignas(cmsghdr) char cbuf[CMSG_SPACE(8 * sizeof(int))];
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cbuf;
  m.msg_controllen = sizeof cbuf;
  const ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  *got = 0;
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const int all = int((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int passed[8];
      std::memcpy(passed, CMSG_DATA(c), sizeof(int) * size_t(std::min(all, 8)));
      for (int i = 0; i < std::min(all, 8); ++i) {
        if (*got < max) fds[(*got)++] = passed[i];
        else ::close(passed[i]);  // more than asked for: not kept open
      }
    }
  return n;
}

int32_t ask_with_fds(int sock, const std::string& request, const int* fds, int n, int timeout_ms) {
  iovec iov{const_cast<char*>(request.data()), request.size()};
  alignas(cmsghdr) char cbuf[CMSG_SPACE(8 * sizeof(int))]{};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cbuf;
  m.msg_controllen = CMSG_SPACE(size_t(n) * sizeof(int));
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(size_t(n) * sizeof(int));
  std::memcpy(CMSG_DATA(c), fds, size_t(n) * sizeof(int));
  int32_t reply = 0;
  pollfd p{sock, POLLIN, 0};
  errno = 0;
  if (sendmsg(sock, &m, MSG_NOSIGNAL) != ssize_t(request.size()) || ::poll(&p, 1, timeout_ms) != 1 ||
      ::recv(sock, &reply, sizeof reply, 0) != sizeof reply) {
    if (errno == 0) errno = ETIMEDOUT;
    return 0;
  }
  return reply;
}

[[noreturn]] void mirror(pid_t child) {
  int st = 0;
  while (waitpid(child, &st, 0) < 0)
    if (errno != EINTR) _exit(125);
  if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
  const int sig = WTERMSIG(st);
  struct rlimit no_core {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(sig, SIG_DFL);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, sig);
  sigprocmask(SIG_UNBLOCK, &s, nullptr);
  ::kill(getpid(), sig);
  _exit(128 + sig);
}

int fork_behind_mirror(int held) {
  const pid_t me = getpid();
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child > 0) {
    for (int fd = 0; fd < held; ++fd) ::close(fd);  // the pipes see EOF when the child ends
    mirror(child);
  }
  return die_with_parent(me) ? 1 : 0;
}

void start(Entry runner_main, void (*before_serving)()) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return;
  UniqueFd ours(sv[0]), theirs(sv[1]);
  const pid_t judge = getpid();
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {  // never returns: the owners above are the parent's business
    if (!die_with_parent(judge)) _exit(0);
    prctl(PR_SET_NAME, "kopt-zygote");
    // stdin /dev/null, not the judge's (its job arrives there); the channel at 3; nothing else.
    if (!place_fds(kNull, kKeep, kKeep, &sv[1], 1, true)) _exit(0);
    wipe_environment();
    serve(runner_main, 3, judge, before_serving);
  }
  g_sock = std::move(ours);
}

bool available() { return bool(g_sock); }

pid_t spawn(const Launch& l, const std::array<int, 5>& fds, std::string* why) {
  if (!g_sock) {
    *why = "no zygote";
    return -1;
  }
  const std::string req = nlohmann::json{{"holder", l.holder}, {"argv", l.argv}, {"env", l.env}, {"cwd", l.cwd}}.dump();
  if (req.size() > kMaxRequest) {
    *why = "request too large";
    return -1;
  }
  const int32_t reply = ask_with_fds(g_sock.get(), req, fds.data(), 5, 5000);
  if (reply == 0) {
    *why = std::string("the zygote did not answer: ") + std::strerror(errno);
    g_sock.reset();
    return -1;
  }
  if (reply <= 0) {
    *why = std::string("the zygote could not fork: ") + std::strerror(-reply);
    return -1;
  }
  return pid_t(reply);
}

}  // namespace kopt::bench::zygote
