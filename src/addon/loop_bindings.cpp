// The loop's free helpers for JavaScript (the loop itself is the Session's: session_bindings.cpp).
//   chooseEffort(requested|null, declaredJson, default|null) -> effort | null
//   guessLanguage(text) -> 'zh'|'en'
//   messageSender(dataJson) -> 'user'|'loop'|'other'|'none': who sent a message (kopt/events.hpp,
//   message_from), for the loop's reading of the host's inbox and its last human message
//   loopRules: the loop settings' defaults and bounds (loop_rules_json), which lib/config.mjs
//   validates the plugin config with
//   Test build only (KOPT_TEST_EXPORTS): adviceFromReply(reply) -> {advice, note} JSON;
//   languageOfMessage(text) -> 'zh'|'en'|null.
#include <string>
#include <vector>

#include "init.hpp"
#include "kopt/events.hpp"
#include "kopt/loop.hpp"

namespace kopt::addon {
namespace {

Napi::Value ChooseEffort(const Napi::CallbackInfo& info) {
  const auto requested = OptionalStringArg(info, 0, "chooseEffort(requested)");
  const json d = JsonArg(info, 1, "chooseEffort(…, declaredJson)");
  if (!d.is_array()) Throw(info.Env(), "KOPT_BAD_JSON", "chooseEffort(…, declaredJson) must be a JSON array of strings");
  std::vector<std::string> declared;
  for (const auto& e : d) {
    if (!e.is_string()) Throw(info.Env(), "KOPT_BAD_JSON", "chooseEffort(…, declaredJson) must be a JSON array of strings, not " + js_stringify(e));
    declared.push_back(e.get<std::string>());
  }
  const auto e = choose_effort(requested, declared, OptionalStringArg(info, 2, "chooseEffort(…, default)"));
  return e ? Napi::Value(Napi::String::New(info.Env(), *e)) : info.Env().Null();
}

Napi::Value GuessLanguage(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), std::string(lang_code(guess_lang(StringArg(info, 0, "guessLanguage(text)")))));
}

Napi::Value MessageSender(const Napi::CallbackInfo& info) {
  const json d = JsonArg(info, 0, "messageSender(dataJson)");
  const char* who = "none";
  switch (message_from(d).sender) {
    case Sender::user: who = "user"; break;
    case Sender::loop: who = "loop"; break;
    case Sender::other: who = "other"; break;
    case Sender::none: break;
  }
  return Napi::String::New(info.Env(), who);
}

#ifdef KOPT_TEST_EXPORTS
Napi::Value AdviceFromReply(const Napi::CallbackInfo& info) {
  const Verdict v = advice_from_reply(StringArg(info, 0, "adviceFromReply(reply)"));
  json j = json::object();
  j["advice"] = v.advice ? json(*v.advice) : json(nullptr);
  j["note"] = v.note ? json(*v.note) : json(nullptr);
  return Napi::String::New(info.Env(), js_stringify(j));
}

Napi::Value LanguageOfMessage(const Napi::CallbackInfo& info) {
  const auto l = language_of_message(StringArg(info, 0, "languageOfMessage(text)"));
  return l ? Napi::Value(Napi::String::New(info.Env(), std::string(lang_code(*l)))) : info.Env().Null();
}
#endif

}  // namespace

void InitLoop(Napi::Env env, Napi::Object exports) {
  exports.Set("loopRules", ToJs(env, loop_rules_json()));
  Export<ChooseEffort>(env, exports, "chooseEffort");
  Export<GuessLanguage>(env, exports, "guessLanguage");
  Export<MessageSender>(env, exports, "messageSender");
#ifdef KOPT_TEST_EXPORTS
  Export<AdviceFromReply>(env, exports, "adviceFromReply");
  Export<LanguageOfMessage>(env, exports, "languageOfMessage");
#endif
}

}  // namespace kopt::addon
