#include "load.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kopt::bench {
namespace {

struct ProcTimes {
  pid_t ppid = 0;
  uint64_t ticks = 0;  // utime + stime + cutime + cstime
};

// /proc/PID/stat: the command may hold spaces and parentheses, so fields are counted after the last ')'.
bool read_proc(pid_t pid, ProcTimes* out) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(line.substr(close + 1));
  std::string field;
  std::vector<std::string> v;  // v[0] = state (field 3), v[1] = ppid (4), ..., v[11..14] = utime..cstime (14..17)
  while (v.size() < 15 && in >> field) v.push_back(field);
  if (v.size() < 15) return false;
  try {
    out->ppid = pid_t(std::stol(v[1]));
    out->ticks = std::stoull(v[11]) + std::stoull(v[12]) + uint64_t(std::max(0LL, std::stoll(v[13]))) +
                 uint64_t(std::max(0LL, std::stoll(v[14])));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace

CpuSample cpu_sample(pid_t root) {
  CpuSample s;
  {
    std::ifstream f("/proc/stat");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("cpu ", 0) == 0) {
        std::istringstream in(line.substr(4));
        uint64_t v[8] = {0};  // user nice system idle iowait irq softirq steal
        for (auto& x : v) in >> x;
        if (!in) return s;
        s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        s.total = s.busy + v[3] + v[4];
      } else if (line.rfind("cpu", 0) == 0) {
        ++s.cpus;
      }
    }
  }
  if (s.total == 0 || s.cpus == 0) return s;
  std::map<pid_t, ProcTimes> procs;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      ProcTimes t;
      if (pid > 0 && *end == 0 && read_proc(pid_t(pid), &t)) procs[pid_t(pid)] = t;
    }
    closedir(d);
  }
  // Our tree: root and every process whose parent chain reaches it.
  std::map<pid_t, bool> ours;
  std::function<bool(pid_t, int)> in_tree = [&](pid_t p, int depth) -> bool {
    if (p == root) return true;
    if (p <= 1 || depth > 64) return false;
    auto m = ours.find(p);
    if (m != ours.end()) return m->second;
    auto it = procs.find(p);
    bool r = it != procs.end() && in_tree(it->second.ppid, depth + 1);
    ours[p] = r;
    return r;
  };
  for (const auto& [pid, t] : procs)
    if (in_tree(pid, 0)) s.own += t.ticks;
  s.ok = true;
  return s;
}

Load load_between(const CpuSample& a, const CpuSample& b) {
  Load l;
  if (!a.ok || !b.ok || b.total <= a.total || a.cpus != b.cpus) return l;
  const double total = double(b.total - a.total);
  const double busy = double(b.busy >= a.busy ? b.busy - a.busy : 0);
  const double own = double(b.own >= a.own ? b.own - a.own : 0);
  l.measured = true;
  l.cpus = b.cpus;
  l.other_cpus = std::max(0.0, busy - own) / total * b.cpus;
  const long hz = sysconf(_SC_CLK_TCK);
  l.window_s = total / b.cpus / double(hz > 0 ? hz : 100);
  return l;
}

nlohmann::json Load::to_json() const {
  if (!measured) return nlohmann::json::object();
  return {{"cpus", cpus},
          {"other_cpus", std::round(other_cpus * 100) / 100},
          {"window_s", std::round(window_s * 100) / 100},
          {"contended", contended()}};
}

Load Load::from_json(const nlohmann::json& j) {
  Load l;
  if (!j.is_object() || !j.contains("cpus") || !j["cpus"].is_number_integer() || !j.contains("other_cpus") ||
      !j["other_cpus"].is_number())
    return l;
  l.measured = true;
  l.cpus = j["cpus"].get<int>();
  l.other_cpus = j["other_cpus"].get<double>();
  l.window_s = j.value("window_s", 0.0);
  return l;
}

}  // namespace kopt::bench
