// JS Session class: one object per session, holding the whole of it in C++ (as better-sqlite3's
// Database holds its statements): the projector, the core kopt::Session (revisions, the body, the
// deltas) and the session's loop controller. The /series route asks it for the revision (revise()
// makes the control object itself) and, for a 200, for the answer's Buffers; nothing of the
// session's state is kept in JS. Past sessions (read from a log file) and live ones are this class.
//
//   new Session(sessionId, projector | routingJson?, loopJson?)
//     loopJson: {"settings": LoopSettings (the plugin's loop config), "route": the configured
//               supervisor {provider, model, reasoningEffort?}}
//     .feed(eventsText) -> {events, skipped, unreadable}: a JSON array, one event or JSONL
//                          (read_events_text, kopt/events.hpp)        .skip(n)
//     .revise() -> revision      .parts(sinceRevision?) -> [Buffer]: the plain body without since,
//                                  else the delta since that revision or the full answer
//                                  {"kind":"full",…} (docs/protocol.md); the body's bulk is shared
//     .control (the control object's JSON text, for the wire as it is)
//     .projector  .updatedAt  .completedEvals  .revision  .etag  .memoryBytes
//     .fed  .unreadable (log positions fed, and of them unreadable)   .csv() -> the run as CSV (the report's)
//     .json() -> the run as the report's JSON     .markdown('zh'|'en') -> its measured points as a markdown table
//     .setEvaluation(stateJson | null): the session's place in the host's kernel_evaluate queue, which
//                          the control object carries as `evaluation` (lib/evaluate.mjs sets it)
//   the loop (kopt/loop.hpp; actions come back as an array of action objects for the host to carry out):
//     .turnEnded(reason) .hostCancelled(cause) .settled(agentIdle, humanQueued)
//     .supervisorAnswered(token, answerJson, agentIdle, humanQueued)             -> actions
//       answerJson: {text: string, finish: stop|max-tokens|error|timeout|aborted}
//     .applyControl(bodyText, lang) -> {status, body: the answer's JSON text, actions, armed}
//     .command('kloop'|'supervise', raw, lang) -> {ok, text, actions, armed}
//     .armed   .adoptLoop(otherSession)
//   loadSession(sessionId, logPath, routingJson?, loopJson?) -> Promise<Session>: a past session's
//     log read and projected on a worker thread (streaming, zstd or plain JSONL); the Session
//     carries .truncated and .warning, and .fed is one past the largest seq read (where a live
//     session's in-memory events continue); a log that cannot be read rejects (KOPT_BAD_LOG).
//   Test build only (KOPT_TEST_EXPORTS): .body() .delta(since) .reviseWith(controlJson).
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "init.hpp"
#include "promise_worker.hpp"
#include "kopt/events.hpp"
#include "kopt/session.hpp"

