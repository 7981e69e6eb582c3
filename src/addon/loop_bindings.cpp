// The loop controller and the supervisor helpers for JavaScript. JSON strings in and out; the
// controller object owns one session's loop state; every decision is made in kopt_core.
//
//   new LoopController(settingsJson)
//     .arm(budget|null, lang) .stop() .turnEnded(reason)            -> actions JSON
//     .hostCancelled(causeKind)                                     -> actions JSON
//   (a series argument is a Projector, or a wire series JSON string)
//     .settled(seriesJson, factsJson)                               -> actions JSON
//     .supervisorAnswered(token, answerJson, seriesJson, factsJson) -> actions JSON
//     .control(seriesJson|evalsDone|null)                           -> control JSON (P-4)
//     .applyControl(bodyText, seriesJson|null, fallbackLang)        -> {status, body, actions, armed}
//     .command('kloop'|'supervise', raw, seriesJson|null, lang)     -> {ok, text, actions, armed}
//     .setConfigRoute(routeJson|null) .setSettings(settingsJson) .setSupervise(bool) -> error|null
//   adviceFromReply(reply) -> {advice, note}; chooseEffort(requested|null, declaredJson, default|null)
//   guessLanguage(text) -> 'zh'|'en'; languageOfMessage(text) -> 'zh'|'en'|null
#include <memory>
#include <string>

#include "init.hpp"
#include "kopt/loop.hpp"

