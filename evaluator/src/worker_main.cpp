// kopt-bench-worker: runs one evaluation job written by kopt-bench (the parent) and exits.
#include <cstdio>
#include <exception>
#include <string>

#include "runner.hpp"
#include "worker.hpp"
#include "zygote.hpp"

int main(int argc, char** argv) {
  // First, before the job is read: runners are forked from this state (see zygote.hpp).
  kopt::bench::zygote::start(&kopt::bench::runner_main);
  if (argc != 2) {
    std::fprintf(stderr, "kopt-bench-worker JOB.json — started by kopt-bench, not meant to be run by hand\n");
    return 2;
  }
  try {
    return kopt::bench::worker_main(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kopt-bench-worker: %s\n", e.what());
    return 3;
  }
}
