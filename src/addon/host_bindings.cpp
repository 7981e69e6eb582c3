// Host-side bindings: preset sync (spec R) and the finalize replay runner (spec H-7).
// Converts only; the work is in kopt_core (preset_sync, replay).
#include <atomic>
#include <memory>

#include "init.hpp"
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
  std::string source = StringArg(info, 0, "source");
  std::string target = StringArg(info, 1, "target");
  const std::string stamp = OptionalStringArg(info, 2, "timestamp").value_or("");
  if (source.empty() || target.empty()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "source and target must not be empty");
  PresetSyncReport r;
  try {
    r = sync_preset(expand_home(source), expand_home(target), stamp);
  } catch (const std::exception& e) {
    ThrowCoded(env, "KOPT_PRESET_SYNC", e.what());
  }
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

class ReplayWorker : public Napi::AsyncWorker {
 public:
  ReplayWorker(Napi::Env env, ReplayOptions options, std::shared_ptr<std::atomic<bool>> cancel)
      : Napi::AsyncWorker(env, "kopt.replay"),
        deferred_(Napi::Promise::Deferred::New(env)),
        options_(std::move(options)),
        cancel_(std::move(cancel)) {
    options_.cancel = cancel_.get();
  }
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      result_ = run_replay(options_);
    } catch (const std::exception& e) {
      result_.failure = std::string("replay error: ") + e.what();
    }
  }
  void OnOK() override {
    Napi::Env env = Env();
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
    deferred_.Resolve(o);
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  ReplayOptions options_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  ReplayResult result_;
};

// runReplay({command, cwd, timeoutSec, headCap?, tailCap?, killGraceSec?}) -> Promise<result>;
// the promise carries cancel(), which stops the run (the whole process group).
Napi::Value RunReplay(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "runReplay expects an options object");
  Napi::Object in = info[0].As<Napi::Object>();
  ReplayOptions o;
  Napi::Value cmd = in.Get("command"), cwd = in.Get("cwd");
  if (!cmd.IsString() || cmd.As<Napi::String>().Utf8Value().empty())
    ThrowCoded(env, "KOPT_BAD_ARGUMENT", "command must be a non-empty string");
  if (!cwd.IsString() || cwd.As<Napi::String>().Utf8Value().empty())
    ThrowCoded(env, "KOPT_BAD_ARGUMENT", "cwd must be a non-empty string");
  o.command = cmd.As<Napi::String>().Utf8Value();
  o.cwd = cwd.As<Napi::String>().Utf8Value();
  auto num = [&](const char* key, double lo, double hi, double& out) {
    Napi::Value v = in.Get(key);
    if (v.IsUndefined() || v.IsNull()) return;
    if (!v.IsNumber()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", std::string(key) + " must be a number");
    double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= lo && d <= hi)) ThrowCoded(env, "KOPT_BAD_ARGUMENT", std::string(key) + " out of range");
    out = d;
  };
  double head = static_cast<double>(o.head_cap), tail = static_cast<double>(o.tail_cap);
  num("timeoutSec", 0.001, 7 * 24 * 3600.0, o.timeout_sec);
  num("killGraceSec", 0, 600, o.kill_grace_sec);
  num("headCap", 0, 64.0 * 1024 * 1024, head);
  num("tailCap", 1, 64.0 * 1024 * 1024, tail);
  o.head_cap = static_cast<std::size_t>(head);
  o.tail_cap = static_cast<std::size_t>(tail);
  if (o.command.find('\0') != std::string::npos) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "command contains a NUL byte");

  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto* worker = new ReplayWorker(env, std::move(o), cancel);
  Napi::Promise promise = worker->Promise();
  promise.Set("cancel", Napi::Function::New(env, [cancel](const Napi::CallbackInfo& ci) {
                cancel->store(true);
                return ci.Env().Undefined();
              }, "cancel"));
  worker->Queue();
  return promise;
}

}  // namespace

void InitHost(Napi::Env env, Napi::Object exports) {
  exports.Set("syncPreset", Napi::Function::New(env, SyncPreset, "syncPreset"));
  exports.Set("runReplay", Napi::Function::New(env, RunReplay, "runReplay"));
  exports.Set("presetManifestName", Napi::String::New(env, kPresetManifestName));
}

}  // namespace kopt::addon
