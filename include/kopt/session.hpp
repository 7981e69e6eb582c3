// One session as the /series route serves it (spec P), and the whole of it: the projector's state,
// the time of the last projected event, the session's loop (its LoopController, which makes the
// control object), under one revision number. The body — the series, `control` and the curve's
// `chart` — is assembled at most once per revision and shared as bytes.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kopt/chart.hpp"
#include "kopt/compare.hpp"
#include "kopt/events.hpp"
#include "kopt/json.hpp"
#include "kopt/loop.hpp"
#include "kopt/projector.hpp"
#include "kopt/series.hpp"
#include "kopt/text_rope.hpp"

namespace kopt {

class Session {
 public:
  // `projector` must outlive the session (the binding keeps both alive together). Revisions count
  // up from `revision_base` + 1 (the binding draws a base per object so that a revision names one
  // object's state: a `since` from another object or process falls outside the kept history).
  Session(Projector& projector, std::string session_id, ChartOptions chart = {}, std::uint64_t revision_base = 0);

  // Events in log order (an array or one event): fed to the projector; `updatedAt` becomes the
  // largest `time` of a tool/call, tool/result or user/message event (the events the projection
  // reads), so the body depends on the log alone.
  FeedStats feed(const json& events);
  // The same from text, as feed() takes it from JavaScript (read_events_text: an array, one event,
  // or JSONL); counts the log positions it covered and the unreadable ones among them.
  EventsText feed_text(std::string_view text);
  // n log positions the host could not even write out: counted as unreadable.
  void skip(std::size_t n) {
    fed_ += n;
    unreadable_ += n;
  }
  // Log positions fed so far (the next event to feed is at this seq), and of them unreadable.
  std::size_t fed() const { return fed_; }
  // A projector fed elsewhere (a log file read off the main thread): the log positions it covered,
  // so that a live session's in-memory events continue from there.
  void note_fed(std::size_t positions) { fed_ = positions; }
  const FeedStats& feed_stats() const { return projector_->stats(); }
  std::size_t unreadable() const { return unreadable_; }
  void note_unreadable(std::size_t n) { unreadable_ += n; }
  double updated_at() const { return updated_at_; }
  // The same rule for a projector fed elsewhere (a past session read off the main thread): the
  // time an event contributes to updatedAt (NaN when it contributes none), and taking it in.
  static double event_time(const json& ev);
  void note_time(double t) {
    if (t > updated_at_) updated_at_ = t;
  }

  // completedEvals (M-5) of the current projection; recomputed only when the projection changed.
  long long completed_evals();

  // The session's loop (spec M): its controller reads this session's projection. Replacing the
  // settings or the configured route is the host's (the plugin config); every decision is the
  // controller's.
  LoopController& loop() { return loop_; }
  Series series() const { return projector_->series(); }  // a copy (the loop reads the full series)
  // Host facts as the loop reads them: the host's two, and the task the projection found (M-16).
  HostFacts facts(bool agent_idle, bool human_queued) const {
    return {agent_idle, human_queued, projector_->has_user_task()};
  }
  // Takes over another session object's loop (the same session read before it went live), leaving
  // it this one's.
  void adopt_loop(Session& other) { std::swap(loop_, other.loop_); }
  // The plugin's own evaluation of this session in the host's queue (kernel_evaluate: {state,
  // since, stage?, position?}), which the control object carries as `evaluation`; none: absent.
  // The queue is the host's (lib/evaluate.mjs): it sets this whenever the session's place changes.
  void set_evaluation(std::optional<json> state) { evaluation_ = std::move(state); }
  // The control object (P-4) as the loop makes it now, with the evaluation in the queue, as text.
  std::string control_json();

  // Brings the revision up to date: it advances when the projection, updatedAt or the control
  // object changed since the last call. Costs a comparison when nothing changed.
  std::uint64_t revise() { return revise(control_json()); }
  // The same with a control text given (core tests and test hosts that play their own loop).
  std::uint64_t revise(std::string_view control_json);
  std::uint64_t revision() const { return revision_; }

  // The /series body of the current revision (UTF-8 JSON) is head + tail:
  //   head  the series without `control`, then `,"chart":` and the chart, as pieces: shared and
  //         immutable (each valid as long as it is held, whatever the session does next), most of
  //         them the projector's and the chart's own blocks, so no revision copies the body;
  //         gathered once per change of the projection or updatedAt, not per control change; so a
  //         past session's can be made on the worker thread that read its log, and a reader sends
  //         it as it is;
  //   tail  `,"control":` and the control object, then `}` (or only `}` without a control).
  const std::vector<TextPiece>& body_head();
  std::string body_tail() const;
  // The same as one string (tests and simple callers; a copy).
  std::string body();
  // The chart of the current revision (a copy).
  std::string chart();
  // The run as CSV: the offline report's (report_csv over the whole series: full commands, changes,
  // the plan and the round in force), for the tab's export. O(points), on request.
  std::string run_csv() const;
  // The same run as the offline report's JSON (report_json, `kopt report --json`) and as its markdown
  // table (report_markdown, `kopt report --md`), for the tab's export. O(points), on request.
  std::string run_json() const;
  std::string run_markdown(bool zh) const;

