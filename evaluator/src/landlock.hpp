// Landlock for a runner process, applied after confine_self() (it needs no_new_privs) and before
// any candidate code is loaded: the filesystem shrinks to what a kernel run needs, TCP bind/connect
// are refused (ABI >= 4), and signals and abstract UNIX sockets cannot leave the Landlock domain
// (ABI >= 6). It holds with or without bubblewrap's mount namespace (the two layers add up).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

struct LandlockPlan {
  std::vector<std::string> read_exec_dirs;   // system paths and the folders of loaded libraries
  // Where libraries loaded later come from (read and execute; reported by name): LibTorch's package,
  // with CUDA the pip nvidia packages beside it and the CUDA toolkit (KOPT_CFG_LIBRARY_DIRS), and
  // every folder of LD_LIBRARY_PATH (libcupti, dlopened after the restriction, is found there).
  std::vector<std::string> library_dirs;
  std::vector<std::string> read_dirs;        // e.g. /sys
  std::vector<std::string> read_files;       // single files: the op (its .so or .pt), /proc files
  std::vector<std::string> device_dirs;      // /dev: read, write and (ABI >= 5) device ioctls
  std::vector<std::string> own_proc;         // /proc/self: the process's own entries only
  std::string scratch;                       // the one writable folder
};

// The plan for this process: system paths, the folders of the libraries mapped now, the library
// folders of the build and of LD_LIBRARY_PATH, the op file, the scratch folder and `more` (read and
// execute: a Python candidate's interpreter folders and build output).
LandlockPlan runner_landlock_plan(const std::string& op_path, const std::string& scratch,
                                  const std::vector<std::string>& more = {});

// The best ABI the kernel offers (0: none). Pure query, no side effect.
int landlock_abi();

// Applies the plan to this thread and every thread it starts later. Returns what was enforced
// (abi, filesystem, tcp, scoped, rules, threads) or {abi, problem} when it could not be.
nlohmann::json apply_landlock(const LandlockPlan& plan);

}  // namespace kopt::bench
