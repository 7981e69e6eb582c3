// kopt-bench-worker: runs one evaluation job written by kopt-bench (the parent) and exits; or, as
// `--image SERVICE_PID`, the warm judge image of kopt-bench --serve (judge_image.hpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "guards.hpp"
#include "judge_image.hpp"
#include "python_op.hpp"
#include "runner.hpp"
#include "worker.hpp"
#include "zygote.hpp"

namespace {

// The judge's work once its process exists: first, before the job is read, the zygote that runners
// are forked from (zygote.hpp); then the job ("-": its path comes on stdin, once the parent's builds are
// done; end of input without one means there is no job).
int judge(std::string job) {
  // The zygote keeps the dispatcher's tables as its runners start with them (guards.hpp), once,
  // unless it inherited them from the warm image.
  kopt::bench::zygote::start(&kopt::bench::runner_main, &kopt::bench::take_pristine_dispatcher);
  if (job == "-") {
    if (!std::getline(std::cin, job) || job.empty()) return 0;
  }
  try {
    return kopt::bench::worker_main(job);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kopt-bench-worker: %s\n", e.what());
    return 3;
  }
}

int judge_from_stdin() { return judge("-"); }

}  // namespace

int main(int argc, char** argv) {
  // The image forks judges that then start their own zygote; it never starts one itself.
  if (argc == 3 && std::string(argv[1]) == "--image") {
    char* end = nullptr;
    const long service = std::strtol(argv[2], &end, 10);
    if (end == argv[2] || *end || service <= 1) return 2;
    // Python solutions' runners fork from here with torch imported (python_op.hpp).
    if (kopt::bench::python_available()) {
      const std::string why = kopt::bench::PythonOp::preload_in_image();
      if (!why.empty()) std::fprintf(stderr, "kopt-bench: the warm image runs without Python preloaded: %s\n", why.c_str());
    }
    // The dispatcher's tables as every runner forked from here starts with them (guards.hpp), once.
    kopt::bench::take_pristine_dispatcher();
    return kopt::bench::judge_image::serve(pid_t(service), 3, &judge_from_stdin);
  }
  if (argc != 2) {
    std::fprintf(stderr, "kopt-bench-worker JOB.json|- — started by kopt-bench, not meant to be run by hand\n");
    return 2;
  }
  return judge(argv[1]);
}
