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
//     .parts(sinceRevision?) -> [Buffer]: the same answers (the plain body without since) as Buffers
//                              to write in order; the body's bulk is shared with the session, not copied
//   loadSession(sessionId, logPath, routingJson?) -> Promise<Session>: a past session's log read and
//     projected on a worker thread (streaming, zstd or plain JSONL); the Session carries
//     .skippedLines, .truncated and .warning; a log that cannot be read rejects (code KOPT_BAD_LOG).
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

#include "init.hpp"
#include "kopt/events.hpp"
#include "kopt/session.hpp"

namespace kopt::addon {
namespace {

std::string base36(std::uint64_t v) {
  std::string s;
  do {
    s.insert(s.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    v /= 36;
  } while (v);
  return s;
}

// What is drawn once per process (thread-safe: a function's static): ETags name a revision of one
// session object in one process, so an epoch keeps an ETag from an earlier process (or an earlier
// object for the same session) from matching; and each object numbers its revisions from its own
// base, drawn per process and object, so a `since` kept by a client across a restart or from
// another object of the same session is (all but always) unknown to this one and gets the full body.
struct ProcessDraw {
  std::string epoch;
  std::uint64_t revision_epoch;
};
const ProcessDraw& process_draw() {
  static const ProcessDraw draw{
      base36(std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32)), std::random_device{}()};
  return draw;
}
std::atomic<std::uint64_t> g_instances{0};

// One session object's numbering: its instance (for its ETags) and its revision base (20 bits of
// object, 32 of revision, so revisions stay below 2^53 and exact in JS).
struct Numbering {
  std::uint64_t instance, base;
  static Numbering next() {
    const std::uint64_t instance = ++g_instances;
    return {instance, ((process_draw().revision_epoch + instance) & 0xFFFFF) << 32};
  }
};

class JsSession : public Napi::ObjectWrap<JsSession> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Session",
                       {InstanceMethod<&JsSession::Feed>("feed"), InstanceMethod<&JsSession::Revise>("revise"),
                        InstanceMethod<&JsSession::Body>("body"), InstanceMethod<&JsSession::Delta>("delta"),
                        InstanceMethod<&JsSession::Parts>("parts"),
                        InstanceAccessor<&JsSession::ProjectorObj>("projector"),
                        InstanceAccessor<&JsSession::UpdatedAt>("updatedAt"),
                        InstanceAccessor<&JsSession::CompletedEvals>("completedEvals"),
                        InstanceAccessor<&JsSession::Revision>("revision"),
                        InstanceAccessor<&JsSession::MemoryBytes>("memoryBytes"),
                        InstanceAccessor<&JsSession::Etag>("etag"),
                        InstanceAccessor<&JsSession::SummaryKey>("summaryKey")});
  }

  // new Session(sessionId, projector | routingJson?) — or, internally, (sessionId, projector,
  // External<Prepared>) from loadSession: a core session made and warmed on the worker thread.
  struct Prepared {
    std::unique_ptr<Session> core;
    Numbering numbering;
  };
  explicit JsSession(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsSession>(info) {
    Napi::Env env = info.Env();
    const std::string id = StringArg(info, 0, "Session(sessionId)");
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
      core_ = std::make_unique<Session>(core, id, ChartOptions{}, numbering.base);
    }
    tag_ = "\"k" + process_draw().epoch + "." + base36(numbering.instance) + ".";
  }

 private:
  Napi::Value Feed(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto j = parse_json(StringArg(info, 0, "feed(eventsJson)"));
    if (!j || !(j->is_array() || j->is_object()))
      ThrowCoded(env, "KOPT_BAD_EVENTS", "feed(): not a JSON array or an event object (or nested too deep)");
    FeedStats s = core_->feed(*j);
    Napi::Object o = Napi::Object::New(env);
    o.Set("events", Napi::Number::New(env, static_cast<double>(s.events)));
    o.Set("skipped", Napi::Number::New(env, static_cast<double>(s.skipped)));
    return o;
  }

  Napi::Value Revise(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->revise(StringArg(info, 0, "revise(controlJson)"))));
  }

  Napi::Value Body(const Napi::CallbackInfo& info) {
    if (!buffer_.IsEmpty() && buffer_rev_ == core_->revision()) return buffer_.Value();
    Napi::Buffer<char> buf = Joined(info.Env(), core_->answer_parts(std::nullopt));
    buffer_ = Napi::Persistent(buf);
    buffer_rev_ = core_->revision();
    return buf;
  }

  // The answer as Buffers to write one after the other, without copying the body: [body head's
  // pieces…, tail] for `since` null or undefined (the plain body), [delta] for a kept revision,
  // else the full answer [prefix, body head's pieces…, tail].
  Napi::Value Parts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const bool plain = info.Length() < 1 || info[0].IsNull() || info[0].IsUndefined();
    const Session::Answer a = core_->answer_parts(plain ? std::nullopt : std::optional(SinceOf(NumberArg(info, 0, "parts(sinceRevision?)"))));
    Napi::Array out = Napi::Array::New(env);
    if (a.delta) {
      out.Set(0u, Napi::Buffer<char>::Copy(env, a.delta->data(), a.delta->size()));
      return out;
    }
    std::uint32_t k = 0;
    if (!a.prefix.empty()) out.Set(k++, Napi::Buffer<char>::Copy(env, a.prefix.data(), a.prefix.size()));
    std::unordered_map<const std::string*, Napi::Reference<Napi::Buffer<char>>> kept;
    for (std::size_t i = 0; i < a.head.size(); ++i) {
      const TextPiece& p = a.head[i];
      if (auto again = kept.find(p.get()); again != kept.end()) {  // a piece that comes twice
        out.Set(k++, again->second.Value());
        continue;
      }
      auto it = piece_buffers_.find(p.get());
      Napi::Buffer<char> b = it != piece_buffers_.end() ? it->second.Value() : SharedBuffer(env, p);
      out.Set(k++, b);
      kept.emplace(p.get(), it != piece_buffers_.end() ? std::move(it->second) : Napi::Persistent(b));
    }
    piece_buffers_ = std::move(kept);
    out.Set(k++, Napi::Buffer<char>::Copy(env, a.tail.data(), a.tail.size()));
    return out;
  }

  Napi::Value Delta(const Napi::CallbackInfo& info) {
    return Joined(info.Env(), core_->answer_parts(SinceOf(NumberArg(info, 0, "delta(sinceRevision)"))));
  }

  // An answer as one Buffer (a copy).
  static Napi::Buffer<char> Joined(Napi::Env env, const Session::Answer& a) {
    Napi::Buffer<char> buf = Napi::Buffer<char>::New(env, a.size());
    a.copy_to(buf.Data());
    return buf;
  }

  // Anything that is not a whole revision number is simply not a kept revision: the full body.
  static std::uint64_t SinceOf(double d) {
    const bool whole = d >= 0 && d < 9007199254740992.0 && d == static_cast<double>(static_cast<std::uint64_t>(d));
    return whole ? static_cast<std::uint64_t>(d) : std::numeric_limits<std::uint64_t>::max();
  }

  // A Buffer over the bytes of a shared immutable string, which it keeps alive (no copy). Its size
  // is not reported as external memory: V8 counts an external buffer's backing store itself
  // (ArrayBufferSweeper), and counted twice, each 33 MB body at 1M events hurried the host into
  // full collections of its whole heap (0.1–0.35 s each; docs/performance.md, run P11).
  static Napi::Buffer<char> SharedBuffer(Napi::Env env, std::shared_ptr<const std::string> text) {
    auto* keep = new std::shared_ptr<const std::string>(std::move(text));
    return Napi::Buffer<char>::New(
        env, const_cast<char*>((*keep)->data()), (*keep)->size(), [](Napi::Env, char*, std::shared_ptr<const std::string>* k) { delete k; }, keep);
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
  // What the session's row of a comparison is made from (Session::summary_key): equal keys, equal rows.
  Napi::Value SummaryKey(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), core_->summary_key()); }
  Napi::Value Etag(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), tag_ + base36(core_->revision()) + "\"");
  }

  Napi::ObjectReference projector_;
  std::unique_ptr<Session> core_;

 public:
  Session& core() { return *core_; }

 private:
  std::string tag_;
  Napi::Reference<Napi::Buffer<char>> buffer_;
  std::uint64_t buffer_rev_ = 0;
  // The head's pieces as Buffers, from one full answer to the next (only those still in the head):
  // most of a 1M-event body (33 MB in ~130 pieces) lasts from revision to revision, and new Buffers
  // for it on every full answer made V8 count 33 MB more external memory each time, hurrying the
  // host into collections (docs/performance.md, run P12). A kept Buffer holds its piece, which the
  // projector holds anyway, so keying by its address is safe.
  std::unordered_map<const std::string*, Napi::Reference<Napi::Buffer<char>>> piece_buffers_;
};

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
    session_->body_head();     // the outline, the points' texts and the chart, in the body's pieces
    session_->summary();       // its row of a comparison, with its overlay's items (O(points), so here)
    session_->approx_bytes();  // its size, for the past-session cache (O(points), so here)
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
    Napi::Object session = ClassesOf(env).session.New(
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
  std::string id = StringArg(info, 0, "loadSession(sessionId)");
  std::string path = StringArg(info, 1, "loadSession(…, logPath)");
  ProjectionConfig cfg = ConfigFrom(env, info.Length() > 2 ? info[2] : env.Undefined());
  auto* w = new LoadSessionWorker(env, std::move(id), std::move(path), std::move(cfg));
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

}  // namespace

Session* SessionOf(Napi::Env env, Napi::Value value) {
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(ClassesOf(env).session.Value())) return nullptr;
  return &JsSession::Unwrap(value.As<Napi::Object>())->core();
}

void InitSession(Napi::Env env, Napi::Object exports) {
  Napi::Function ctor = JsSession::Define(env);
  ClassesOf(env).session = Napi::Persistent(ctor);
  exports.Set("Session", ctor);
  exports.Set("loadSession", Napi::Function::New(env, LoadSession, "loadSession"));
}

}  // namespace kopt::addon