namespace kopt::addon {
namespace {

// Memory given back after a long feed (issue 48): projecting a log leaves the freed parse trees of its
// events between the session's own blocks, in pages glibc keeps (at 1M events about 20 MB of the
// process's RSS). After kTrimAfterEvents events fed since the last time (in any session, a log read off
// the thread included), the next answer queues malloc_trim(0) on the thread pool: about 2 ms there,
// nothing on the JS thread. A live session's few events at a time never add up to it for long.
constexpr std::size_t kTrimAfterEvents = 1 << 16;
std::atomic<std::size_t> fed_since_trim{0};
std::atomic<bool> trim_queued{false};

class TrimWorker : public Napi::AsyncWorker {
 public:
  explicit TrimWorker(Napi::Env env) : Napi::AsyncWorker(env, "kopt.trim") {}
  void Execute() override {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
  }
  void OnOK() override { trim_queued = false; }
  void OnError(const Napi::Error&) override { trim_queued = false; }
};

void NoteFed(std::size_t events) { fed_since_trim += events; }

void TrimIfFedMuch(Napi::Env env) {
  if (fed_since_trim.load() < kTrimAfterEvents || trim_queued.exchange(true)) return;
  fed_since_trim = 0;
  (new TrimWorker(env))->Queue();
}

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

// The loop's settings and configured route, from loopJson (absent: the defaults, no route).
void ConfigureLoop(Napi::Env env, LoopController& loop, const std::optional<json>& options) {
  if (!options) return;
  if (auto it = options->find("settings"); it != options->end()) {
    if (!it->is_object()) Throw(env, "KOPT_BAD_JSON", "loopJson.settings must be a JSON object");
    loop.settings() = LoopSettings::from_json(*it);
  }
  if (auto it = options->find("route"); it != options->end() && !it->is_null()) {
    auto route = Route::from_json(*it);
    if (!route) Throw(env, "KOPT_BAD_JSON", "loopJson.route needs a provider and a model");
    loop.set_config_route(std::move(route));
  }
}

Lang LangArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  static const char* const kLangs[] = {"zh", "en", nullptr};
  return *parse_lang(OneOfArg(info, i, what, kLangs));
}

// The supervisor's answer as the host saw it: {text, finish}, each required.
SupervisorAnswer AnswerArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  static const char* const kFinishes[] = {"stop", "max-tokens", "error", "timeout", "aborted"};
  const json a = JsonObjectArg(info, i, what);
  const auto text = a.find("text"), finish = a.find("finish");
  if (text == a.end() || !text->is_string()) Throw(info.Env(), "KOPT_BAD_JSON", std::string(what) + ": text must be a string");
  if (finish == a.end() || !finish->is_string() ||
      std::find(std::begin(kFinishes), std::end(kFinishes), finish->get_ref<const std::string&>()) == std::end(kFinishes))
    Throw(info.Env(), "KOPT_BAD_JSON", std::string(what) + ": finish must be stop | max-tokens | error | timeout | aborted");
  return {text->get<std::string>(), finish->get<std::string>()};
}

class JsSession : public Napi::ObjectWrap<JsSession> {
 public:
  KOPT_GUARDED_METHODS(JsSession)
  static Napi::Function Define(Napi::Env env) {
    using S = JsSession;
    std::vector<PropertyDescriptor> props = {
        InstanceMethod<&S::Method<&S::Feed>>("feed"), InstanceMethod<&S::Method<&S::Skip>>("skip"),
        InstanceMethod<&S::Method<&S::Revise>>("revise"), InstanceMethod<&S::Method<&S::Parts>>("parts"),
        InstanceMethod<&S::Method<&S::TurnEnded>>("turnEnded"),
        InstanceMethod<&S::Method<&S::HostCancelled>>("hostCancelled"),
        InstanceMethod<&S::Method<&S::Settled>>("settled"),
        InstanceMethod<&S::Method<&S::SupervisorAnswered>>("supervisorAnswered"),
        InstanceMethod<&S::Method<&S::ApplyControl>>("applyControl"),
        InstanceMethod<&S::Method<&S::Command>>("command"),
        InstanceMethod<&S::Method<&S::AdoptLoop>>("adoptLoop"), InstanceMethod<&S::Method<&S::Csv>>("csv"),
        InstanceMethod<&S::Method<&S::Json>>("json"), InstanceMethod<&S::Method<&S::Markdown>>("markdown"),
        InstanceMethod<&S::Method<&S::SetEvaluation>>("setEvaluation"),
        InstanceAccessor<&S::Method<&S::Control>>("control"),
        InstanceAccessor<&S::Method<&S::Armed>>("armed"),
        InstanceAccessor<&S::Method<&S::ProjectorObj>>("projector"),
        InstanceAccessor<&S::Method<&S::UpdatedAt>>("updatedAt"),
        InstanceAccessor<&S::Method<&S::CompletedEvals>>("completedEvals"),
        InstanceAccessor<&S::Method<&S::Revision>>("revision"),
        InstanceAccessor<&S::Method<&S::MemoryBytes>>("memoryBytes"),
        InstanceAccessor<&S::Method<&S::Etag>>("etag"),
        InstanceAccessor<&S::Method<&S::SummaryKey>>("summaryKey"),
        InstanceAccessor<&S::Method<&S::Fed>>("fed"),
        InstanceAccessor<&S::Method<&S::Unreadable>>("unreadable"),
    };
#ifdef KOPT_TEST_EXPORTS
    props.push_back(InstanceMethod<&S::Method<&S::Body>>("body"));
    props.push_back(InstanceMethod<&S::Method<&S::Delta>>("delta"));
    props.push_back(InstanceMethod<&S::Method<&S::ReviseWith>>("reviseWith"));
#endif
    return DefineClass(env, "Session", props);
  }