namespace kopt::addon {
namespace {

// A series argument: a Projector (its full series: file paths of the changes and whole commands,
// which the wire form leaves out and the supervisor digest needs), a wire series JSON string, or
// null/undefined for "no series".
std::optional<Series> series_arg(const Napi::CallbackInfo& info, std::size_t i) {
  if (info.Length() <= i || info[i].IsNull() || info[i].IsUndefined()) return std::nullopt;
  if (info[i].IsObject()) return UnwrapProjector(info.Env(), info[i]).series();
  const json j = JsonArg(info, i, "series");
  if (!j.is_object()) ThrowCoded(info.Env(), "KOPT_BAD_JSON", "series must be a JSON object");
  return series_from_wire(j);
}

HostFacts facts_arg(const Napi::CallbackInfo& info, std::size_t i) {
  HostFacts f;
  if (info.Length() <= i || info[i].IsUndefined() || info[i].IsNull()) return f;
  const json j = JsonArg(info, i, "facts");
  if (!j.is_object()) return f;
  f.agentIdle = j.value("agentIdle", true);
  f.humanQueued = j.value("humanQueued", false);
  f.hasUserTask = j.value("hasUserTask", true);
  return f;
}

Lang lang_arg(const Napi::CallbackInfo& info, std::size_t i) {
  if (info.Length() <= i || !info[i].IsString()) return Lang::en;
  return parse_lang(info[i].As<Napi::String>().Utf8Value()).value_or(Lang::en);
}

json actions_json(const Actions& a) {
  json out = json::array();
  for (const auto& x : a) out.push_back(x.to_json());
  return out;
}

Napi::String out(Napi::Env env, const json& j) { return Napi::String::New(env, js_stringify(j)); }

class LoopWrap : public Napi::ObjectWrap<LoopWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "LoopController",
                       {InstanceMethod("arm", &LoopWrap::Arm), InstanceMethod("stop", &LoopWrap::Stop),
                        InstanceMethod("turnEnded", &LoopWrap::TurnEnded),
                        InstanceMethod("hostCancelled", &LoopWrap::HostCancelled), InstanceMethod("settled", &LoopWrap::Settled),
                        InstanceMethod("supervisorAnswered", &LoopWrap::Answered),
                        InstanceMethod("control", &LoopWrap::Control),
                        InstanceMethod("applyControl", &LoopWrap::ApplyControl),
                        InstanceMethod("command", &LoopWrap::Command),
                        InstanceMethod("setConfigRoute", &LoopWrap::SetConfigRoute),
                        InstanceMethod("setSettings", &LoopWrap::SetSettings),
                        InstanceMethod("setSupervise", &LoopWrap::SetSupervise),
                        InstanceAccessor("armed", &LoopWrap::Armed, nullptr),
                        InstanceAccessor("reviewPending", &LoopWrap::ReviewPending, nullptr),
                        InstanceAccessor("language", &LoopWrap::Language, nullptr)});
  }

  explicit LoopWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<LoopWrap>(info) {
    LoopSettings st;
    if (info.Length() >= 1 && info[0].IsString()) st = LoopSettings::from_json(JsonArg(info, 0, "settings"));
    c_ = std::make_unique<LoopController>(st);
  }

 private:

  Napi::Value Arm(const Napi::CallbackInfo& info) {
    std::optional<long long> budget;
    if (info.Length() >= 1 && info[0].IsNumber()) {
      const double v = info[0].As<Napi::Number>().DoubleValue();
      if (v >= 1 && v <= 9999 && v == static_cast<double>(static_cast<long long>(v))) budget = static_cast<long long>(v);
    }
    return out(info.Env(), actions_json(c_->arm(budget, lang_arg(info, 1))));
  }
  Napi::Value Stop(const Napi::CallbackInfo& info) {
    return out(info.Env(), actions_json(c_->stop()));
  }
  Napi::Value TurnEnded(const Napi::CallbackInfo& info) {
    const std::string reason = info.Length() >= 1 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
    return out(info.Env(), actions_json(c_->turn_ended(reason)));
  }
  Napi::Value HostCancelled(const Napi::CallbackInfo& info) {
    const std::string cause = info.Length() >= 1 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
    return out(info.Env(), actions_json(c_->host_cancelled(cause)));
  }
  Napi::Value Settled(const Napi::CallbackInfo& info) {
    const auto s = series_arg(info, 0);
    return out(info.Env(), actions_json(c_->settled(s.value_or(Series{}), facts_arg(info, 1))));
  }
  Napi::Value Answered(const Napi::CallbackInfo& info) {
    const auto token = static_cast<std::uint64_t>(NumberArg(info, 0, "token"));
    const json a = JsonArg(info, 1, "answer");
    SupervisorAnswer ans;
    if (a.is_object()) {
      if (auto t = a.find("text"); t != a.end() && t->is_string()) ans.text = t->get<std::string>();
      if (auto f = a.find("finish"); f != a.end() && f->is_string()) ans.finish = f->get<std::string>();
    }
    const auto s = series_arg(info, 2);
    return out(info.Env(), actions_json(c_->supervisor_answered(token, ans, s.value_or(Series{}), facts_arg(info, 3))));
  }
  Napi::Value Control(const Napi::CallbackInfo& info) {
    // A number is evalsDone already computed by the host (derived.completedEvals).
    if (info.Length() >= 1 && info[0].IsNumber()) {
      return out(info.Env(), c_->control_json(static_cast<long long>(info[0].As<Napi::Number>().Int64Value())));
    }
    const auto s = series_arg(info, 0);
    return out(info.Env(), c_->control_json(s ? &*s : nullptr));
  }
  Napi::Value ApplyControl(const Napi::CallbackInfo& info) {
    const std::string body = StringArg(info, 0, "body");
    const auto s = series_arg(info, 1);
    const ControlReply r = apply_control(*c_, body, s ? &*s : nullptr, lang_arg(info, 2));
    json j = json::object();
    j["status"] = r.status;
    j["body"] = r.body;
    j["actions"] = actions_json(r.actions);
    j["armed"] = r.armed;
    return out(info.Env(), j);
  }
  Napi::Value Command(const Napi::CallbackInfo& info) {
    const std::string name = StringArg(info, 0, "name");
    const std::string raw = info.Length() >= 2 && info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
    const auto s = series_arg(info, 2);
    CommandReply r;
    if (name == "kloop") r = kloop_command(*c_, raw, s ? &*s : nullptr, lang_arg(info, 3));
    else if (name == "supervise") r = supervise_command(*c_, raw);
    else ThrowCoded(info.Env(), "KOPT_BAD_ARGUMENT", "unknown command: " + name);
    json j = json::object();
    j["ok"] = r.ok;
    j["text"] = r.text;
    j["actions"] = actions_json(r.actions);
    j["armed"] = r.armed;
    return out(info.Env(), j);
  }
  Napi::Value SetConfigRoute(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || info[0].IsNull() || info[0].IsUndefined()) c_->set_config_route(std::nullopt);
    else c_->set_config_route(Route::from_json(JsonArg(info, 0, "route")));
    return info.Env().Undefined();
  }
  Napi::Value SetSettings(const Napi::CallbackInfo& info) {
    c_->settings() = LoopSettings::from_json(JsonArg(info, 0, "settings"));
    return info.Env().Undefined();
  }
  Napi::Value SetSupervise(const Napi::CallbackInfo& info) {
    const bool on = info.Length() >= 1 && info[0].ToBoolean().Value();
    if (auto err = c_->set_supervise(on)) return Napi::String::New(info.Env(), *err);
    return info.Env().Null();
  }
  Napi::Value Armed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), c_->armed()); }
  Napi::Value ReviewPending(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), c_->review_pending());
  }
  Napi::Value Language(const Napi::CallbackInfo& info) {
    if (!c_->language()) return info.Env().Null();
    return Napi::String::New(info.Env(), std::string(lang_code(*c_->language())));
  }

  std::unique_ptr<LoopController> c_;
};

