// kopt-bench-runner: the process that runs one op for the judge and nothing else. Forked from the
// judge's zygote (zygote.hpp) or exec'd as its own binary (runner_exe.cpp), inside the sandbox, with
// the channel's descriptors and argv as runner_launch.hpp describes them (one description, both
// sides). It confines itself
// (no_new_privs + seccomp + Landlock) before loading any code it was given.
//
// Everything in this process is the candidate's to rewrite, so it decides nothing: it maps the
// inputs the judge laid out, calls the op, keeps the outputs alive as a caller would (until the
// judge releases them) and says where they are; the judge stops it after every reply and
// continues it for the next command, reads the outputs and checks the inputs itself, and times it
// with its own clock (remote_op.hpp). The timer here (device time on a GPU, the host clock as its
// stand-in on the CPU) is a claim the judge bounds with its own floor.
//   kopt-bench-runner candidate SO NS DEVICE     a candidate op (KOPT_LIBRARY)
//   kopt-bench-runner ref-op SO NS DEVICE        a C++ reference op (timing only)
//   kopt-bench-runner ref-script PT PRECISION[/train] DEVICE   a TorchScript reference (timing only)
//   kopt-bench-runner python PY LAUNCH DEVICE    a Python candidate (python_op.hpp); LAUNCH: the
//                                                build stage's launch file (python_build.hpp)
//   kopt-bench-runner ref-python PY LAUNCH DEVICE   a reference run as Python (timing only)
#include <ATen/ATen.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

#include <nlohmann/json.hpp>

#include "callable.hpp"
#include "channel.hpp"
#include "confine.hpp"
#include "guards.hpp"
#include "landlock.hpp"
#include "proc.hpp"
#include "python_op.hpp"
#include "runner_launch.hpp"
#include "runner.hpp"
#include "timer.hpp"

using namespace kopt::bench;
using IVals = std::vector<c10::IValue>;

namespace {

constexpr int kCmdFd = RunnerLaunch::kCommandsFd, kReplyFd = RunnerLaunch::kRepliesFd, kInFd = RunnerLaunch::kInputsFd,
              kOutFd = RunnerLaunch::kOutputsFd;

bool read_full(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= size_t(r);
  }
  return true;
}
void write_full(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n) {
    ssize_t r = ::write(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) _exit(9);  // the judge is gone
    c += r;
    n -= size_t(r);
  }
}
// After every reply the judge stops this process (it does not stop itself: a stop of its own could
// land after the judge has continued it for the next command).
void reply(ReplyMsg m, const std::string& text = "") {
  m.text_len = uint32_t(text.size());
  write_full(kReplyFd, &m, sizeof m);
  if (!text.empty()) write_full(kReplyFd, text.data(), text.size());
}
void reply_error(const std::string& what) {
  ReplyMsg m;
  m.kind = kError;
  reply(m, what.substr(0, 4000));
}
std::string clean(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return e.what();
}
void append_descs(std::string* text, const std::vector<at::Tensor>& outs) {
  const auto n = uint32_t(outs.size());
  text->append(reinterpret_cast<const char*>(&n), sizeof n);
  for (const auto& t : outs) {
    OutDesc d = describe_output(t);
    text->append(reinterpret_cast<const char*>(&d), sizeof d);
  }
}

}  // namespace

