// Figures derived from a series for the loop, the digest and the chart (spec J, M).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kopt/json.hpp"
#include "kopt/row_facts.hpp"
#include "kopt/series.hpp"

namespace kopt {

// The loop state as the decision rules read it (M-7..M-9); defaults as in the vectors.
struct LoopState {
  bool armed = true;
  long long budget = 20;
  long long round = 0;
  long long lastEvalCount = 0;
  long long noProgressRounds = 0;
  bool supervise = false;
  std::optional<double> challengedFinalizeSeq;  // absent means -1
  static LoopState from_json(const json& j);    // key by key over the defaults
  json to_json() const;
};

struct Decision {
  std::string action;  // "stop" | "wrap-up" | "continue"
  long long evalsDone = 0;
  std::optional<std::string> reason;  // "finalized" | "budget" | "no-progress"
  json to_json() const;
};

struct Drift {
  double min, max, ratio;
  std::size_t count;
};

inline constexpr double kReferenceDriftRatio = 1.15;

// For a run of queries over non-decreasing keys without NaN (the same vector every call): the first
// k with keys[k] > q, or >= q when `inclusive`. A query not below the last one gallops on from the
// last answer (about O(1) for rows in seq order); any other (lower, or NaN) is a binary search.
class SortedWalk {
 public:
  explicit SortedWalk(bool inclusive) : inclusive_(inclusive) {}
  std::size_t operator()(const std::vector<double>& keys, double q);

 private:
  bool inclusive_;
  double last_ = std::numeric_limits<double>::quiet_NaN();  // no query yet: the first one searches
  std::size_t at_ = 0;
};

bool in_wrap_up_phase(const std::vector<Round>& rounds, double seq);
// The same rule (M-5) for many seqs: built once in O(rounds); a query costs O(log rounds), or O(1)
// amortized while queries come in non-decreasing seq order (rows in log order), so the per-point
// figures below cost O(points + rounds), not O(points × rounds). Not for use from two threads.
class WrapUpIndex {
 public:
  explicit WrapUpIndex(const std::vector<Round>& rounds);
  bool operator()(double seq) const;

 private:
  std::vector<double> reach_;  // reach_[k]: the largest round seq among rounds[0..k]
  std::vector<char> phase_;    // phase_[k]: the phase after rounds[0..k]
  std::size_t first_nan_;      // the first round whose seq is not a number: every walk stops there
  mutable SortedWalk walk_{false};  // where the last query stopped, for the next one
};
long long completed_evals(const Series& s);
long long completed_evals(const RowTable& rows, const std::vector<Round>& rounds);
// The phase of each iteration (M-5). Each row is judged against the budget its run logged (DV-11:
// the latest round with counters at or before it, else the first after it); `fallback` only when
// no round states a budget.
enum class Phase : unsigned char { Optimization, OverBudget, WrapUp };
const char* phase_name(Phase p);  // "optimization" | "over-budget" | "wrap-up"
std::vector<Phase> evaluation_phase_codes(const Series& s, long long fallback);
std::vector<Phase> evaluation_phase_codes(const RowTable& rows, const std::vector<Round>& rounds, long long fallback);
// The same against one budget for every row (a what-if: `kopt report --budget N`).
std::vector<Phase> evaluation_phase_codes_fixed(const Series& s, long long budget);
std::vector<Phase> evaluation_phase_codes_fixed(const RowTable& rows, const std::vector<Round>& rounds, long long budget);
// The same for rows [from, n) only, into `codes` (entries before `from` kept), counting on from
// `counted` (the rows before `from` that count: neither pending nor in wrap-up): for a caller that
// knows the rows before `from`, and what they read of the rounds, are as when it last asked.
void evaluation_phase_codes(const RowTable& rows, const std::vector<Round>& rounds, long long fallback, std::size_t from,
                            long long counted, std::vector<Phase>& codes);
void evaluation_phase_codes_fixed(const RowTable& rows, const std::vector<Round>& rounds, long long budget, std::size_t from,
                                  long long counted, std::vector<Phase>& codes);
// The phases by name.
std::vector<std::string> evaluation_phases(const Series& s, long long fallback);
std::vector<std::string> evaluation_phases_fixed(const Series& s, long long budget);
std::size_t latest_run_start(const Series& s);
// The loop message in force when a row ran: the last round with seq < the row's seq. The record's
// supervision column shows that round's own review (or that it failed, or nothing) — never an
// older round's advice.
std::optional<std::size_t> round_in_force(const Series& s, double seq);
// round_in_force for every row, O((rows + rounds) log rounds) when rounds are in seq order (the log's
// order), falling back to the linear rule otherwise.
std::vector<std::optional<std::size_t>> rounds_in_force(const Series& s);
std::vector<std::optional<std::size_t>> rounds_in_force(const RowTable& rows, const std::vector<Round>& rounds);
// The same for rows [from, n) only, into `out` (entries before `from` kept).
void rounds_in_force(const RowTable& rows, const std::vector<Round>& rounds, std::size_t from, std::vector<std::optional<std::size_t>>& out);
bool unfinished_run(const Series& s);
std::vector<double> implied_references(const Series& s);
std::vector<double> implied_references(const RowTable& rows);
std::optional<double> reference_latency(const Series& s);
std::optional<double> reference_latency(const RowTable& rows);
// J-4, keyed by the measuring Slurm node (native_metrics.slurm.node): the widest group that alarms.
std::optional<Drift> reference_drift(const Series& s);
std::optional<Drift> reference_drift(const RowTable& rows);
// The implied references (latency × speedup) of the rows kept up to date as rows change: in order
// overall for the pooled reference (J-3: the median, the upper middle; with an even count, the mean
// of the two middles) and per measuring node for the drift (J-4). An update costs the rows changed
// (a binary search and an insert or erase each), not all of them; reference_latency and
// reference_drift are this read once.
class ImpliedReferences {
 public:
  // Rows from `from` on are read again; rows before it must be as the last update saw them.
  void update(const RowTable& rows, std::size_t from);
  std::optional<double> median() const;
  std::optional<Drift> drift(const RowTable& rows) const;  // `rows` for the nodes' names

 private:
  struct Group {
    std::uint32_t node;
    std::vector<double> refs;  // in order
  };
  std::vector<std::pair<double, std::uint32_t>> of_row_;  // each row's implied reference (NaN: none) and node
  std::vector<double> all_;                                // every implied reference, in order
  std::vector<Group> groups_;                              // few: one per node
  Group& group(std::uint32_t node);
};
long long stagnation_count(const Series& s);
bool plan_stale(const Series& s, long long evals_per_turn);
bool reviewable(const Series& s);
bool unreviewed_evals(const Series& s);
// Largest seq among finalized points, or nullopt.
std::optional<double> latest_finalized_seq(const Series& s);
Decision decide_continuation(const Series& s, const LoopState& state, long long max_no_progress_rounds);
long long evals_over_budget(const Series& s, long long budget);

// The `derived` object of the vectors. loop_inputs: {state?, maxNoProgressRounds?, evalsPerTurn?}.
json derived_json(const Series& s, bool has_user_task, const json& loop_inputs);

}  // namespace kopt
