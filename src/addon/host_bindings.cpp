// Host-side bindings: preset sync (spec R) and the finalize replay runner (spec H-7).
// Converts only; the work is in kopt_core (preset_sync, replay).
#include <atomic>
#include <memory>

#include "init.hpp"
#include "promise_worker.hpp"
#include "kopt/finalize.hpp"
#include "kopt/preset_sync.hpp"
#include "kopt/replay.hpp"

namespace kopt::addon {
namespace {

Napi::Array StringArray(Napi::Env env, const std::vector<std::string>& v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (std::size_t i = 0; i < v.size(); ++i) a.Set(static_cast<uint32_t>(i), Napi::String::New(env, v[i]));
  return a;
}

// syncPreset(sourceDir, targetDir, timestamp?) -> report object
Napi::Value SyncPreset(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string source = StringArg(info, 0, "syncPreset(source)");
  const std::string target = StringArg(info, 1, "syncPreset(…, target)");
  const std::string stamp = OptionalStringArg(info, 2, "syncPreset(…, timestamp)").value_or("");
  if (source.empty() || target.empty()) Throw(env, "KOPT_BAD_ARGUMENT", "syncPreset(): source and target must not be empty");
  const PresetSyncReport r = sync_preset(expand_home(source), expand_home(target), stamp);
  Napi::Object o = Napi::Object::New(env);
  o.Set("skipped", Napi::Boolean::New(env, r.skipped));
  if (r.skipped) o.Set("skipReason", Napi::String::New(env, r.skip_reason));
  o.Set("tracked", Napi::Boolean::New(env, r.tracked));
  o.Set("seeded", StringArray(env, r.seeded));
  o.Set("updated", StringArray(env, r.updated));
  o.Set("backedUp", StringArray(env, r.backed_up));
  o.Set("backups", StringArray(env, r.backups));
  o.Set("kept", StringArray(env, r.kept));
  o.Set("unchanged", StringArray(env, r.unchanged));
  o.Set("errors", StringArray(env, r.errors));
  o.Set("log", StringArray(env, r.log_lines()));
  return o;
}

class ReplayWorker : public PromiseWorker {
 public:
  ReplayWorker(Napi::Env env, ReplayOptions options, std::shared_ptr<std::atomic<bool>> cancel)
      : PromiseWorker(env, "kopt.replay"), options_(std::move(options)), cancel_(std::move(cancel)) {
    options_.cancel = cancel_.get();
  }

 private:
  void Run() override { result_ = run_replay(options_); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("started", Napi::Boolean::New(env, result_.started));
    o.Set("output", Napi::String::New(env, result_.output));
    o.Set("truncated", Napi::Boolean::New(env, result_.truncated));
    o.Set("outputBytes", Napi::Number::New(env, static_cast<double>(result_.output_bytes)));
    o.Set("exitCode", result_.exit_code >= 0 ? Napi::Number::New(env, result_.exit_code) : env.Null());
    o.Set("signal", result_.term_signal != 0 ? Napi::Number::New(env, result_.term_signal) : env.Null());
    o.Set("timedOut", Napi::Boolean::New(env, result_.timed_out));
    o.Set("cancelled", Napi::Boolean::New(env, result_.cancelled));
    if (!result_.failure.empty()) o.Set("failure", Napi::String::New(env, result_.failure));
    o.Set("wallMs", Napi::Number::New(env, result_.wall_ms));
    if (!result_.slurm_path.empty()) o.Set("slurmPath", Napi::String::New(env, result_.slurm_path));
    return o;
  }

  ReplayOptions options_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  ReplayResult result_;
};

// runReplay({command, cwd, timeoutSec?, headCap?, tailCap?, killGraceSec?}) -> Promise<result>;
// the promise carries cancel(), which stops the run (the whole process group).
Napi::Value RunReplay(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) Throw(env, "KOPT_BAD_ARGUMENT", "runReplay() expects an options object");
  const Napi::Object in = info[0].As<Napi::Object>();
  ReplayOptions o;
  o.command = NonEmptyStringField(env, in, "command");
  o.cwd = NonEmptyStringField(env, in, "cwd");
  if (o.command.find('\0') != std::string::npos) Throw(env, "KOPT_BAD_ARGUMENT", "command contains a NUL byte");
  o.timeout_sec = NumberField(env, in, "timeoutSec", 0.001, 7 * 24 * 3600.0).value_or(o.timeout_sec);
  o.kill_grace_sec = NumberField(env, in, "killGraceSec", 0, 600).value_or(o.kill_grace_sec);
  // The caps are byte counts: a fraction is refused, not rounded.
  o.head_cap = static_cast<std::size_t>(WholeNumberField(env, in, "headCap", 0, 64.0 * 1024 * 1024).value_or(static_cast<double>(o.head_cap)));
  o.tail_cap = static_cast<std::size_t>(WholeNumberField(env, in, "tailCap", 1, 64.0 * 1024 * 1024).value_or(static_cast<double>(o.tail_cap)));

  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto* worker = new ReplayWorker(env, std::move(o), cancel);
  Napi::Promise promise = worker->Start();
  promise.Set("cancel", Napi::Function::New(env, [cancel](const Napi::CallbackInfo& ci) {
                cancel->store(true);
                return ci.Env().Undefined();
              }, "cancel"));
  return promise;
}

// neutralizeReplayOutput(text) -> text: every line the projection would read as the replay anchor
// renamed (H-5; kopt/finalize.hpp), for any replay output the finalize writes into its result.
Napi::Value NeutralizeReplayOutput(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), neutralize_replay_output(StringArg(info, 0, "neutralizeReplayOutput(text)")));
}

}  // namespace

void InitHost(Napi::Env env, Napi::Object exports) {
  Export<SyncPreset>(env, exports, "syncPreset");
  Export<RunReplay>(env, exports, "runReplay");
  Export<NeutralizeReplayOutput>(env, exports, "neutralizeReplayOutput");
}

}  // namespace kopt::addon