  // new Session(sessionId, projector | routingJson?, loopJson?) — or, internally, (sessionId,
  // projector, undefined, External<Prepared>) from loadSession: a core session made on the worker.
  struct Prepared {
    std::unique_ptr<Session> core;
    Numbering numbering;
  };
  explicit JsSession(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsSession>(info) {
    Napi::Env env = info.Env();
    Guarded(env, [&] {
      const std::string id = StringArg(info, 0, "Session(sessionId)");
      Napi::Value arg = info.Length() > 1 ? info[1] : env.Undefined();
      Napi::Object projector = arg.IsObject() ? arg.As<Napi::Object>() : NewProjector(env, arg);
      Projector& core = UnwrapProjector(env, projector);
      projector_ = Napi::Persistent(projector);
      Numbering numbering;
      if (info.Length() > 3 && info[3].IsExternal()) {
        Prepared& prepared = *info[3].As<Napi::External<Prepared>>().Data();
        core_ = std::move(prepared.core);
        core_->rebind(core);
        numbering = prepared.numbering;
      } else {
        numbering = Numbering::next();
        core_ = std::make_unique<Session>(core, id, ChartOptions{}, numbering.base);
        ConfigureLoop(env, core_->loop(), OptionalJsonObjectArg(info, 2, "Session(…, loopJson)"));
      }
      tag_ = "\"k" + process_draw().epoch + "." + base36(numbering.instance) + ".";
      return 0;
    });
  }

  Session& core() { return *core_; }

 private:
  using PropertyDescriptor = Napi::ClassPropertyDescriptor<JsSession>;

  Napi::Value Feed(const Napi::CallbackInfo& info) {
    const std::string text = StringArg(info, 0, "feed(eventsText)");
    const FeedStats before = core_->feed_stats();
    const EventsText r = core_->feed_text(text);
    if (!r.ok) Throw(info.Env(), "KOPT_BAD_EVENTS", "feed(): not a JSON array, an event object or JSONL of events");
    const FeedStats after = core_->feed_stats();
    NoteFed(after.events - before.events);
    return FeedResult(info.Env(), {after.events - before.events, after.skipped - before.skipped}, r.unreadable);
  }
  Napi::Value Skip(const Napi::CallbackInfo& info) {
    core_->skip(static_cast<std::size_t>(WholeNumberArg(info, 0, "skip(count)", 1e15)));
    return info.Env().Undefined();
  }

  Napi::Value Revise(const Napi::CallbackInfo& info) {
    if (!Absent(info, 0)) Throw(info.Env(), "KOPT_BAD_ARGUMENT", "revise() takes no argument: the session's loop makes the control");
    return Napi::Number::New(info.Env(), static_cast<double>(core_->revise()));
  }

  // The answer as Buffers to write one after the other, without copying the body: [body head's
  // pieces…, tail] for `since` null or undefined (the plain body), [delta] for a kept revision,
  // else the full answer [prefix, body head's pieces…, tail].
  Napi::Value Parts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const Session::Answer a = core_->answer_parts(
        Absent(info, 0) ? std::nullopt : std::optional(SinceOf(NumberArg(info, 0, "parts(sinceRevision?)"))));
    Napi::Array out = Napi::Array::New(env);
    TrimIfFedMuch(env);
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

  // --- the loop: the controller reads this session's own projection ---
  Napi::Value TurnEnded(const Napi::CallbackInfo& info) {
    return ToJs(info.Env(), actions_json(core_->loop().turn_ended(StringArg(info, 0, "turnEnded(reason)"))));
  }
  Napi::Value HostCancelled(const Napi::CallbackInfo& info) {
    return ToJs(info.Env(), actions_json(core_->loop().host_cancelled(StringArg(info, 0, "hostCancelled(cause)"))));
  }
  Napi::Value Settled(const Napi::CallbackInfo& info) {
    const bool idle = BoolArg(info, 0, "settled(agentIdle)");
    const HostFacts f = core_->facts(idle, BoolArg(info, 1, "settled(…, humanQueued)"));
    return ToJs(info.Env(), actions_json(core_->loop().settled(core_->series(), f)));
  }
  Napi::Value SupervisorAnswered(const Napi::CallbackInfo& info) {
    const std::uint64_t token = WholeNumberArg(info, 0, "supervisorAnswered(token)");
    const SupervisorAnswer ans = AnswerArg(info, 1, "supervisorAnswered(…, answerJson)");
    const bool idle = BoolArg(info, 2, "supervisorAnswered(…, agentIdle)");
    const HostFacts f = core_->facts(idle, BoolArg(info, 3, "supervisorAnswered(…, humanQueued)"));
    return ToJs(info.Env(), actions_json(core_->loop().supervisor_answered(token, ans, core_->series(), f)));
  }
  Napi::Value ApplyControl(const Napi::CallbackInfo& info) {
    const std::string body = StringArg(info, 0, "applyControl(bodyText)");
    const Lang lang = LangArg(info, 1, "applyControl(…, lang)");
    const Series series = core_->series();
    const ControlReply r = apply_control(core_->loop(), body, &series, lang);
    // The body goes to the wire as it is; the rest is for the host to read.
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("status", Napi::Number::New(info.Env(), r.status));
    o.Set("body", Napi::String::New(info.Env(), js_stringify(r.body)));
    o.Set("actions", ToJs(info.Env(), actions_json(r.actions)));
    o.Set("armed", Napi::Boolean::New(info.Env(), r.armed));
    return o;
  }
  Napi::Value Command(const Napi::CallbackInfo& info) {
    static const char* const kCommands[] = {"kloop", "supervise", nullptr};
    const std::string name = OneOfArg(info, 0, "command(name)", kCommands);
    const std::string raw = StringArg(info, 1, "command(…, raw)");
    const Lang lang = LangArg(info, 2, "command(…, lang)");
    CommandReply r;
    if (name == "kloop") {
      const Series series = core_->series();
      r = kloop_command(core_->loop(), raw, &series, lang);
    } else {
      r = supervise_command(core_->loop(), raw);
    }
    return ToJs(info.Env(), r.to_json());
  }
  Napi::Value AdoptLoop(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(ClassesOf(info.Env()).session.Value()))
      Throw(info.Env(), "KOPT_BAD_ARGUMENT", "adoptLoop(session) expects a Session");
    JsSession* other = Unwrap(info[0].As<Napi::Object>());
    if (other != this) core_->adopt_loop(other->core());
    return info.Env().Undefined();
  }
  // setEvaluation(stateJson | null): the session's place in the host's evaluation queue.
  Napi::Value SetEvaluation(const Napi::CallbackInfo& info) {
    core_->set_evaluation(OptionalJsonObjectArg(info, 0, "setEvaluation(stateJson)"));
    return info.Env().Undefined();
  }
  Napi::Value Csv(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), core_->run_csv()); }
  // The run's exports for the wire, as `kopt report --json` / `--md` write them (text JS never parses).
  Napi::Value Json(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), core_->run_json()); }
  Napi::Value Markdown(const Napi::CallbackInfo& info) {
    const Lang lang = LangArg(info, 0, "markdown(lang)");
    return Napi::String::New(info.Env(), core_->run_markdown(lang == Lang::zh));
  }
  Napi::Value Control(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), core_->control_json()); }
  Napi::Value Armed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), core_->loop().armed()); }

