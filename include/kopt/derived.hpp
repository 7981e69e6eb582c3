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
  std::optional<double> lastBestIndex;          // S-4: bestIndex at the last round's message; absent: unknown
  bool significantProgress = true;              // S-4 (a setting the rule reads; not written by to_json)
  long long limitPct = 0;                        // S-5: wrap up when ★'s limit fraction ≥ this % (0 off; a setting too)
  static LoopState from_json(const json& j);    // key by key over the defaults
  json to_json() const;
};

struct Decision {
  std::string action;  // "stop" | "wrap-up" | "continue"
  long long evalsDone = 0;
  std::optional<std::string> reason;  // "finalized" | "budget" | "at-limit" | "no-progress"
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

// M-5's wrap-up phase at a seq: the phase after the rounds read in log order up to the first whose
// seq is above it (a wrap-up or audit message opens it, a loop round closes it), for many seqs:
// built once in O(rounds); a query costs O(log rounds), or O(1)
// amortized while queries come in non-decreasing seq order (rows in log order), so the per-point
// figures below cost O(points + rounds), not O(points × rounds). Not for use from two threads.
class WrapUpIndex {
 public:
  WrapUpIndex() = default;
  explicit WrapUpIndex(const std::vector<Round>& rounds) { extend(rounds); }
  // Reads rounds [size(), rounds.size()): the rounds before must be those it read.
  void extend(const std::vector<Round>& rounds);
  std::size_t size() const { return reach_.size(); }
  bool operator()(double seq) const;

 private:
  std::vector<double> reach_;  // reach_[k]: the largest round seq among rounds[0..k]
  std::vector<char> phase_;    // phase_[k]: the phase after rounds[0..k]
  // The first round whose seq is not a number: every walk stops there (SIZE_MAX: none).
  std::size_t first_nan_ = std::numeric_limits<std::size_t>::max();
  mutable SortedWalk walk_{false};  // where the last query stopped, for the next one
};
// The rounds as the per-row rules read them: the wrap-up phase (M-5), the budget in force (DV-11)
// and the loop message in force. Built in O(rounds) and extended as rounds come (they only grow);
// a query costs O(log rounds), or O(1) amortized for rows in seq order. Not for use from two threads.
class RoundIndex {
 public:
  RoundIndex() = default;
  explicit RoundIndex(const std::vector<Round>& rounds) { extend(rounds); }
  // Reads rounds [size(), rounds.size()): the rounds before must be those it read.
  void extend(const std::vector<Round>& rounds);
  std::size_t size() const { return seqs_.size(); }
  bool in_wrap_up(double seq) const { return wrap_(seq); }
  // DV-11: the budget of the latest round stating one at or before `seq`, else of the first after
  // it; nullopt when no round states one.
  std::optional<long long> budget_at(double seq) const;
  // The loop message in force at `seq`: the last round with seq < it (in log order when the rounds
  // are not in seq order).
  std::optional<std::size_t> in_force(double seq) const;