Napi::Value AdviceFromReply(const Napi::CallbackInfo& info) {
  const Verdict v = advice_from_reply(StringArg(info, 0, "reply"));
  json j = json::object();
  j["advice"] = v.advice ? json(*v.advice) : json(nullptr);
  j["note"] = v.note ? json(*v.note) : json(nullptr);
  return out(info.Env(), j);
}

Napi::Value ChooseEffort(const Napi::CallbackInfo& info) {
  std::optional<std::string> requested, def;
  if (info.Length() >= 1 && info[0].IsString()) requested = info[0].As<Napi::String>().Utf8Value();
  std::vector<std::string> declared;
  if (info.Length() >= 2 && info[1].IsString()) {
    const json d = JsonArg(info, 1, "declared");
    if (d.is_array()) for (const auto& e : d) if (e.is_string()) declared.push_back(e.get<std::string>());
  }
  if (info.Length() >= 3 && info[2].IsString()) def = info[2].As<Napi::String>().Utf8Value();
  const auto e = choose_effort(requested, declared, def);
  if (!e) return info.Env().Null();
  return Napi::String::New(info.Env(), *e);
}

Napi::Value GuessLanguage(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), std::string(lang_code(guess_lang(StringArg(info, 0, "text")))));
}

Napi::Value LanguageOfMessage(const Napi::CallbackInfo& info) {
  const auto l = language_of_message(StringArg(info, 0, "text"));
  if (!l) return info.Env().Null();
  return Napi::String::New(info.Env(), std::string(lang_code(*l)));
}

}  // namespace

void InitLoop(Napi::Env env, Napi::Object exports) {
  exports.Set("LoopController", LoopWrap::Define(env));
  exports.Set("adviceFromReply", Napi::Function::New(env, AdviceFromReply, "adviceFromReply"));
  exports.Set("chooseEffort", Napi::Function::New(env, ChooseEffort, "chooseEffort"));
  exports.Set("guessLanguage", Napi::Function::New(env, GuessLanguage, "guessLanguage"));
  exports.Set("languageOfMessage", Napi::Function::New(env, LanguageOfMessage, "languageOfMessage"));
}

}  // namespace kopt::addon
