// JS Session class: the /series route's one crossing per request. It owns a JS Projector (the
// loop and the tools read the same projection through it) and a core kopt::Session; the route
// asks for the revision, compares ETags in JS, and takes the body of a revision as one Buffer.
//
//   new Session(sessionId, projector | routingJson?)
//     .feed(eventsJson) -> {events, skipped}       .projector  .updatedAt  .completedEvals
//     .revise(controlJson) -> revision              .revision   .etag   .memoryBytes (about, in C++)
//     .body() -> Buffer (the /series body of the current revision; the same Buffer until it changes)
//     .delta(sinceRevision) -> Buffer: {"kind":"delta",…} since that revision, or {"kind":"full",
//                              "revision","body"} when it is not kept (docs/protocol.md)
//   loadSession(sessionId, logPath, routingJson?) -> Promise<Session>: a past session's log read and
//     projected on a worker thread (streaming, zstd or plain JSONL); the Session carries
//     .skippedLines, .truncated and .warning; a log that cannot be read rejects (code KOPT_BAD_LOG).
#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>

#include "init.hpp"
#include "kopt/events.hpp"
#include "kopt/session.hpp"

namespace kopt::addon {
namespace {

// ETags name a revision of one session object in one process: an epoch drawn at load time keeps
// an ETag from an earlier process (or an earlier object for the same session) from matching.
std::string g_epoch;
std::atomic<std::uint64_t> g_instances{0};
// Each object numbers its revisions from its own base, drawn per process and object, so a `since`
// kept by a client across a restart or from another object of the same session is (all but
// always) unknown to this one and gets the full body.
std::uint64_t g_revision_epoch = 0;

std::string base36(std::uint64_t v) {
  std::string s;
  do {
    s.insert(s.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    v /= 36;
  } while (v);
  return s;
}

// One session object's numbering: its instance (for its ETags) and its revision base (20 bits of
// object, 32 of revision, so revisions stay below 2^53 and exact in JS).
struct Numbering {
  std::uint64_t instance, base;
  static Numbering next() {
    const std::uint64_t instance = ++g_instances;
    return {instance, ((g_revision_epoch + instance) & 0xFFFFF) << 32};
  }
};

class JsSession : public Napi::ObjectWrap<JsSession> {
 public:
  static Napi::FunctionReference* constructor;
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Session",
                       {InstanceMethod<&JsSession::Feed>("feed"), InstanceMethod<&JsSession::Revise>("revise"),
                        InstanceMethod<&JsSession::Body>("body"), InstanceMethod<&JsSession::Delta>("delta"),
                        InstanceAccessor<&JsSession::ProjectorObj>("projector"),
                        InstanceAccessor<&JsSession::UpdatedAt>("updatedAt"),
                        InstanceAccessor<&JsSession::CompletedEvals>("completedEvals"),
                        InstanceAccessor<&JsSession::Revision>("revision"),
                        InstanceAccessor<&JsSession::MemoryBytes>("memoryBytes"),
                        InstanceAccessor<&JsSession::Etag>("etag")});
  }

  // new Session(sessionId, projector | routingJson?) — or, internally, (sessionId, projector,
  // External<Prepared>) from loadSession: a core session made and warmed on the worker thread.
  struct Prepared {
    std::unique_ptr<Session> core;
    Numbering numbering;
  };
  explicit JsSession(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsSession>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "Session(sessionId) must be a string");
    Napi::Value arg = info.Length() > 1 ? info[1] : env.Undefined();
    Napi::Object projector = arg.IsObject() ? arg.As<Napi::Object>() : NewProjector(env, arg);
    Projector& core = UnwrapProjector(env, projector);
    projector_ = Napi::Persistent(projector);
    Numbering numbering;
    if (info.Length() > 2 && info[2].IsExternal()) {
      Prepared& prepared = *info[2].As<Napi::External<Prepared>>().Data();
      core_ = std::move(prepared.core);
      core_->rebind(core);
      numbering = prepared.numbering;
    } else {
      numbering = Numbering::next();
      core_ = std::make_unique<Session>(core, info[0].As<Napi::String>().Utf8Value(), ChartOptions{}, numbering.base);
    }
    tag_ = "\"k" + g_epoch + "." + base36(numbering.instance) + ".";
  }