int kopt::bench::runner_main(int argc, char** argv) {
  std::string why;
  const auto launch_arg = RunnerLaunch::from_argv(argc, argv, &why);
  if (!launch_arg) {
    std::fprintf(stderr, "kopt-bench-runner: %s\n", why.c_str());
    return 2;
  }
  const RunnerLaunch& l = *launch_arg;
  const std::string& path = l.op;
  const at::Device dev = l.cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  at::NoGradGuard no_grad;
  SharedRegion in, out;
  if (!in.map(kInFd) || !out.map(kOutFd)) return 3;

  nlohmann::json loaded = nlohmann::json::object();
  bool seccomp_on = false;
  std::string confine_problem = confine_self(&seccomp_on);
  loaded["seccomp"] = seccomp_on;
  if (!confine_problem.empty()) loaded["confine_problem"] = confine_problem;
  // Landlock after no_new_privs, before anything of the op is read or loaded.
  const char* scratch = std::getenv(RunnerLaunch::kScratchEnv);
  // A Python candidate reads its interpreter's folders and its build stage's output as well.
  const bool python = l.is_python();
  std::string launch;
  std::vector<std::string> python_dirs;
  if (python) {
    try {
      const nlohmann::json resolved = resolve_launch(read_file(l.launch_file), l.launch_file);
      launch = resolved.dump();
      python_dirs = python_read_dirs(resolved);
    } catch (const std::exception& e) {
      reply_error(std::string("unreadable launch file ") + l.launch_file + ": " + e.what());
      return 0;
    }
  }
  loaded["landlock"] = apply_landlock(runner_landlock_plan(path, scratch ? scratch : "", python_dirs));

  std::unique_ptr<Timer> timer;
  Callable op;
  DispatcherSnapshot before;
  TorchState state_before;
  const std::string own = l.ns.empty() ? "" : l.ns + "::";
  try {
    if (python) PythonOp::start(launch);
    // Snapshots first: changes made by the code we load (at load time or later) show against them.
    // A runner forked from the zygote has the tables it was forked with (guards.hpp: pristine);
    // Python's start above may register operators, so a Python runner takes its own.
    const DispatcherSnapshot* pristine = python ? nullptr : pristine_dispatcher();
    before = pristine ? *pristine : snapshot_dispatcher();
    state_before = snapshot_torch_state();
    if (l.mode == RunnerLaunch::Mode::RefScript) {
      // in the spec's precision, and in training mode where the spec says so
      op = Callable::script(path, dev, l.train, l.precision);
    } else if (python) {
      op = Callable::python(path, launch, dev);
      std::vector<std::string> foreign;
      loaded["load_changes"] = dispatcher_changes(before, snapshot_dispatcher(), own, &foreign);
    } else {
      op = Callable::library(path, l.ns);
      std::vector<std::string> foreign;
      loaded["load_changes"] = dispatcher_changes(before, snapshot_dispatcher(), own, &foreign);
    }
#ifdef KOPT_WITH_CUDA
    if (dev.is_cuda()) {
      std::string note;
      timer = make_cuda_timer(0, &note);
      loaded["timer_note"] = note;
    }
#endif
    if (!timer) timer = make_host_timer();
    loaded["timer"] = timer->name();
  } catch (const std::exception& e) {
    reply_error(clean(e));
    return 0;
  }
  {
    ReplyMsg m;
    m.kind = kLoaded;
    reply(m, loaded.dump());
  }

  const char* who = l.is_candidate() ? "candidate" : "reference";
  IVals args;
  // The outputs a caller still holds: numbered calls, released when the judge says so.
  std::deque<std::pair<uint64_t, std::vector<at::Tensor>>> held;
  uint64_t next_call = 0;
  for (;;) {
    CmdMsg c;
    if (!read_full(kCmdFd, &c, sizeof c)) return 0;  // the judge closed the channel
    while (!held.empty() && held.front().first < c.release_before) held.pop_front();
    try {
      ReplyMsg m;
      m.kind = kOk;
      std::string text;
      switch (c.cmd) {
        case kArgs:
          args = decode_block(in, c.offset, dev);
          break;
        case kNop:
          break;
        case kCall: {
          // A call, or a batch of calls back to back synchronized once: the inputs are mapped
          // first, then the timer runs over the calls.
          const uint64_t n = std::max<uint64_t>(c.count, 1);
          std::vector<IVals> ins;
          for (uint64_t k = 0; k < n; ++k) ins.push_back(wrap_block(in, c.offset + k * c.stride, dev));
          std::vector<std::vector<at::Tensor>> outs(n);
          timer->before_trial();
          timer->start();
          if (!(c.flags & kNoOp))
            for (uint64_t k = 0; k < n; ++k) {
              IVals stack = ins[k];
              stack.insert(stack.end(), args.begin(), args.end());
              outs[k] = op.call(std::move(stack), who);
            }
          m.ms = timer->stop_ms();
          m.calls = uint32_t(c.flags & kNoOp ? 0 : n);
          for (uint64_t k = 0; k < n; ++k) {
            // A no-op batch copies the last held outputs instead: the channel's own cost, sizes and all.
            const auto& o = (c.flags & kNoOp) ? (held.empty() ? outs[k] : held.back().second) : outs[k];
            if (!(c.flags & kNoOp)) {
              append_descs(&text, o);
              held.emplace_back(next_call++, o);
            }
            if (c.flags & kCopyOut) {
              std::string err = encode_block(out, k * c.out_stride, IVals(o.begin(), o.end()));
              if (!err.empty()) throw std::runtime_error(err);
              if (!dev.is_cpu()) write_back_block(in, c.offset + k * c.stride, ins[k]);
            }
          }
          KernelStats ks = timer->last_stats();
          m.kind = kDone;
          m.off_stream_ms = ks.off_stream_ms;
          m.stat_flags = ks.persisting_l2 ? 4 : 0;
          if (ks.valid) {
            m.stat_flags |= 1;
            m.kernel_ms = ks.kernel_ms;
            m.launches = ks.launches;
            m.memcpys = ks.memcpys;
            m.streams = ks.streams;
          }
          break;
        }
        case kRecopy: {
          // Every output still held, again (where the judge cannot read them itself: a GPU).
          uint64_t k = 0;
          for (const auto& [id, o] : held) {
            text.append(reinterpret_cast<const char*>(&id), sizeof id);
            append_descs(&text, o);
            std::string err = encode_block(out, k++ * c.out_stride, IVals(o.begin(), o.end()));
            if (!err.empty()) throw std::runtime_error(err);
          }
          break;
        }
        case kEnd: {
          // The state of its own process: reports that can only add a flag (nothing of the judge
          // or the reference runs here).
          nlohmann::json j = nlohmann::json::object();
          std::vector<std::string> foreign;
          if (op.op || op.py) j["dispatch_changes"] = dispatcher_changes(before, snapshot_dispatcher(), own, &foreign);
          j["foreign_ops"] = foreign;
          j["state_changes"] = torch_state_changes(state_before, snapshot_torch_state());
          const std::string t = j.dump();
          m.text_len = uint32_t(t.size());
          write_full(kReplyFd, &m, sizeof m);
          write_full(kReplyFd, t.data(), t.size());
          return 0;
        }
        default:
          reply_error("unknown command");
          return 4;
      }
      reply(m, text);
    } catch (const std::exception& e) {
      reply_error(clean(e));
    }
  }
}
