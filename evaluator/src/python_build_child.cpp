// kopt-bench-runner pybuild BUILD PYTHON SCRIPT ENTRY: the build stage's confined child
// (python_build.hpp). Landlock first (read: the system, the interpreter's prefix, the libraries'
// folders; write: BUILD only; no TCP), then the interpreter runs the build script, which imports the
// solution and constructs its model so that its extensions are compiled here. A compiler may run
// (no seccomp filter against processes), but nothing it or the solution's import-time code does can
// reach the judge's key, the baseline, the workspace or the network.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "landlock.hpp"
#include "runner.hpp"

int kopt::bench::pybuild_main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "kopt-bench-runner pybuild: started by kopt-bench, not meant to be run by hand\n");
    return 2;
  }
  const std::string build = argv[2], python = argv[3], script = argv[4], entry = argv[5];
  // The interpreter's prefix (a venv's or pyenv's lives outside /usr): two levels above its binary,
  // both as named (a venv: its pyvenv.cfg and site-packages) and as resolved (the base interpreter).
  std::vector<std::string> more;
  auto add_prefix = [&](std::string p) {
    for (int up = 0; up < 2 && p.find_last_of('/') != std::string::npos; ++up) p = p.substr(0, p.find_last_of('/'));
    if (!p.empty() && p != "/") more.push_back(p);
  };
  if (!python.empty() && python[0] == '/') add_prefix(python);
  char real[PATH_MAX];
  if (::realpath(python.c_str(), real)) add_prefix(real);
  const nlohmann::json ll = apply_landlock(runner_landlock_plan(script, build, more));
  if (ll.contains("problem")) {
    // Without Landlock the solution's import-time code would run with this user's rights.
    const char* weaker = std::getenv("KOPT_BUILD_ALLOW_WEAKER");
    if (!weaker || std::string(weaker) != "1") {
      std::fprintf(stderr, "refused: the build stage cannot be confined (%s); kopt-bench --allow-weaker-isolation runs it anyway\n",
                   ll["problem"].get<std::string>().c_str());
      return 3;
    }
    std::fprintf(stderr, "warning: the build stage runs unconfined: %s\n", ll["problem"].get<std::string>().c_str());
  }
  if (::chdir((build + "/src").c_str()) != 0) {
    std::perror("chdir");
    return 3;
  }
  const std::string params = build + "/params.json";
  char* args[] = {const_cast<char*>(python.c_str()), const_cast<char*>("-E"), const_cast<char*>("-s"),
                  const_cast<char*>("-B"), const_cast<char*>(script.c_str()), const_cast<char*>(build.c_str()),
                  const_cast<char*>(entry.c_str()), const_cast<char*>(params.c_str()), nullptr};
  ::execv(python.c_str(), args);
  std::perror(("exec " + python).c_str());
  return 127;
}
