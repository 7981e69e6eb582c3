// Projector: session events in log order -> the panel series (spec sections A..L).
// Incremental: feeding k events costs O(k); snapshots are assembled from cached fragments.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/config.hpp"
#include "kopt/row_facts.hpp"
#include "kopt/json.hpp"
#include "kopt/series.hpp"
#include "kopt/text_rope.hpp"

namespace kopt {

struct RunFacts;

struct FeedStats {
  std::size_t events = 0;   // events read (every type)
  std::size_t skipped = 0;  // events skipped as malformed (not a record, bad data for its type)
};

class Projector {
 public:
  explicit Projector(ProjectionConfig config = {});
  ~Projector();
  Projector(Projector&&) noexcept;
  Projector& operator=(Projector&&) noexcept;

  // One event (any JSON value; non-records are skipped and counted).
  void feed_event(const json& event);
  // A JSON array of events, or one event object.
  FeedStats feed(const json& events);

  // Totals since construction.
  const FeedStats& stats() const;
  // Bumped whenever the projected state changes (for ETags).
  std::uint64_t version() const;
  // About how many bytes the projector holds (its points, their cached text, the indexes), for a
  // cache that is bounded by memory. O(points + dedup keys).
  std::size_t approx_bytes() const;
  // hasUserTask (M-16) over everything fed so far.
  bool has_user_task() const;
  // The run's title, models and times (run_facts.hpp), over everything fed so far.
  const RunFacts& run_facts() const;

  // The series with finalize marks and bestIndex applied.
  Series series() const;
  // The same without the texts (commands, changes, metrics, plans, envs, seq lists but profileSeqs; a
  // round keeps whether it was reviewed, as an empty review, not the review's text):
  // what the chart and the loop counters read, at a fraction of series()'s copying.
  Series series_outline() const;
  void series_outline(Series& into) const;  // the same, reusing into's storage
  // The same kept up to date in `into` and `rows`, which must hold what the last call left (one
  // such outline per projector: the session's): into gets the rounds and profileSeqs past its own
  // (they only grow) and no iterations (its readers read points() in place, SeriesView); rows gets
  // the facts of the iterations changed in place or appended since, as series_outline()'s rows
  // would read (no Slurm node: the outline never carried one). O(changed), not O(points).
  // Returns the first row it wrote (every one before it is as the last call left it).
  std::size_t update_outline(Series& into, RowTable& rows);
  // The points as projected, read in place (their `finalized` is the explicit mark only: the
  // outline's rows carry the whole rule). Valid until the next feed.
  const std::vector<Iteration>& points() const;
  // The /series body without its closing brace, as shared immutable pieces appended to `out` (no
  // copy of the body: a piece stays valid while held, whatever the projector does next). Cost: the
  // fragments changed since the last call, the open block of each list, and the few bytes after.
  void series_pieces(std::vector<TextPiece>& out, std::string_view session_id, double updated_at);
  // The same as one text, then `control` (control_json verbatim, when non-empty) and the closing
  // brace: a copy, for tests and the CLI (a reference to an internal buffer, valid until the next call).
  const std::string& series_json(std::string_view session_id, double updated_at, std::string_view control_json = {});

  const ProjectionConfig& config() const;

  // For /series deltas (Session::delta). Iterations change in place (finalize marks, a pending
  // call answered, a result merged) or are appended; every other list only grows.
  // take_touched appends to `out` the iterations changed in place since its last call (each once,
  // any order) and returns false when more changed than it keeps (then treat all as changed).
  bool take_touched(std::vector<std::uint32_t>& out);
  // One iteration's wire text, as it stands in series_json's body; valid until the next call.
  std::string_view iteration_json(std::size_t i);
  struct Lengths {
    std::size_t iterations, plans, envs, rounds, profileSeqs, uncollectedSeqs, echoedSeqs;
  };
  Lengths lengths() const;
  std::optional<std::size_t> best_index() const;
  // The latest finalize call and what it names as the log stands (H-8), or nullopt when there is none.
  std::optional<FinalizeCall> finalize_call() const;
  enum class List { Plans, Envs, Rounds, ProfileSeqs, UncollectedSeqs, EchoedSeqs };
  // The items of a list from index `from` on, comma-separated, as series_json writes them.
  void write_list(std::string& out, List which, std::size_t from) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kopt
