#include "runner_launch.hpp"

namespace kopt::bench {

namespace {
struct ModeName {
  RunnerLaunch::Mode mode;
  const char* name;
};
constexpr ModeName kModes[] = {{RunnerLaunch::Mode::Candidate, "candidate"},
                               {RunnerLaunch::Mode::RefOp, "ref-op"},
                               {RunnerLaunch::Mode::RefScript, "ref-script"},
                               {RunnerLaunch::Mode::Python, "python"},
                               {RunnerLaunch::Mode::RefPython, "ref-python"}};
}  // namespace

const char* RunnerLaunch::mode_name() const {
  for (const auto& m : kModes)
    if (m.mode == mode) return m.name;
  return "?";
}

std::vector<std::string> RunnerLaunch::argv(const std::string& exe) const {
  std::string detail;
  switch (mode) {
    case Mode::Candidate:
    case Mode::RefOp: detail = ns; break;
    case Mode::RefScript: detail = precision + (train ? "/train" : ""); break;
    case Mode::Python:
    case Mode::RefPython: detail = launch_file; break;
  }
  return {exe, mode_name(), op, detail, cuda ? "cuda" : "cpu"};
}

std::optional<RunnerLaunch> RunnerLaunch::from_argv(int argc, char** argv, std::string* why) {
  if (argc != 5) {
    *why = "started by kopt-bench, not meant to be run by hand";
    return std::nullopt;
  }
  RunnerLaunch l;
  bool known = false;
  for (const auto& m : kModes)
    if (std::string(argv[1]) == m.name) l.mode = m.mode, known = true;
  if (!known) {
    *why = std::string("unknown mode '") + argv[1] + "'";
    return std::nullopt;
  }
  l.op = argv[2];
  const std::string detail = argv[3];
  switch (l.mode) {
    case Mode::Candidate:
    case Mode::RefOp: l.ns = detail; break;
    case Mode::RefScript: {
      const auto sl = detail.find('/');
      l.precision = detail.substr(0, sl);
      l.train = sl != std::string::npos && detail.substr(sl + 1) == "train";
      break;
    }
    case Mode::Python:
    case Mode::RefPython: l.launch_file = detail; break;
  }
  l.cuda = std::string(argv[4]) == "cuda";
  return l;
}

}  // namespace kopt::bench