 private:
  Napi::Value Feed(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "feed(eventsJson) must be a string");
    auto j = parse_json(info[0].As<Napi::String>().Utf8Value());
    if (!j || !(j->is_array() || j->is_object()))
      ThrowCoded(env, "KOPT_BAD_EVENTS", "feed(): not a JSON array or an event object (or nested too deep)");
    FeedStats s = core_->feed(*j);
    Napi::Object o = Napi::Object::New(env);
    o.Set("events", Napi::Number::New(env, static_cast<double>(s.events)));
    o.Set("skipped", Napi::Number::New(env, static_cast<double>(s.skipped)));
    return o;
  }

  Napi::Value Revise(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "revise(controlJson) must be a string");
    return Napi::Number::New(env, static_cast<double>(core_->revise(info[0].As<Napi::String>().Utf8Value())));
  }

  Napi::Value Body(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!buffer_.IsEmpty() && buffer_rev_ == core_->revision()) return buffer_.Value();
    // One copy, straight from the core's pieces: the core reuses its storage for the next
    // revision while this one may still be on its way to a client.
    const Session::Pieces pieces = core_->pieces();
    Napi::Buffer<char> buf = Napi::Buffer<char>::New(env, pieces.size());
    pieces.copy_to(buf.Data());
    buffer_ = Napi::Persistent(buf);
    buffer_rev_ = core_->revision();
    return buf;
  }

  Napi::Value Delta(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsNumber()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "delta(sinceRevision) must be a number");
    const double v = info[0].As<Napi::Number>().DoubleValue();
    // Anything that is not a whole revision number is simply not a kept revision: the full body.
    const bool whole = v >= 0 && v < 9007199254740992.0 && v == static_cast<double>(static_cast<std::uint64_t>(v));
    const std::string* d = whole ? core_->delta(static_cast<std::uint64_t>(v)) : nullptr;
    if (d) return Napi::Buffer<char>::Copy(env, d->data(), d->size());
    const std::string prefix = core_->full_prefix();
    const Session::Pieces pieces = core_->pieces();
    Napi::Buffer<char> buf = Napi::Buffer<char>::New(env, prefix.size() + pieces.size() + 1);
    std::copy(prefix.begin(), prefix.end(), buf.Data());
    pieces.copy_to(buf.Data() + prefix.size());
    buf.Data()[buf.Length() - 1] = '}';
    return buf;
  }

  Napi::Value ProjectorObj(const Napi::CallbackInfo&) { return projector_.Value(); }
  Napi::Value UpdatedAt(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), core_->updated_at()); }
  Napi::Value CompletedEvals(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->completed_evals()));
  }
  // About how many bytes this session holds in C++ (Session::approx_bytes).
  Napi::Value MemoryBytes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->approx_bytes()));
  }
  Napi::Value Revision(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->revision()));
  }
  Napi::Value Etag(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), tag_ + base36(core_->revision()) + "\"");
  }

  Napi::ObjectReference projector_;
  std::unique_ptr<Session> core_;
  std::string tag_;
  Napi::Reference<Napi::Buffer<char>> buffer_;
  std::uint64_t buffer_rev_ = 0;
};

Napi::FunctionReference* JsSession::constructor = nullptr;

// Reads and projects a past session's log off the JS thread, one event at a time (never one tree),
// and assembles its first body there too (every point's text and the chart), so that the first
// answer on the JS thread only copies bytes.
class LoadSessionWorker : public Napi::AsyncWorker {
 public:
  LoadSessionWorker(Napi::Env env, std::string id, std::string path, ProjectionConfig cfg)
      : Napi::AsyncWorker(env, "kopt.loadSession"),
        deferred_(Napi::Promise::Deferred::New(env)),
        id_(std::move(id)),
        path_(std::move(path)),
        core_(std::move(cfg)),
        numbering_(Numbering::next()) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    session_ = std::make_unique<Session>(core_, id_, ChartOptions{}, numbering_.base);
    ok_ = read_log_file(path_, [&](const json& ev) {
      session_->note_time(Session::event_time(ev));
      core_.feed_event(ev);
    }, stats_);
    if (!ok_) return;
    session_->completed_evals();  // the outline
    session_->pieces();           // the points' texts and the chart
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (!ok_) {
      Napi::Error err = Napi::Error::New(env, stats_.error.empty() ? "the log cannot be read" : stats_.error);
      err.Set("code", Napi::String::New(env, "KOPT_BAD_LOG"));
      deferred_.Reject(err.Value());
      return;
    }
    Napi::Object projector = NewProjectorFrom(env, std::move(core_));
    JsSession::Prepared prepared{std::move(session_), numbering_};
    Napi::Object session = JsSession::constructor->New(
        {Napi::String::New(env, id_), projector, Napi::External<JsSession::Prepared>::New(env, &prepared)});
    session.Set("skippedLines", Napi::Number::New(env, static_cast<double>(stats_.skipped)));
    session.Set("truncated", Napi::Boolean::New(env, stats_.truncated));
    if (!stats_.error.empty()) session.Set("warning", Napi::String::New(env, stats_.error));
    deferred_.Resolve(session);
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string id_, path_;
  Projector core_;
  Numbering numbering_;
  std::unique_ptr<Session> session_;
  LogReadStats stats_;
  bool ok_ = false;
};

Napi::Value LoadSession(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString())
    ThrowCoded(env, "KOPT_BAD_ARGUMENT", "loadSession(sessionId, logPath, routingJson?): sessionId and logPath must be strings");
  ProjectionConfig cfg = ConfigFrom(env, info.Length() > 2 ? info[2] : env.Undefined());
  auto* w = new LoadSessionWorker(env, info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::String>().Utf8Value(),
                                  std::move(cfg));
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

}  // namespace

void InitSession(Napi::Env env, Napi::Object exports) {
  if (g_epoch.empty()) {
    g_epoch = base36(std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32));
    g_revision_epoch = std::random_device{}();
  }
  Napi::Function ctor = JsSession::Define(env);
  JsSession::constructor = new Napi::FunctionReference(Napi::Persistent(ctor));
  exports.Set("Session", ctor);
  exports.Set("loadSession", Napi::Function::New(env, LoadSession, "loadSession"));
}

}  // namespace kopt::addon
