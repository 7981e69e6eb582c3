// JS Projector class and contract-line parsing: converts strings and owns lifetimes, nothing else.
#include <memory>

#include "init.hpp"
#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/finalize.hpp"

namespace kopt::addon {

ProjectionConfig ConfigFrom(Napi::Env env, const Napi::Value& v) {
  ProjectionConfig cfg;
  if (v.IsUndefined() || v.IsNull()) return cfg;
  if (!v.IsString()) ThrowCoded(env, "KOPT_BAD_CONFIG", "Projector config must be a JSON string");
  auto j = parse_json(v.As<Napi::String>().Utf8Value());
  if (!j) ThrowCoded(env, "KOPT_BAD_CONFIG", "Projector config is not valid JSON");
  if (std::string err = cfg.apply_json(*j); !err.empty()) ThrowCoded(env, "KOPT_BAD_CONFIG", err);
  return cfg;
}

namespace {

Napi::Object stats_object(Napi::Env env, const FeedStats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("events", Napi::Number::New(env, static_cast<double>(s.events)));
  o.Set("skipped", Napi::Number::New(env, static_cast<double>(s.skipped)));
  return o;
}

Napi::Value parse_in_js(Napi::Env env, const std::string& text) {
  Napi::Object json_obj = env.Global().Get("JSON").As<Napi::Object>();
  return json_obj.Get("parse").As<Napi::Function>().Call(json_obj, {Napi::String::New(env, text)});
}

class JsProjector : public Napi::ObjectWrap<JsProjector> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Projector",
                       {InstanceMethod<&JsProjector::Feed>("feed"),
                        InstanceMethod<&JsProjector::SeriesJson>("seriesJson"),
                        InstanceMethod<&JsProjector::SeriesBuffer>("seriesBuffer"),
                        InstanceMethod<&JsProjector::DerivedJson>("derivedJson"),
                        InstanceMethod<&JsProjector::ReplayPoint>("replayPoint"),
                        InstanceMethod<&JsProjector::Stats>("stats"),
                        InstanceAccessor<&JsProjector::Version>("version"),
                        InstanceAccessor<&JsProjector::HasUserTask>("hasUserTask")});
  }

  explicit JsProjector(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsProjector>(info) {
    // new Projector(configJson?) — or, internally, from a finished core Projector (loadSession).
    if (info.Length() == 1 && info[0].IsExternal()) {
      auto* p = info[0].As<Napi::External<Projector>>().Data();
      core_ = std::make_unique<Projector>(std::move(*p));
      return;
    }
    core_ = std::make_unique<Projector>(ConfigFrom(info.Env(), info.Length() ? info[0] : info.Env().Undefined()));
  }

  Projector& core() { return *core_; }

 private:
  Napi::Value Feed(const Napi::CallbackInfo& info) {
    std::string text = StringArg(info, 0, "feed(eventsJson)");
    FeedStats before = core_->stats();
    if (auto j = parse_json(text); j && (j->is_array() || j->is_object())) {
      core_->feed(*j);
    } else {
      // Not one JSON value: read it as JSONL, skipping (and counting) lines that do not parse.
      LogReadStats ls;
      bool ok = read_log_text(text, [&](const json& ev) { core_->feed_event(ev); }, ls);
      if (!ok && ls.events == 0)
        ThrowCoded(info.Env(), "KOPT_BAD_EVENTS", "feed(): not a JSON array, an event object or JSONL of events");
      FeedStats d{core_->stats().events - before.events, core_->stats().skipped - before.skipped + ls.skipped};
      return stats_object(info.Env(), d);
    }
    FeedStats d{core_->stats().events - before.events, core_->stats().skipped - before.skipped};
    return stats_object(info.Env(), d);
  }

  Napi::Value SeriesJson(const Napi::CallbackInfo& info) {
    const std::string& body = SeriesBody(info);
    return Napi::String::New(info.Env(), body);
  }

  // The same body as UTF-8 bytes in a Buffer: no string decoding, for the HTTP route to send as is.
  Napi::Value SeriesBuffer(const Napi::CallbackInfo& info) {
    const std::string& body = SeriesBody(info);
    return Napi::Buffer<char>::Copy(info.Env(), body.data(), body.size());
  }

  const std::string& SeriesBody(const Napi::CallbackInfo& info) {
    std::string id = StringArg(info, 0, "seriesJson(sessionId)");
    double updated = 0;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      updated = NumberArg(info, 1, "seriesJson(…, updatedAt)");
    }
    std::string control;
    if (info.Length() > 2 && !info[2].IsUndefined() && !info[2].IsNull()) {
      control = StringArg(info, 2, "seriesJson(): controlJson");
      auto j = parse_json(control);
      if (!j || !j->is_object()) ThrowCoded(info.Env(), "KOPT_BAD_ARGUMENT", "seriesJson(): controlJson must be a JSON object");
    }
    return core_->series_json(id, updated, control);
  }

  Napi::Value DerivedJson(const Napi::CallbackInfo& info) {
    json loop = json::object();
    if (info.Length() > 0 && !info[0].IsUndefined() && !info[0].IsNull()) {
      auto j = parse_json(StringArg(info, 0, "derivedJson(loopJson)"));
      if (!j || !j->is_object()) ThrowCoded(info.Env(), "KOPT_BAD_ARGUMENT", "derivedJson(): loopJson must be a JSON object");
      loop = std::move(*j);
    }
    return Napi::String::New(info.Env(), js_stringify(derived_json(core_->series(), core_->has_user_task(), loop)));
  }

  // kernel_finalize's pick (spec H-3, C++: kopt/finalize.hpp): {index, latencyMs, command, plugin,
  // evaluationId?, sources?} or undefined; a plugin point (DV-13) has no command and is measured again
  // from its sources.
  Napi::Value ReplayPoint(const Napi::CallbackInfo& info) {
    std::string artifact = StringArg(info, 0, "replayPoint(artifact)");
    auto pick = pick_replay_point(core_->series(), artifact);
    if (!pick) return info.Env().Undefined();
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("index", Napi::Number::New(info.Env(), static_cast<double>(pick->index)));
    o.Set("latencyMs", Napi::Number::New(info.Env(), pick->latencyMs));
    o.Set("command", Napi::String::New(info.Env(), pick->command));
    o.Set("plugin", Napi::Boolean::New(info.Env(), pick->plugin));
    if (pick->evaluationId) o.Set("evaluationId", Napi::String::New(info.Env(), *pick->evaluationId));
    if (pick->sources) {
      Iteration carrier;  // the wire form of `sources` is the series'
      carrier.sources = pick->sources;
      json wire = to_json(carrier);
      Napi::Object JSON = info.Env().Global().Get("JSON").As<Napi::Object>();
      o.Set("sources", JSON.Get("parse").As<Napi::Function>().Call(JSON, {Napi::String::New(info.Env(), js_stringify(wire["sources"]))}));
    }
    return o;
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) { return stats_object(info.Env(), core_->stats()); }
  Napi::Value Version(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->version()));
  }
  Napi::Value HasUserTask(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), core_->has_user_task()); }

  std::unique_ptr<Projector> core_;
};

