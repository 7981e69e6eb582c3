#include "landlock.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "kopt_bench_config.hpp"
#include "proc.hpp"  // UniqueFd

namespace kopt::bench {
namespace {

// Debian 12's <linux/landlock.h> stops at ABI 2; the kernel may offer more. The values below are
// the kernel's UAPI (include/uapi/linux/landlock.h), stable by design.
constexpr uint64_t kFsExecute = 1ULL << 0, kFsWriteFile = 1ULL << 1, kFsReadFile = 1ULL << 2, kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr uint64_t kFsRefer = 1ULL << 13;       // ABI 2
constexpr uint64_t kFsTruncate = 1ULL << 14;    // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;    // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;         // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;    // ABI 6
constexpr uint32_t kRulePathBeneath = 1;

struct RulesetAttr {
  uint64_t handled_access_fs = 0, handled_access_net = 0, scoped = 0;
};
struct __attribute__((packed)) PathBeneath {
  uint64_t allowed_access;
  int32_t parent_fd;
};

uint64_t fs_rights(int abi) {
  uint64_t r = kFsAbi1;
  if (abi >= 2) r |= kFsRefer;
  if (abi >= 3) r |= kFsTruncate;
  if (abi >= 5) r |= kFsIoctlDev;
  return r;
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::size_t threads_now() {
  std::size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

}  // namespace

int landlock_abi() {
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : int(v);
}

LandlockPlan runner_landlock_plan(const std::string& op_path, const std::string& scratch,
                                  const std::vector<std::string>& more) {
  LandlockPlan p;
  p.read_exec_dirs = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt"};
  // The folders of the libraries mapped now (LibTorch's, wherever it lives): what they load later
  // (CUDA's lazily opened libraries, for one) sits beside them.
  std::set<std::string> dirs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.find(".so") == std::string::npos) continue;
    dirs.insert(path.substr(0, path.find_last_of('/')));
  }
  for (const auto& d : dirs) p.read_exec_dirs.push_back(d);
  auto add_list = [&](const std::string& list, char sep) {
    std::stringstream ss(list);
    std::string d;
    while (std::getline(ss, d, sep))
      if (!d.empty() && d[0] == '/' && std::find(p.library_dirs.begin(), p.library_dirs.end(), d) == p.library_dirs.end())
        p.library_dirs.push_back(d);
  };
  add_list(KOPT_CFG_LIBRARY_DIRS, ';');
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) add_list(ld, ':');
  p.read_dirs = {"/sys"};
  p.device_dirs = {"/dev"};
  // /proc: this process's own entries and a few system-wide files, never the list of processes.
  p.own_proc = {"/proc/self"};
  p.read_files = {"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/filesystems"};
  p.read_dirs.push_back("/proc/sys");
  p.read_dirs.push_back("/proc/driver");  // the NVIDIA driver's parameters, where present
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) p.read_files.emplace_back(exe, size_t(n));
  p.read_files.push_back(op_path);
  for (const auto& d : more) p.read_exec_dirs.push_back(d);
  p.scratch = scratch;
  return p;
}

nlohmann::json apply_landlock(const LandlockPlan& plan) {
  nlohmann::json r = nlohmann::json::object();
  const int abi = landlock_abi();
  r["abi"] = abi;
  if (abi < 1) {
    r["problem"] = std::string("Landlock is not available in this kernel (") + std::strerror(errno) + ")";
    return r;
  }
  RulesetAttr attr;
  attr.handled_access_fs = fs_rights(abi);
  if (abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) attr.scoped = kScopeAbstractUnix | kScopeSignal;
  const size_t attr_size = abi >= 6 ? sizeof(RulesetAttr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  const UniqueFd ruleset(int(syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
  const int fd = ruleset.get();
  if (fd < 0) {
    r["problem"] = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return r;
  }
  int rules = 0, missing = 0;
  std::string problems;
  auto add = [&](const std::string& path, uint64_t access) {
    const UniqueFd owned(::open(path.c_str(), O_PATH | O_CLOEXEC));
    const int pfd = owned.get();
    if (pfd < 0) {
      ++missing;
      return;
    }
    // Only file rights apply to a file.
    struct stat st;
    if (::fstat(pfd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= kFsExecute | kFsReadFile | kFsWriteFile | kFsTruncate | kFsIoctlDev;
    PathBeneath pb{access & attr.handled_access_fs, pfd};
    if (syscall(SYS_landlock_add_rule, fd, kRulePathBeneath, &pb, 0) == 0) ++rules;
    else problems += path + ": " + std::strerror(errno) + "; ";
  };  // pfd closed by its owner
  const uint64_t read = kFsReadFile | kFsReadDir, read_exec = read | kFsExecute;
  for (const auto& d : plan.read_exec_dirs) add(d, read_exec);
  for (const auto& d : plan.library_dirs) add(d, read_exec);
  for (const auto& d : plan.read_dirs) add(d, read);
  for (const auto& f : plan.read_files) add(f, kFsReadFile | kFsExecute);
  for (const auto& d : plan.device_dirs) add(d, read | kFsWriteFile | kFsIoctlDev);
  for (const auto& d : plan.own_proc) add(d, read);
  if (!plan.scratch.empty() && is_dir(plan.scratch)) add(plan.scratch, attr.handled_access_fs);
  else problems += "no scratch folder (" + plan.scratch + "); ";
  r["threads"] = threads_now();  // the restriction covers this thread and the threads it starts
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
    r["problem"] = std::string("landlock_restrict_self: ") + std::strerror(errno);
    return r;  // the ruleset closed by its owner
  }
  r["filesystem"] =
      "read and execute: system paths, the folders of loaded libraries and library_dirs; read: the op file, /sys, this "
      "process's own /proc entries; write: /dev nodes and the scratch folder only";
  r["library_dirs"] = plan.library_dirs;
  r["rules"] = rules;
  if (missing) r["paths_absent"] = missing;
  if (abi >= 4) r["tcp"] = "bind and connect refused";
  if (abi >= 6) r["scoped"] = {"signals", "abstract unix sockets"};
  if (!problems.empty()) r["problems"] = problems;
  return r;
}

}  // namespace kopt::bench
