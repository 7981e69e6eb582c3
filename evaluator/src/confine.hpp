// What a runner process does to itself before any candidate code is loaded: no capabilities,
// no_new_privs, no core dumps, and a seccomp filter (libseccomp) that refuses the syscalls a kernel never needs and that
// reach other processes: signals to anyone but itself, ptrace, process_vm_*, userfaultfd, pidfd_*,
// kcmp, bpf, keyring calls, mount/namespace changes. Applied to every thread (TSYNC).
#pragma once
#include <string>

namespace kopt::bench {

// Returns "" on success, else what could not be applied (the caller reports it as weaker isolation).
std::string confine_self(bool* seccomp_applied);

}  // namespace kopt::bench
