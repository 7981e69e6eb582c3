// kopt-bench-worker: runs one evaluation job written by kopt-bench (the parent) and exits.
#include <cstdio>
#include <exception>
#include <string>

#include "worker.hpp"

int main(int argc, char** argv) {
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