  // What changed since revision `since` (docs/protocol.md): the delta's bytes, or nullptr when
  // `since` is not a revision kept in the history (unknown, too old, or more changed in place than
  // was recorded) — then the answer is the full body, see answer_parts(). Brings the revision up to
  // date first only if it never was; the caller revises. Valid until the next call.
  const std::string* delta(std::uint64_t since);
  // An answer as the pieces to write in order: a delta's bytes alone, or prefix + head + tail
  // (the plain body has no prefix; the full answer is {"kind":"full","revision":R,"body": + body + }).
  struct Answer {
    const std::string* delta = nullptr;  // valid until the next delta() call
    std::string prefix;
    std::vector<TextPiece> head;  // immutable pieces: a caller may keep them between answers
    std::string tail;
    std::size_t size() const;
    void copy_to(char* out) const;  // size() bytes
  };
  // `since` absent: the plain body; else what changed since then, or the full answer.
  Answer answer_parts(std::optional<std::uint64_t> since);
  // The whole answer to `since` as one string (tests and simple callers).
  std::string answer(std::uint64_t since);

  // How many revisions the history keeps, and how many in-place row changes across them.
  static constexpr std::size_t kHistory = 256;
  static constexpr std::size_t kHistoryRows = 1 << 16;

  const std::string& session_id() const { return id_; }

  // This run's row of a comparison (compare.hpp), from the session's kept outline, row facts and
  // phases: made again only when the projection or the run's facts changed (O(points) then).
  const RunSummary& summary();
  // What summary() is made from, as text: equal keys, equal rows (a comparison's answer is kept by it).
  std::string summary_key() const;

  // The projector moved (a past session read on a worker thread, handed to its JS object): the
  // session reads it at its new address from now on. Nothing else changes.
  void rebind(Projector& projector) { projector_ = &projector; }

  // About how many bytes the session holds: the projector, the outline, the cached body, chart and
  // delta texts, the history (the past-session cache is bounded by this; docs/development.md).
  // O(points) when anything changed since the last call, else the figure of that call (a past
  // session's is taken once, on the thread that read it).
  std::size_t approx_bytes() const;

 private:
  void refresh_outline();
  void write_chart();

  // What revision `rev` was made of.
  struct Step {
    std::uint64_t rev;
    Projector::Lengths len;              // list lengths at rev
    std::vector<std::uint32_t> touched;  // iterations changed in place since rev - 1
    bool complete;                       // touched lists all of them
    bool projection;                     // the projection changed since rev - 1 (so the chart may have)
    bool chart = false;                  // the chart was written at rev (a snapshot)
    std::size_t chart_from = 0;          // its first item changed since the snapshot before it
    std::size_t profiled_from = 0;       // the same for its profile marks
  };
  // The chart for a reader that holds revision history_[at]: appended onto the chart it holds
  // when the snapshots since then say how, else whole.
  void write_chart_since(std::string& out, std::size_t at);
  std::deque<Step> history_;
  std::size_t history_rows_ = 0;
  std::deque<std::pair<std::uint64_t, std::string>> deltas_;  // answers of the current revision, by since
  bool chart_ok_ = false;

  Projector* projector_;
  LoopController loop_;
  std::optional<json> evaluation_;
  std::size_t fed_ = 0, unreadable_ = 0;
  std::string id_;
  ChartOptions chart_;
  double updated_at_ = 0;
  std::string control_;
  std::uint64_t revision_ = 0;
  bool revised_ = false;
  std::uint64_t seen_version_ = UINT64_MAX;
  double seen_updated_ = 0;
  std::uint64_t outline_version_ = UINT64_MAX;
  Series outline_;
  RowTable rows_;  // the packed facts of the projector's points (as the outline reads them), kept up to date
  RowPhases phases_;  // of rows_: the chart's phases and the completed evaluations, kept up to date with them
  // The chart, kept from revision to revision: each one rewrites only what changed.
  ChartWriter chart_writer_;
  std::size_t chart_rows_from_ = 0;  // the first row changed since the chart was last written
  std::vector<TextPiece> head_;  // empty when the projection or updatedAt moved
  // approx_bytes of the state it was taken in: (projector version, head, chart) → bytes (a new
  // revision of the control alone changes the figure by a few bytes: not worth O(points)).
  struct BytesMemo {
    std::uint64_t version = UINT64_MAX;
    const std::string* head = nullptr;  // the head's last piece (a new one per head)
    bool chart = false;
    std::size_t bytes = 0;
  };
  mutable BytesMemo bytes_memo_;
  RunSummary summary_;
  std::uint64_t summary_version_ = UINT64_MAX, summary_facts_ = UINT64_MAX;
};

}  // namespace kopt