Napi::Value ParseContractLines(const Napi::CallbackInfo& info) {
  std::string text = StringArg(info, 0, "parseContractLines(text)");
  json out = json::array();
  for (auto& p : contract_payloads(text)) out.push_back(std::move(p.payload));
  return parse_in_js(info.Env(), js_stringify(out));
}

}  // namespace

Projector& UnwrapProjector(Napi::Env env, Napi::Value value) {
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(ClassesOf(env).projector.Value()))
    ThrowCoded(env, "KOPT_BAD_ARGUMENT", "expected a Projector");
  return JsProjector::Unwrap(value.As<Napi::Object>())->core();
}

Napi::Object NewProjector(Napi::Env env, Napi::Value config) {
  if (config.IsUndefined() || config.IsNull()) return ClassesOf(env).projector.New({});
  return ClassesOf(env).projector.New({config});
}

Napi::Object NewProjectorFrom(Napi::Env env, Projector&& core) {
  return ClassesOf(env).projector.New({Napi::External<Projector>::New(env, &core)});
}

void InitProjection(Napi::Env env, Napi::Object exports) {
  Napi::Function ctor = JsProjector::Define(env);
  ClassesOf(env).projector = Napi::Persistent(ctor);
  exports.Set("Projector", ctor);
  exports.Set("parseContractLines", Napi::Function::New(env, ParseContractLines, "parseContractLines"));
}

}  // namespace kopt::addon