 private:
  WrapUpIndex wrap_;
  std::vector<double> seqs_, budget_seqs_;  // of every round; of the rounds stating a budget
  std::vector<long long> budgets_;
  // Whether seqs_ is in order (NaN compares as nothing), whether it is also all numbers, and the
  // same for budget_seqs_: in order and numbers, a query walks on; else it searches.
  bool sorted_ = true, walkable_ = true, budgets_walkable_ = true;
  mutable SortedWalk at_least_{true}, after_{false};
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
void evaluation_phase_codes(const RowTable& rows, const RoundIndex& rounds, long long fallback, std::size_t from,
                            long long counted, std::vector<Phase>& codes);
void evaluation_phase_codes_fixed(const RowTable& rows, const RoundIndex& rounds, long long budget, std::size_t from,
                                  long long counted, std::vector<Phase>& codes);
// The phases by name.
std::vector<std::string> evaluation_phases(const Series& s, long long fallback);
std::vector<std::string> evaluation_phases_fixed(const Series& s, long long budget);
std::size_t latest_run_start(const Series& s);
// The loop message in force when a row ran (RoundIndex::in_force): the last round with seq < the
// row's seq. The record's supervision column shows that round's own review (or that it failed, or
// nothing) — never an older round's advice. For every row, O((rows + rounds) log rounds) when
// rounds are in seq order (the log's order), falling back to the linear rule otherwise.
std::vector<std::optional<std::size_t>> rounds_in_force(const Series& s);
std::vector<std::optional<std::size_t>> rounds_in_force(const RowTable& rows, const std::vector<Round>& rounds);
// The same for rows [from, n) only, into `out` (entries before `from` kept).
void rounds_in_force(const RowTable& rows, const RoundIndex& rounds, std::size_t from, std::vector<std::optional<std::size_t>>& out);
// The phase (M-5) and the loop message in force of every row, and the rows that count in each
// phase, kept up to date as rows and rounds come: a session reads them once per revision, and its
// chart the same object. Rows from the first one changed on are derived again. Rounds that only
// came after every kept row's seq, in seq order, change nothing for the kept rows (a first round
// stating a budget would: it is the budget of every row before it); any other change of the
// rounds or the budget derives every row again. The rules are evaluation_phase_codes and
// rounds_in_force, read from a row.
class RowPhases {
 public:
  // `rows` are the facts of the rows `rounds` belong with; rows before `rows_same_before` must be as
  // the last update saw them (ignored on a first update). `budget` and `fixed` as in ChartOptions.
  void update(const RowTable& rows, const std::vector<Round>& rounds, long long budget, bool fixed, std::size_t rows_same_before);
  const std::vector<Phase>& phases() const { return phases_; }
  const std::vector<std::optional<std::size_t>>& row_rounds() const { return row_rounds_; }
  // The rows that count (not pending) in a phase; completed() is optimization + over budget, the
  // same number as completed_evals.
  long long count(Phase p) const;
  long long completed() const { return count(Phase::Optimization) + count(Phase::OverBudget); }
  // The first row whose phase, and the first whose round in force, changed since the last call
  // (the shorter length when one list is a prefix of the other; SIZE_MAX when none changed).
  struct Changes {
    std::size_t phase, round;
  };
  Changes take_changes();
  std::size_t approx_bytes() const;

