// Replay runner (spec H-7): bash -c in the session cwd, timeout kills the whole group, capped output.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kopt/replay.hpp"

namespace fs = std::filesystem;

namespace {
kopt::ReplayOptions opts(std::string cmd, double timeout = 20) {
  kopt::ReplayOptions o;
  o.command = std::move(cmd);
  o.cwd = fs::temp_directory_path().string();
  o.timeout_sec = timeout;
  return o;
}
}  // namespace

TEST(Replay, RunsInCwdWithBashAndCapturesBothStreams) {
  auto dir = fs::temp_directory_path() / ("kopt-replay-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "marker.txt") << "here";
  auto o = opts("cat marker.txt; echo; echo err >&2; [[ 1 -eq 1 ]] && echo 'KERNEL_EVAL={\"latency_ms\":1}'");
  o.cwd = dir.string();
  auto r = kopt::run_replay(o);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.failure, "");
  EXPECT_NE(r.output.find("here"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
  EXPECT_NE(r.output.find("KERNEL_EVAL={\"latency_ms\":1}"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Replay, InheritsTheServerEnvironment) {
  ::setenv("KOPT_REPLAY_TEST_VAR", "visible", 1);
  auto r = kopt::run_replay(opts("echo $KOPT_REPLAY_TEST_VAR"));
  EXPECT_EQ(r.output, "visible\n");
}

TEST(Replay, NonZeroExitIsAFailure) {
  auto r = kopt::run_replay(opts("echo partial; exit 3"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.failure, "exit status 3");
  EXPECT_EQ(r.output, "partial\n");
}

TEST(Replay, MissingCwdFailsWithoutStarting) {
  auto o = opts("true");
  o.cwd = "/nonexistent/kopt/dir";
  auto r = kopt::run_replay(o);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.failure.find("working directory"), std::string::npos);
}

TEST(Replay, EmptyCommandFails) {
  auto r = kopt::run_replay(opts(""));
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.failure.empty());
}

TEST(Replay, TimeoutKillsTheWholeProcessGroup) {
  auto pidfile = fs::temp_directory_path() / ("kopt-replay-pid-" + std::to_string(::getpid()));
  fs::remove(pidfile);
  // A grandchild that ignores nothing but would outlive a plain kill of bash.
  auto o = opts("sleep 60 & echo $! > " + pidfile.string() + "; wait", 1);
  o.kill_grace_sec = 1;
  auto t0 = std::chrono::steady_clock::now();
  auto r = kopt::run_replay(o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.failure.find("timed out"), std::string::npos);
  EXPECT_LT(secs, 10);
  pid_t grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  ASSERT_GT(grandchild, 0);
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived";
  fs::remove(pidfile);
}

TEST(Replay, TermIgnoringCommandIsKilled) {
  // 2 s before the TERM: bash has installed its trap by then even on a loaded machine.
  auto o = opts("trap '' TERM; while :; do sleep 0.1; done", 2.0);
  o.kill_grace_sec = 0.5;
  auto r = kopt::run_replay(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
}

TEST(Replay, BackgroundLeftoversDoNotHangTheRun) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = kopt::run_replay(opts("sleep 30 & echo done"));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "done\n");
  EXPECT_LT(secs, 5);
}

TEST(Replay, OutputIsCappedKeepingHeadAndTail) {
  auto o = opts("head -c 300000 /dev/zero | tr '\\0' 'x'; echo; echo 'KERNEL_EVAL={\"latency_ms\":2}'");
  o.head_cap = 1000;
  o.tail_cap = 2000;
  auto r = kopt::run_replay(o);
  EXPECT_TRUE(r.truncated);
  EXPECT_GT(r.output_bytes, 300000u);
  EXPECT_LT(r.output.size(), 3200u);
  EXPECT_EQ(r.output.substr(0, 10), std::string(10, 'x'));
  EXPECT_NE(r.output.find("trimmed"), std::string::npos);
  EXPECT_NE(r.output.find("\nKERNEL_EVAL={\"latency_ms\":2}\n"), std::string::npos);
}

TEST(Replay, CancelStopsTheRun) {
  std::atomic<bool> cancel{false};
  auto o = opts("sleep 30", 60);
  o.cancel = &cancel;
  o.kill_grace_sec = 0.5;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  auto r = kopt::run_replay(o);
  t.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.failure, "cancelled");
}

namespace {
// Processes whose argv[0] is `marker` (set with `exec -a`), found through /proc.
int count_marked(const std::string& marker) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream f(e.path() / "cmdline", std::ios::binary);
    std::string argv0;
    if (f && std::getline(f, argv0, '\0') && argv0 == marker) ++n;
  }
  return n;
}
std::string marker(const char* what) { return "kopt-test-" + std::string(what) + "-" + std::to_string(::getpid()); }
}  // namespace

// Everything the command leaves behind ends with it, however it left bash's process group.
TEST(Replay, NoDescendantSurvives) {
  const std::string m = marker("leftover");
  const std::string sleeper = "exec -a " + m + " sleep 300";
  auto cmd = "setsid bash -c '" + sleeper + "' &"                       // own session
             " (setsid bash -c '(" + sleeper + ") &' &) ;"              // setsid + double fork
             " nohup bash -c '" + sleeper + "' >/dev/null 2>&1 &"        // nohup in the background
             " (trap '' TERM HUP; " + sleeper + ") &"                    // ignores TERM, same group
             " sleep 0.5; echo 'KERNEL_EVAL={\"latency_ms\":1}'";
  auto r = kopt::run_replay(opts(cmd));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("KERNEL_EVAL="), std::string::npos);
  EXPECT_EQ(count_marked(m), 0);
}

TEST(Replay, TimeoutEndsProcessesThatLeftTheGroup) {
  const std::string m = marker("timeout");
  auto o = opts("setsid bash -c 'exec -a " + m + " sleep 300' & (setsid bash -c '(exec -a " + m +
                    " sleep 300) &' &); sleep 60",
                1);
  o.kill_grace_sec = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = kopt::run_replay(o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(secs, 10);
  EXPECT_EQ(count_marked(m), 0);
}

TEST(Replay, MemoryLimitHitIsReported) {
  // bash itself holds a 150 MB string: its allocator fails under a 64 MiB cap.
  const std::string hog = "x=$(head -c 150000000 /dev/zero | tr '\\0' x); echo ${#x}";
  auto o = opts(hog);
  o.memory_limit_bytes = std::size_t{64} << 20;
  auto r = kopt::run_replay(o);
  EXPECT_NE(r.failure, "");
  EXPECT_TRUE(r.memory_limit_hit) << r.failure << "\n" << r.output;
  EXPECT_NE(r.failure.find("memory limit 0.0625 GiB exceeded"), std::string::npos) << r.failure;
  // The same command fits under the default cap.
  auto ok = kopt::run_replay(opts(hog));
  EXPECT_EQ(ok.failure, "") << ok.output;
  EXPECT_FALSE(ok.memory_limit_hit);
}

TEST(Replay, OrdinaryFailureIsNotCalledAMemoryLimit) {
  auto r = kopt::run_replay(opts("echo 'CUDA error: out of memory' >&2; exit 1"));
  EXPECT_EQ(r.failure, "exit status 1");
  EXPECT_FALSE(r.memory_limit_hit);
}
