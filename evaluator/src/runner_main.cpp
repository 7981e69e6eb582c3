// kopt-bench-runner: the process that runs one op for the judge and nothing else. Forked from the
// judge's zygote (zygote.hpp) or exec'd as its own binary (runner_exe.cpp), inside the sandbox, with fds 3 (commands in), 4 (replies out),
// 5 (input region) and 6 (output region). It confines itself (no_new_privs + seccomp) before
// loading any code it was given, calls the op on the inputs it is handed and writes the outputs
// back. It never sees a reference output, a seed or an input before the judge sends it.
//   kopt-bench-runner candidate SO NS DEVICE     a candidate op (KOPT_LIBRARY)
//   kopt-bench-runner ref-op SO NS DEVICE        a C++ reference op (timing only)
//   kopt-bench-runner ref-script PT PRECISION DEVICE   a TorchScript reference (timing only)
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/script.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "channel.hpp"
#include "confine.hpp"
#include "landlock.hpp"
#include "guards.hpp"
#include "inputs.hpp"
#include "runner.hpp"
#include "timer.hpp"

using namespace kopt::bench;
using IVals = std::vector<c10::IValue>;

namespace {

constexpr int kCmdFd = 3, kReplyFd = 4, kInFd = 5, kOutFd = 6;

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

std::vector<at::Tensor> to_outputs(const IVals& stack) {
  std::vector<at::Tensor> o;
  auto add = [&](const c10::IValue& v) {
    if (v.isTensor()) o.push_back(v.toTensor());
    else if (v.isTuple())
      for (const auto& e : v.toTupleRef().elements()) {
        if (!e.isTensor()) throw std::runtime_error("returned a tuple with a non-tensor element");
        o.push_back(e.toTensor());
      }
    else if (v.isTensorList())
      for (const auto& t : v.toTensorVector()) o.push_back(t);
    else
      throw std::runtime_error(std::string("must return a Tensor or a tuple of Tensors, got ") + v.tagKind());
  };
  for (const auto& v : stack) add(v);
  return o;
}

bool overlaps(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  if (a.storage().is_alias_of(b.storage())) return true;
  auto la = reinterpret_cast<uintptr_t>(a.storage().data()), ha = la + a.storage().nbytes();
  auto lb = reinterpret_cast<uintptr_t>(b.storage().data()), hb = lb + b.storage().nbytes();
  return la < hb && lb < ha;
}

}  // namespace

