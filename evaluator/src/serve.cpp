#include "serve.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <cstdlib>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge_image.hpp"
#include "sandbox.hpp"

namespace kopt::bench {
namespace {

using nlohmann::json;

void on_term(int) { cancel_all(); }

void write_line(const json& j) {
  const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size() || std::fflush(stdout) != 0) _exit(0);  // the plugin is gone
}

}  // namespace

int serve(const char* parent_pid, const std::string& worker_exe, Evaluate evaluate) {
  char* end = nullptr;
  const long parent = std::strtol(parent_pid, &end, 10);
  if (end == parent_pid || *end || parent <= 1) return 2;
  if (!die_with_parent(pid_t(parent))) return 0;  // the host is gone already
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_term;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);

  // The image's own output goes to our stderr (the plugin keeps its tail): no file to leave behind.
  const std::string image_log;
  judge_image::Image image;
  std::string why;
  // Started at once: the first evaluation's builds overlap its LibTorch start.
  const bool warm = image.start(worker_exe, image_log, &why);
  write_line(warm ? json{{"ready", true}, {"image", true}} : json{{"ready", true}, {"image", false}, {"why", why}});

  std::string line;
  while (std::getline(std::cin, line)) {
    json req = json::parse(line, nullptr, false);
    if (!req.is_object() || !req.contains("id")) continue;
    const json id = req["id"];
    reset_cancel();
    std::vector<std::string> args{"kopt-bench"};
    bool ok = req.contains("argv") && req["argv"].is_array() && req.contains("cwd") && req["cwd"].is_string();
    if (ok)
      for (const auto& a : req["argv"]) {
        if (!a.is_string()) ok = false;
        else args.push_back(a.get<std::string>());
      }
    if (!ok || ::chdir(req["cwd"].get<std::string>().c_str()) != 0) {
      write_line({{"id", id}, {"code", 2}, {"output", ""}, {"error", ok ? "cannot enter the working directory" : "bad request"}});
      continue;
    }
    // A judge forked from the image; the image is started again when it ended since the last evaluation.
    if (!image.running()) image.start(worker_exe, image_log, &why);
    EvalContext ctx;
    ctx.serving = true;
    ctx.spare = image.pid();
    ctx.stage = [&](const char* s) { write_line({{"id", id}, {"stage", s}}); };
    ctx.start_judge = [&](const std::string& log_path, int stdin_fd) -> JudgeStart {
      std::string why_cold = why;
      UniqueFd log(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
      pid_t pid = -1;
      if (log && image.running() && !cancel_requested()) pid = image.fork_judge(stdin_fd, log.get(), &why_cold);
      log.reset();
      if (pid > 0) {
        track_group(pid);
        return {Child{pid}, "forked from the plugin's warm judge image (no LibTorch start)"};
      }
      ctx.spare = image.pid();  // it may have ended just now
      JudgeStart cold{start_process({worker_exe, "-"}, log_path, {}, stdin_fd), ""};
      cold.how = "started as its own process (the warm image is unavailable: " + (why_cold.empty() ? std::string("unknown") : why_cold) + ")";
      return cold;
    };
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int code = 1;
    try {
      code = evaluate(int(args.size()), argv.data(), ctx);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kopt-bench --serve: %s\n", e.what());
    }
    reap_all_children(1.0, image.pid());
    write_line({{"id", id}, {"code", code}, {"output", ctx.out}, {"cancelled", cancel_requested()}});
  }
  image.stop();
  return 0;
}

}  // namespace kopt::bench