 private:
  std::vector<Phase> phases_;
  std::vector<std::optional<std::size_t>> row_rounds_;
  // In prefix form ([i] covers rows before i; n + 1 entries): the largest seq (one that is no number
  // counts as +inf: no round is then known to come after it) and the rows that count in each phase.
  std::vector<double> seq_max_before_{-std::numeric_limits<double>::infinity()};
  std::vector<std::uint32_t> opt_before_{0}, over_before_{0}, wrap_before_{0};
  RoundIndex index_;  // of the rounds seen
  // What the rows were derived from: the rounds seen, whether their seqs are numbers in order (and
  // the last), whether one states a budget, and the budget options.
  std::size_t rounds_seen_ = 0;
  bool updated_ = false, rounds_sorted_ = true, rounds_budget_ = false, fixed_ = false;
  double last_round_seq_ = 0;
  long long budget_ = 0;
  Changes changes_{0, 0};
};
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
// The speedup a measured row is labelled with against a pooled reference (> 0): its own reported
// speedup when it has one, else reference / latency (the chart's points, the comparison's).
double labelled_speedup(const RowFacts& r, double reference);
// The finalize gap (re-measured vs self-reported latency) is flagged beyond this many percent.
inline constexpr double kFinalGapFlagPct = 10.0;
// The Final claim (spec H-8), decided once here and read by the chart, the report, the comparison, the
// exports, the digest and the loop. The latest finalize call decides. It is refused, with a reason, when
// the point it names is missing, is a replay row, or is not an honest measurement: its verdict is not
// "ok" (verdict_of: pending, hack, evaluator, compile, error, wrong, unknown), or it has no latency, or
// its latency is not positive and finite. When the call's own result holds the plugin's re-measurement
// of it (a replay row), that is the Final, unless the re-measurement itself did not pass ("remeasure-…").
struct FinalClaim {
  double callSeq = 0;                 // the deciding call's seq (NaN when it is no number)
  std::optional<std::size_t> named;   // the point the call names
  std::optional<std::size_t> index;   // the Final: the replay, else the named point (accepted only)
  std::optional<std::string> refused;  // why there is no Final from this call
};
FinalClaim final_claim(const std::vector<Iteration>& points, const FinalizeCall& call);
std::optional<FinalClaim> final_claim(const std::vector<Iteration>& points, const std::optional<FinalizeCall>& call);
// The claim's wire form (derived.finalClaim and the chart's finalClaim): {callSeq, named?, index?, refused?}.
json to_json(const FinalClaim& c);
// The finalized number (the chart's `final`, the comparison's): the accepted claim's point; with a
// replay of the named point, that point and the gap (replay / named − 1, in %, one decimal), flagged
// beyond kFinalGapFlagPct (one replay has no noise estimate of its own).
struct FinalNumber {
  std::size_t index = 0;
  double latency = 0;
  bool remeasured = false;
  std::optional<std::size_t> self;  // the finalized point as first measured, when re-measured
  double gapPct = 0;
  bool gapFlag = false;
  // S-3: the re-measurement against the first measurement, when both carry intervals (faster means the
  // re-measurement is faster); gapFlag then means "not the same within noise".
  Versus gapVerdict = Versus::none;
  double gapPmPct = 0;
};
std::optional<FinalNumber> final_number(const std::vector<Iteration>& points, const std::optional<FinalClaim>& claim);
// Spec N (issue 49). A point's reference interval: its payload's `reference_ci_ms` when that holds the
// reference the point implies (latency × speedup); else none.
std::optional<Interval> reference_interval(const Iteration& it);
// Labels a point as it settles (N-2): against `best` (the best settled before it, at index best_index)
// and against its reference. Only an honest measured non-replay point with a latency interval is labelled.
void label_point(Iteration& it, const Iteration* best, std::size_t best_index);
// The figures behind a point's labels (for the words "faster than ★ by 3.1 % ± 0.8"), or nullopt when
// it has no such label.
std::optional<Comparison> versus_best(const std::vector<Iteration>& points, std::size_t i);
std::optional<Comparison> versus_reference(const Iteration& it);
long long stagnation_count(const Series& s);
bool plan_stale(const Series& s, long long evals_per_turn);
bool reviewable(const Series& s);
bool unreviewed_evals(const Series& s);
// The seq of the finalize call whose claim is accepted (H-8), or nullopt: a refused finalize never
// counts as finalized (the loop's stop, the unfinished run, the challenge mark).
std::optional<double> accepted_finalize_seq(const Series& s);
// S-4: whether the round since the last loop message made progress: new completed evaluations, and,
// where the best at that message carries an interval and significantProgress is on, a new best that is
// not the SAME within noise (FASTER, or UNSURE when the new best has no interval).
bool round_progressed(const Series& s, const LoopState& state);
// S-5: ★ ran within `pct` % of the machine's limit (Iteration::limit_fraction × 100 ≥ pct); false when pct ≤ 0
// (off) or ★ carries no fraction.
bool at_limit(const Series& s, long long pct);
Decision decide_continuation(const Series& s, const LoopState& state, long long max_no_progress_rounds);
long long evals_over_budget(const Series& s, long long budget);

// The `derived` object of the vectors. loop_inputs: {state?, maxNoProgressRounds?, evalsPerTurn?,
// significantProgress?, wrapUpAtLimitPct?}.
json derived_json(const Series& s, bool has_user_task, const json& loop_inputs);

}  // namespace kopt
