// JS Projector class: converts strings and owns lifetimes, nothing else.
//   new Projector(routingJson?)  .feed(eventsText) -> {events, skipped, unreadable}
//   .replayPoint(artifact) -> {index, latencyMs, command} | undefined   .stats()  .version  .hasUserTask
//   Test build only (KOPT_TEST_EXPORTS): .seriesJson(sessionId, updatedAt?, controlJson?)
//   .seriesBuffer(…) .derivedJson(loopJson?), parseContractLines(text).
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
  if (!v.IsString()) Throw(env, "KOPT_BAD_ARGUMENT", "Projector config must be a JSON string");
  auto j = parse_json(v.As<Napi::String>().Utf8Value());
  if (!j) Throw(env, "KOPT_BAD_JSON", "Projector config is not valid JSON");
  if (std::string err = cfg.apply_json(*j); !err.empty()) Throw(env, "KOPT_BAD_CONFIG", err);
  return cfg;
}

namespace {

Napi::Object stats_object(Napi::Env env, const FeedStats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("events", Napi::Number::New(env, static_cast<double>(s.events)));
  o.Set("skipped", Napi::Number::New(env, static_cast<double>(s.skipped)));
  return o;
}

class JsProjector : public Napi::ObjectWrap<JsProjector> {
 public:
  KOPT_GUARDED_METHODS(JsProjector)
  static Napi::Function Define(Napi::Env env) {
    using P = JsProjector;
    std::vector<Napi::ClassPropertyDescriptor<P>> props = {
        InstanceMethod<&P::Method<&P::Feed>>("feed"), InstanceMethod<&P::Method<&P::ReplayPoint>>("replayPoint"),
        InstanceMethod<&P::Method<&P::Stats>>("stats"), InstanceAccessor<&P::Method<&P::Version>>("version"),
        InstanceAccessor<&P::Method<&P::HasUserTask>>("hasUserTask")};
#ifdef KOPT_TEST_EXPORTS
    props.push_back(InstanceMethod<&P::Method<&P::SeriesJson>>("seriesJson"));
    props.push_back(InstanceMethod<&P::Method<&P::SeriesBuffer>>("seriesBuffer"));
    props.push_back(InstanceMethod<&P::Method<&P::DerivedJson>>("derivedJson"));
#endif
    return DefineClass(env, "Projector", props);
  }

  explicit JsProjector(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsProjector>(info) {
    Guarded(info.Env(), [&] {
      // new Projector(configJson?) — or, internally, from a finished core Projector (loadSession).
      if (info.Length() == 1 && info[0].IsExternal()) {
        auto* p = info[0].As<Napi::External<Projector>>().Data();
        core_ = std::make_unique<Projector>(std::move(*p));
      } else {
        core_ = std::make_unique<Projector>(ConfigFrom(info.Env(), info.Length() ? info[0] : info.Env().Undefined()));
      }
      return 0;
    });
  }

  Projector& core() { return *core_; }

 private:
  // What it takes is what a Session takes (read_events_text, kopt/events.hpp).
  Napi::Value Feed(const Napi::CallbackInfo& info) {
    const std::string text = StringArg(info, 0, "feed(eventsText)");
    const FeedStats before = core_->stats();
    const EventsText r = read_events_text(text, [&](const json& ev) { core_->feed_event(ev); });
    if (!r.ok) Throw(info.Env(), "KOPT_BAD_EVENTS", "feed(): not a JSON array, an event object or JSONL of events");
    return FeedResult(info.Env(), {core_->stats().events - before.events, core_->stats().skipped - before.skipped + r.unreadable}, r.unreadable);
  }

#ifdef KOPT_TEST_EXPORTS
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
    if (!Absent(info, 1)) updated = NumberArg(info, 1, "seriesJson(…, updatedAt)");
    std::string control;
    if (!Absent(info, 2)) {
      control = StringArg(info, 2, "seriesJson(): controlJson");
      JsonObjectArg(info, 2, "seriesJson(): controlJson");
    }
    return core_->series_json(id, updated, control);
  }

  Napi::Value DerivedJson(const Napi::CallbackInfo& info) {
    json loop = json::object();
    if (auto j = OptionalJsonObjectArg(info, 0, "derivedJson(loopJson)")) loop = std::move(*j);
    return Napi::String::New(info.Env(), js_stringify(derived_json(core_->series(), core_->has_user_task(), loop)));
  }

#endif

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
      o.Set("sources", ToJs(info.Env(), to_json(carrier)["sources"]));
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

#ifdef KOPT_TEST_EXPORTS
Napi::Value ParseContractLines(const Napi::CallbackInfo& info) {
  std::string text = StringArg(info, 0, "parseContractLines(text)");
  json out = json::array();
  for (auto& p : contract_payloads(text)) out.push_back(std::move(p.payload));
  return ToJs(info.Env(), out);
}
#endif

}  // namespace

Napi::Object FeedResult(Napi::Env env, const FeedStats& s, std::size_t unreadable) {
  Napi::Object o = stats_object(env, s);
  o.Set("unreadable", Napi::Number::New(env, static_cast<double>(unreadable)));
  return o;
}

Projector& UnwrapProjector(Napi::Env env, Napi::Value value) {
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(ClassesOf(env).projector.Value()))
    Throw(env, "KOPT_BAD_ARGUMENT", "expected a Projector");
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
#ifdef KOPT_TEST_EXPORTS
  Export<ParseContractLines>(env, exports, "parseContractLines");
#endif
}

}  // namespace kopt::addon