#ifdef KOPT_TEST_EXPORTS
  // The body of the current revision as one Buffer (a copy; the same Buffer until the revision moves).
  Napi::Value Body(const Napi::CallbackInfo& info) {
    if (!buffer_.IsEmpty() && buffer_rev_ == core_->revision()) return buffer_.Value();
    Napi::Buffer<char> buf = Joined(info.Env(), core_->answer_parts(std::nullopt));
    buffer_ = Napi::Persistent(buf);
    buffer_rev_ = core_->revision();
    return buf;
  }
  Napi::Value Delta(const Napi::CallbackInfo& info) {
    return Joined(info.Env(), core_->answer_parts(SinceOf(NumberArg(info, 0, "delta(sinceRevision)"))));
  }
  Napi::Value ReviseWith(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->revise(StringArg(info, 0, "reviseWith(controlJson)"))));
  }
  // An answer as one Buffer (a copy).
  static Napi::Buffer<char> Joined(Napi::Env env, const Session::Answer& a) {
    Napi::Buffer<char> buf = Napi::Buffer<char>::New(env, a.size());
    a.copy_to(buf.Data());
    return buf;
  }
#endif

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
  Napi::Value Fed(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(core_->fed())); }
  Napi::Value Unreadable(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->unreadable()));
  }

  Napi::ObjectReference projector_;
  std::unique_ptr<Session> core_;
  std::string tag_;
  // The head's pieces as Buffers, from one full answer to the next (only those still in the head):
  // most of a 1M-event body (33 MB in ~130 pieces) lasts from revision to revision, and new Buffers
  // for it on every full answer made V8 count 33 MB more external memory each time, hurrying the
  // host into collections (docs/performance.md, run P12). A kept Buffer holds its piece, which the
  // projector holds anyway, so keying by its address is safe.
  std::unordered_map<const std::string*, Napi::Reference<Napi::Buffer<char>>> piece_buffers_;