int kopt::bench::runner_main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "kopt-bench-runner: started by kopt-bench, not meant to be run by hand\n");
    return 2;
  }
  const std::string mode = argv[1], path = argv[2], arg3 = argv[3];
  const at::Device dev = std::string(argv[4]) == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  at::NoGradGuard no_grad;
  SharedRegion in, out;
  if (!in.map(kInFd) || !out.map(kOutFd)) return 3;

  nlohmann::json loaded = nlohmann::json::object();
  bool seccomp_on = false;
  std::string confine_problem = confine_self(&seccomp_on);
  loaded["seccomp"] = seccomp_on;
  if (!confine_problem.empty()) loaded["confine_problem"] = confine_problem;
  // Landlock after no_new_privs, before anything of the op is read or loaded.
  const char* scratch = std::getenv("KOPT_RUNNER_SCRATCH");
  loaded["landlock"] = apply_landlock(runner_landlock_plan(path, scratch ? scratch : ""));

  std::unique_ptr<Timer> timer;
  c10::optional<c10::OperatorHandle> op;
  c10::optional<torch::jit::Module> module;
  DispatcherSnapshot before;
  TorchState state_before;
  const std::string own = mode == "ref-script" ? "" : arg3 + "::";
  try {
    // Snapshots first: changes made by the code we load (at load time or later) show against them.
    before = snapshot_dispatcher();
    state_before = snapshot_torch_state();
    if (mode == "ref-script") {
      // arg3: PRECISION, or PRECISION/train for a module judged in training mode (the spec's mode)
      const auto sl = arg3.find('/');
      const std::string prec = arg3.substr(0, sl);
      module = torch::jit::load(path, dev);
      module->train(sl != std::string::npos && arg3.substr(sl + 1) == "train");
      if (prec != "float32") module->to(scalar_type_of(prec));
    } else {
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) throw std::runtime_error(std::string("cannot load the library: ") + dlerror());
      op = c10::Dispatcher::singleton().findSchema({own + "forward", ""});
      if (!op)
        throw std::runtime_error("no op '" + own +
                                 "forward' is registered — define it with KOPT_LIBRARY(m) { m.def(\"forward(...) -> Tensor\"); }");
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

  IVals args, cur, prev, prev2;
  std::vector<at::Tensor> last_out;
  std::deque<std::vector<at::Tensor>> kept;  // outputs of inspected calls: a later output must not reuse them
  std::vector<uint64_t> in_sums;
  for (;;) {
    CmdMsg c;
    if (!read_full(kCmdFd, &c, sizeof c)) return 0;  // the judge closed the channel
    try {
      ReplyMsg m;
      m.kind = kOk;
      switch (c.cmd) {
        case kArgs:
          args = decode_values(in, dev);
          break;
        case kPrepare: {
          prev2 = std::move(prev);  // kept alive: the next inputs land at other addresses
          prev = std::move(cur);
          cur = decode_values(in, dev);
          in_sums.clear();
          for (const auto& v : cur) in_sums.push_back(v.isTensor() && v.toTensor().defined() ? checksum(v.toTensor()) : 0);
          // Poison freed blocks the size of the last outputs: an unwritten at::empty output reads NaN.
          for (const auto& t : last_out) {
            if (!t.defined()) continue;
            at::Tensor p = at::empty(t.sizes(), t.options());
            if (p.is_floating_point()) p.fill_(std::numeric_limits<double>::quiet_NaN());
            else p.fill_(0x5A);
          }
          break;
        }
        case kMutate: {
          IVals fresh = decode_values(in, dev);
          overwrite_bytes(cur, fresh);
          in_sums.clear();
          for (const auto& v : cur) in_sums.push_back(v.isTensor() && v.toTensor().defined() ? checksum(v.toTensor()) : 0);
          break;
        }
        case kCall: {
          IVals stack = cur;
          stack.insert(stack.end(), args.begin(), args.end());
          timer->before_trial();
          timer->start();
          if (module) stack = {module->forward(stack)};
          else op->callBoxed(&stack);
          m.ms = timer->stop_ms();
          last_out = to_outputs(stack);
          IVals ov(last_out.begin(), last_out.end());
          std::string err = encode_values(out, ov);
          if (!err.empty()) throw std::runtime_error(err);
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
        case kInspect: {
          for (size_t i = 0; i < cur.size(); ++i)
            if (cur[i].isTensor() && cur[i].toTensor().defined() && checksum(cur[i].toTensor()) != in_sums[i])
              m.flags |= 1u | (i < 24 ? 1u << (8 + i) : 0u);
          for (size_t oi = 0; oi < last_out.size() && oi < 8; ++oi) {
            for (size_t j = 0; j < cur.size() && j < 8; ++j)
              if (cur[j].isTensor() && overlaps(last_out[oi], cur[j].toTensor())) m.alias_mask |= uint64_t(1) << (oi * 8 + j);
            for (const auto& k : kept)
              for (const auto& p : k)
                if (overlaps(last_out[oi], p)) m.flags |= 2;
          }
          kept.push_back(last_out);
          if (kept.size() > 16) kept.pop_front();
          break;
        }
        case kEnd: {
          nlohmann::json j = nlohmann::json::object();
          std::vector<std::string> foreign;
          if (op) j["dispatch_changes"] = dispatcher_changes(before, snapshot_dispatcher(), own, &foreign);
          j["foreign_ops"] = foreign;
          j["state_changes"] = torch_state_changes(state_before, snapshot_torch_state());
          reply(m, j.dump());
          return 0;
        }
        default:
          reply_error("unknown command");
          return 4;
      }
      reply(m);
    } catch (const std::exception& e) {
      reply_error(clean(e));
    }
  }
}
