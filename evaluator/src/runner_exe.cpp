// kopt-bench-runner as a binary of its own: the runner when the judge's zygote is not there.
#include <cstring>

#include "runner.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "pybuild") == 0) return kopt::bench::pybuild_main(argc, argv);
  return kopt::bench::runner_main(argc, argv);
}