#ifdef KOPT_TEST_EXPORTS
  Napi::Reference<Napi::Buffer<char>> buffer_;
  std::uint64_t buffer_rev_ = 0;
#endif
};

// Reads and projects a past session's log off the JS thread, one event at a time (never one tree),
// and assembles its first body there too (every point's text and the chart), so that the first
// answer on the JS thread only copies bytes.
class LoadSessionWorker : public PromiseWorker {
 public:
  LoadSessionWorker(Napi::Env env, std::string id, std::string path, ProjectionConfig cfg, std::optional<json> loop)
      : PromiseWorker(env, "kopt.loadSession"),
        id_(std::move(id)),
        path_(std::move(path)),
        core_(std::move(cfg)),
        numbering_(Numbering::next()),
        session_(std::make_unique<Session>(core_, id_, ChartOptions{}, numbering_.base)) {
    ConfigureLoop(env, session_->loop(), loop);
  }

 private:
  void Run() override {
    LogReadStats stats;
    const bool ok = read_log_file(path_, [&](const json& ev) {
      session_->note_time(Session::event_time(ev));
      core_.feed_event(ev);
    }, stats);
    if (!ok) return Fail("KOPT_BAD_LOG", stats.error.empty() ? "the log cannot be read" : stats.error);
    session_->note_unreadable(stats.skipped);
    NoteFed(stats.events);
    // Events carry their seq (the host's JSONL): the next one to feed is past the largest read.
    session_->note_fed(stats.seq_end > 0 ? stats.seq_end : stats.events + stats.skipped);
    truncated_ = stats.truncated;
    warning_ = stats.error;
    session_->body_head();     // the outline, the points' texts and the chart, in the body's pieces
    session_->summary();       // its row of a comparison, with its overlay's items (O(points), so here)
    session_->approx_bytes();  // its size, for the past-session cache (O(points), so here)
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object projector = NewProjectorFrom(env, std::move(core_));
    JsSession::Prepared prepared{std::move(session_), numbering_};
    Napi::Object session = ClassesOf(env).session.New({Napi::String::New(env, id_), projector, env.Undefined(),
                                                        Napi::External<JsSession::Prepared>::New(env, &prepared)});
    session.Set("truncated", Napi::Boolean::New(env, truncated_));
    if (!warning_.empty()) session.Set("warning", Napi::String::New(env, warning_));
    return session;
  }

  std::string id_, path_;
  Projector core_;
  Numbering numbering_;
  std::unique_ptr<Session> session_;
  bool truncated_ = false;
  std::string warning_;
};

Napi::Value LoadSession(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string id = StringArg(info, 0, "loadSession(sessionId)");
  std::string path = StringArg(info, 1, "loadSession(…, logPath)");
  ProjectionConfig cfg = ConfigFrom(env, info.Length() > 2 ? info[2] : env.Undefined());
  auto loop = OptionalJsonObjectArg(info, 3, "loadSession(…, loopJson)");
  return (new LoadSessionWorker(env, std::move(id), std::move(path), std::move(cfg), std::move(loop)))->Start();
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
  Export<LoadSession>(env, exports, "loadSession");
}

}  // namespace kopt::addon
