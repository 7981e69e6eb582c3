// kopt-bench --serve PARENT_PID: the plugin's evaluator service (lib/evaluate.mjs starts it on a session's
// first kernel_evaluate and ends it after an idle period). One evaluation at a time, each exactly what
// `kopt-bench ARGS` does in that folder, except that its judge is forked from a warm image
// (judge_image.hpp) instead of starting LibTorch again; when the image is unavailable, the judge starts
// as its own process and native_metrics.isolation.start says why.
//   stdin, one JSON line per evaluation: {"id": N, "cwd": "/abs", "argv": ["--ref", …]}
//   stdout, JSON lines: {"ready": true, "image": true|false, "why"?} once; then per evaluation
//     {"id": N, "stage": "build"|"judge"} as it goes and {"id": N, "code": C, "output": "…", "cancelled": B}
//   SIGTERM: cancels the evaluation under way (every process of it is killed; the reply says cancelled).
// It dies with its parent (the host: parent-death signal) and ends at the end of stdin; the image
// dies with it. Nothing of it outlives the host.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>

#include "proc.hpp"

namespace kopt::bench {

struct JudgeStart {
  Child child;
  std::string how;  // for native_metrics.isolation.start
};

// What one evaluation needs from whoever runs it.
struct EvalContext {
  bool serving = false;
  // Starts the judge (log_path: its stdout and stderr; stdin_fd: where its job's path comes). Empty:
  // kopt-bench-worker is started as its own process.
  std::function<JudgeStart(const std::string& log_path, int stdin_fd)> start_judge;
  std::function<void(const char* stage)> stage;  // "build", "judge"
  pid_t spare = 0;                               // a child that is not the evaluation's (the image)
  std::string out;                               // what the evaluation prints on stdout
};

using Evaluate = int (*)(int argc, char** argv, EvalContext& ctx);

int serve(const char* parent_pid, const std::string& worker_exe, Evaluate evaluate);

}  // namespace kopt::bench
