#include "confine.hpp"

#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#ifdef KOPT_HAVE_SECCOMP
#include <seccomp.h>
#endif

namespace kopt::bench {

namespace {

// Every capability gone: root's when the runner runs as root without namespaces, and the full set
// a user namespace grants to a runner that joined one (bubblewrap does the same for its child).
std::string drop_capabilities() {
  for (int c = 0; c <= 63; ++c) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  if (syscall(SYS_capset, &h, d) != 0) return std::string("capabilities: ") + std::strerror(errno) + "; ";
  return "";
}

}  // namespace

std::string confine_self(bool* seccomp_applied) {
  *seccomp_applied = false;
  std::string problems = drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) problems += std::string("no_new_privs: ") + std::strerror(errno) + "; ";
  // Dumpable, so that the judge (its ancestor) can read the outputs out of this process's memory
  // (process_vm_readv) whatever uid the sandbox gave it; nothing here can ptrace it (seccomp below,
  // and the sandbox's PID namespace); no core dumps.
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  struct rlimit no_core {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
#ifdef KOPT_HAVE_SECCOMP
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return problems + "seccomp_init failed";
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  const auto self = scmp_datum_t(getpid());
  int rc = 0;
  for (int sc : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(userfaultfd),
                 SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(pidfd_getfd), SCMP_SYS(kcmp),
                 SCMP_SYS(bpf), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(mount),
                 SCMP_SYS(umount2), SCMP_SYS(setns), SCMP_SYS(unshare), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
                 SCMP_SYS(tkill), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at)})
    rc |= seccomp_rule_add(ctx, deny, sc, 0);
  // No process of its own: every cycle it spends is a thread of this process, which the judge
  // stops between calls and counts from outside (remote_op.hpp). Threads are clones with
  // CLONE_THREAD; clone3 (whose flags seccomp cannot read) answers ENOSYS, so glibc falls back to
  // clone; fork and vfork are refused.
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(fork), 0);
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(vfork), 0);
  // It stays readable by the judge, and no io_uring (its workers would run outside the threads
  // the judge stops).
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_DUMPABLE));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(io_uring_setup), 0);
  // Signals only to itself (raise/abort use tgkill(getpid(), ...)).
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(rt_sigqueueinfo), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(rt_tgsigqueueinfo), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return problems + "seccomp filter not loaded (" + std::strerror(-rc) + ")";
  *seccomp_applied = true;
#else
  problems += "built without libseccomp; ";
#endif
  return problems;
}

}  // namespace kopt::bench
