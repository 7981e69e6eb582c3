// kernel_evaluate's two decisions (kopt/evaluate.hpp), JSON strings in: the argument check with the
// kopt-bench command line it gives (an object lib/evaluate.mjs reads), and the tool result (the text
// the agent reads, as it is). lib/evaluate.mjs runs what these say.
#include "init.hpp"
#include "kopt/evaluate.hpp"

namespace kopt::addon {
namespace {

// checkEvaluateArgs(argsJson, cwd) -> {ok: true, argv, artifact, slurm, files: [{role, given, real}]}
// or {ok: false, error}.
Napi::Value CheckEvaluateArgs(const Napi::CallbackInfo& info) {
  const std::string args = StringArg(info, 0, "checkEvaluateArgs(argsJson, cwd): argsJson");
  const std::string cwd = StringArg(info, 1, "checkEvaluateArgs(argsJson, cwd): cwd");
  EvaluateCheck c = check_evaluate_args_text(args, cwd);
  json out = json::object();
  out["ok"] = c.request.has_value();
  if (!c.request) {
    out["error"] = c.error;
  } else {
    out["argv"] = c.request->argv;
    out["artifact"] = c.request->artifact;
    out["slurm"] = c.request->slurm;
    json files = json::array();
    for (const auto& f : c.request->files) files.push_back({{"role", f.role}, {"given", f.given}, {"real", f.real}});
    out["files"] = std::move(files);
  }
  return ToJs(info.Env(), out);
}

// evaluateResult(inJson) -> the tool result text.
Napi::Value EvaluateResult(const Napi::CallbackInfo& info) {
  const json in = JsonObjectArg(info, 0, "evaluateResult(inJson)");
  return Napi::String::New(info.Env(), evaluate_result(in));
}

}  // namespace

void InitEvaluate(Napi::Env env, Napi::Object exports) {
  Export<CheckEvaluateArgs>(env, exports, "checkEvaluateArgs");
  Export<EvaluateResult>(env, exports, "evaluateResult");
}

}  // namespace kopt::addon
