// Projector: session events in log order -> the panel series (spec sections A..L).
// Incremental: feeding k events costs O(k); snapshots are assembled from cached fragments.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kopt/config.hpp"
#include "kopt/json.hpp"
#include "kopt/series.hpp"

namespace kopt {

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
  // hasUserTask (M-16) over everything fed so far.
  bool has_user_task() const;

  // The series with finalize marks and bestIndex applied.
  Series series() const;
  // The same without the texts (commands, changes, metrics, plans, envs, seq lists but profileSeqs):
  // what the chart and the loop counters read, at a fraction of series()'s copying.
  Series series_outline() const;
  void series_outline(Series& into) const;  // the same, reusing into's storage
  // The /series body (a reference to an internal buffer, valid until the next call).
  // control_json, when non-empty, is inserted verbatim as "control". Cost: the fragments that
  // changed since the last call, plus the small lists after the iterations.
  const std::string& series_json(std::string_view session_id, double updated_at, std::string_view control_json = {});

  const ProjectionConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kopt
