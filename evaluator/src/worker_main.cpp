// kopt-bench-worker: runs one evaluation job written by kopt-bench (the parent) and exits.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "runner.hpp"
#include "worker.hpp"
#include "zygote.hpp"

int main(int argc, char** argv) {
  // First, before the job is read: runners are forked from this state (see zygote.hpp).
  kopt::bench::zygote::start(&kopt::bench::runner_main);
  if (argc != 2) {
    std::fprintf(stderr, "kopt-bench-worker JOB.json|- — started by kopt-bench, not meant to be run by hand\n");
    return 2;
  }
  std::string job = argv[1];
  if (job == "-") {
    // Started before the builds (main.cpp PendingJudge): the job's path comes on stdin once they
    // are done; end of input without one means there is no job.
    if (!std::getline(std::cin, job) || job.empty()) return 0;
  }
  try {
    return kopt::bench::worker_main(job);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kopt-bench-worker: %s\n", e.what());
    return 3;
  }
}
