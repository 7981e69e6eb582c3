#include "kopt/derived.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string_view>

#include "kopt/verdict.hpp"

namespace kopt {

namespace {

long long int_or(const json& j, const char* key, long long def) {
  auto it = j.find(key);
  if (it == j.end()) return def;
  auto n = as_number(*it);
  if (!n || !std::isfinite(*n)) return def;
  return static_cast<long long>(*n);
}

bool bool_or(const json& j, const char* key, bool def) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : def;
}

json state_defaults() {
  return json{{"armed", true},      {"budget", 20},          {"round", 0},
              {"lastEvalCount", 0}, {"noProgressRounds", 0}, {"supervise", false}};
}

}  // namespace

LoopState LoopState::from_json(const json& j) {
  LoopState s;
  if (!j.is_object()) return s;
  s.armed = bool_or(j, "armed", s.armed);
  s.budget = int_or(j, "budget", s.budget);
  s.round = int_or(j, "round", s.round);
  s.lastEvalCount = int_or(j, "lastEvalCount", s.lastEvalCount);
  s.noProgressRounds = int_or(j, "noProgressRounds", s.noProgressRounds);
  s.supervise = bool_or(j, "supervise", s.supervise);
  if (auto it = j.find("challengedFinalizeSeq"); it != j.end())
    if (auto n = as_number(*it)) s.challengedFinalizeSeq = *n;
  if (auto it = j.find("lastBestIndex"); it != j.end())
    if (auto n = as_number(*it); n && *n >= 0 && *n == std::floor(*n)) s.lastBestIndex = *n;
  return s;
}

json LoopState::to_json() const {
  json j{{"armed", armed},         {"budget", budget},
         {"round", round},         {"lastEvalCount", lastEvalCount},
         {"noProgressRounds", noProgressRounds}, {"supervise", supervise}};
  if (challengedFinalizeSeq) j["challengedFinalizeSeq"] = *challengedFinalizeSeq;
  if (lastBestIndex) j["lastBestIndex"] = *lastBestIndex;
  return j;
}

json Decision::to_json() const {
  json j{{"action", action}, {"evalsDone", evalsDone}};
  if (reason) j["reason"] = *reason;
  return j;
}

namespace {

// The first k >= from with !before(keys[k]), over keys for which `before` holds on a prefix:
// galloping from `from` (steps 1, 2, 4 …, then a binary search inside the last step), so a search
// costs O(log distance) — about O(1) for the next row in seq order, never O(keys) per query.
template <class Before>
std::size_t gallop(const std::vector<double>& keys, std::size_t from, Before before) {
  std::size_t lo = from, step = 1;
  while (lo < keys.size() && before(keys[lo])) {
    const std::size_t hi = std::min(keys.size(), lo + step);
    if (hi == keys.size() || !before(keys[hi - 1])) {
      // The answer is in (lo, hi]: binary search there.
      std::size_t a = lo + 1, b = hi;
      while (a < b) {
        const std::size_t mid = a + (b - a) / 2;
        if (before(keys[mid])) a = mid + 1;
        else b = mid;
      }
      return a;
    }
    lo = hi;
    step *= 2;
  }
  return lo;
}

// The loop message in force when a row ran, as the rule reads: the last round in log order with
// seq < the row's. A linear walk, for rounds out of order: RoundIndex searches when it can.
std::optional<std::size_t> last_round_before(const std::vector<double>& seqs, double seq) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < seqs.size(); ++i)
    if (seqs[i] < seq) found = i;
  return found;
}

}  // namespace

std::size_t SortedWalk::operator()(const std::vector<double>& keys, double q) {
  if (!(q >= last_)) {
    const auto at = inclusive_ ? std::lower_bound(keys.begin(), keys.end(), q) : std::upper_bound(keys.begin(), keys.end(), q);
    const std::size_t k = static_cast<std::size_t>(at - keys.begin());
    if (std::isnan(q)) return k;
    last_ = q;
    at_ = k;
    return k;
  }
  at_ = inclusive_ ? gallop(keys, at_, [q](double key) { return key < q; })
                   : gallop(keys, at_, [q](double key) { return key <= q; });
  last_ = q;
  return at_;
}

void WrapUpIndex::extend(const std::vector<Round>& rounds) {
  // Not when extending: an exact reserve for one more round would copy every round each time.
  if (reach_.empty()) reach_.reserve(rounds.size()), phase_.reserve(rounds.size());
  double reach = reach_.empty() ? -std::numeric_limits<double>::infinity() : reach_.back();
  bool phase = !phase_.empty() && phase_.back() != 0;
  for (std::size_t k = reach_.size(); k < rounds.size(); ++k) {
    const Round& r = rounds[k];
    if (std::isnan(r.seq.num)) first_nan_ = std::min(first_nan_, k);  // !(NaN <= seq)
    else reach = std::max(reach, r.seq.num);
    if (r.wrapUp || r.audit) phase = true;
    else if (r.round) phase = false;
    reach_.push_back(reach);
    phase_.push_back(phase);
  }
}

bool WrapUpIndex::operator()(double seq) const {
  if (std::isnan(seq)) return false;
  // The walk stops at the first round with seq > the point's: the first k whose reach exceeds it
  // (reach_ never decreases and holds no NaN: a walk over it).
  const std::size_t stop = std::min(walk_(reach_, seq), first_nan_);
  return stop > 0 && phase_[stop - 1] != 0;
}

void RoundIndex::extend(const std::vector<Round>& rounds) {
  wrap_.extend(rounds);
  for (std::size_t k = seqs_.size(); k < rounds.size(); ++k) {
    const Round& r = rounds[k];
    const double q = r.seq.num;
    if (!seqs_.empty() && q < seqs_.back()) sorted_ = false;  // std::is_sorted, pair by pair
    if (std::isnan(q) || (!seqs_.empty() && q < seqs_.back())) walkable_ = false;
    seqs_.push_back(q);
    if (r.budget && *r.budget > 0) {
      if (std::isnan(q) || (!budget_seqs_.empty() && q < budget_seqs_.back())) budgets_walkable_ = false;
      budget_seqs_.push_back(q);
      budgets_.push_back(*r.budget);
    }
  }
}

std::optional<long long> RoundIndex::budget_at(double seq) const {
  if (budgets_.empty()) return std::nullopt;
  // The round after the row's seq (upper bound); rounds out of order or without a number keep
  // the binary search they always had.
  const std::size_t k = budgets_walkable_ ? after_(budget_seqs_, seq)
                                          : static_cast<std::size_t>(std::upper_bound(budget_seqs_.begin(), budget_seqs_.end(), seq) - budget_seqs_.begin());
  return k == 0 ? budgets_[0] : budgets_[k - 1];
}

std::optional<std::size_t> RoundIndex::in_force(double seq) const {
  if (!sorted_) return last_round_before(seqs_, seq);
  // The last round with seq < the row's seq: the one before the first with seq >= it (rounds
  // with a seq that is not a number keep the binary search they always had).
  const std::size_t pos = walkable_ ? at_least_(seqs_, seq) : static_cast<std::size_t>(std::lower_bound(seqs_.begin(), seqs_.end(), seq) - seqs_.begin());
  return pos == 0 ? std::nullopt : std::optional<std::size_t>(pos - 1);
}

long long completed_evals(const RowTable& rows, const std::vector<Round>& rounds) {
  const WrapUpIndex wrap(rounds);
  long long n = 0;
  for (const auto& r : rows.rows)
    if (!r.pending() && !r.replay() && !wrap(r.seq)) ++n;
  return n;
}

long long completed_evals(const Series& s) { return completed_evals(RowTable(s.iterations), s.rounds); }

namespace {

// M-5 with the budget of each row given by `budget_of(row)`: rows [from, n) into out (entries before
// `from` kept), counting on from `counted` (the rows before `from` that count).
template <class BudgetOf>
void phases_with(const RowTable& rows, const RoundIndex& rounds, BudgetOf budget_of, std::size_t from, long long counted,
                 std::vector<Phase>& out) {
  out.resize(std::min(from, rows.size()));
  // Grown by a quarter when taking on from a row (reserve_room): an exact reserve for one more entry
  // would copy every entry each time, a doubling leaves as much room again.
  reserve_room(out, rows.size());
  for (std::size_t i = out.size(); i < rows.size(); ++i) {
    const RowFacts& r = rows.rows[i];
    if (r.replay() || rounds.in_wrap_up(r.seq)) {
      out.push_back(Phase::WrapUp);
      continue;
    }
    if (!r.pending()) ++counted;  // a pending row takes the label of the count so far but is not counted
    const long long budget = budget_of(r);
    out.push_back(budget > 0 && counted > budget ? Phase::OverBudget : Phase::Optimization);
  }
}

std::vector<std::string> names(const std::vector<Phase>& codes) {
  std::vector<std::string> out;
  out.reserve(codes.size());
  for (Phase p : codes) out.emplace_back(phase_name(p));
  return out;
}

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::OverBudget: return "over-budget";
    case Phase::WrapUp: return "wrap-up";
    case Phase::Optimization: break;
  }
  return "optimization";
}

void evaluation_phase_codes(const RowTable& rows, const RoundIndex& rounds, long long fallback, std::size_t from,
                            long long counted, std::vector<Phase>& codes) {
  // DV-11: a row is judged against the budget the loop logged for the run in force at its seq —
  // the latest round stating counters at or before it, else the first one after it (the message
  // that first counted it). History is the log's: re-arming with another budget relabels nothing
  // already run, and a replay after a restart draws what was seen live. `fallback` serves only a
  // log whose rounds state no budget.
  phases_with(rows, rounds, [&](const RowFacts& r) { return rounds.budget_at(r.seq).value_or(fallback); }, from, counted, codes);
}

void evaluation_phase_codes_fixed(const RowTable& rows, const RoundIndex& rounds, long long budget, std::size_t from,
                                  long long counted, std::vector<Phase>& codes) {
  phases_with(rows, rounds, [&](const RowFacts&) { return budget; }, from, counted, codes);
}

std::vector<Phase> evaluation_phase_codes(const RowTable& rows, const std::vector<Round>& rounds, long long fallback) {
  std::vector<Phase> codes;
  evaluation_phase_codes(rows, RoundIndex(rounds), fallback, 0, 0, codes);
  return codes;
}

std::vector<Phase> evaluation_phase_codes_fixed(const RowTable& rows, const std::vector<Round>& rounds, long long budget) {
  std::vector<Phase> codes;
  evaluation_phase_codes_fixed(rows, RoundIndex(rounds), budget, 0, 0, codes);
  return codes;
}

std::vector<Phase> evaluation_phase_codes(const Series& s, long long fallback) {
  return evaluation_phase_codes(RowTable(s.iterations), s.rounds, fallback);
}

std::vector<Phase> evaluation_phase_codes_fixed(const Series& s, long long budget) {
  return evaluation_phase_codes_fixed(RowTable(s.iterations), s.rounds, budget);
}

std::vector<std::string> evaluation_phases(const Series& s, long long fallback) {
  return names(evaluation_phase_codes(s, fallback));
}

std::vector<std::string> evaluation_phases_fixed(const Series& s, long long budget) {
  return names(evaluation_phase_codes_fixed(s, budget));
}

void rounds_in_force(const RowTable& rows, const RoundIndex& rounds, std::size_t from, std::vector<std::optional<std::size_t>>& out) {
  out.resize(std::min(from, rows.size()));
  // Grown by a quarter when taking on from a row (reserve_room): an exact reserve for one more entry
  // would copy every entry each time, a doubling leaves as much room again.
  reserve_room(out, rows.size());
  for (std::size_t i = out.size(); i < rows.size(); ++i) out.push_back(rounds.in_force(rows.rows[i].seq));
}

namespace {
// Where `now` first differs from `old_tail`, the entries of an earlier `now` from `from` on (the
// shorter length when one is a prefix of the other).
template <class T>
std::size_t first_changed(const std::vector<T>& old_tail, const std::vector<T>& now, std::size_t from) {
  const std::size_t m = std::min(old_tail.size(), now.size() - from);
  return from + static_cast<std::size_t>(std::mismatch(old_tail.begin(), old_tail.begin() + static_cast<std::ptrdiff_t>(m),
                                                       now.begin() + static_cast<std::ptrdiff_t>(from)).first - old_tail.begin());
}
}  // namespace

void RowPhases::update(const RowTable& rows, const std::vector<Round>& rounds, long long budget, bool fixed, std::size_t rows_same_before) {
  const auto& rs = rows.rows;
  const std::size_t n = rs.size();
  if (!updated_) rows_same_before = 0;
  const std::size_t rows_kept = std::min({rows_same_before, seq_max_before_.size() - 1, n});
  seq_max_before_.resize(rows_kept + 1);
  for (std::size_t i = rows_kept; i < n; ++i)
    seq_max_before_.push_back(std::max(seq_max_before_.back(), std::isnan(rs[i].seq) ? std::numeric_limits<double>::infinity() : rs[i].seq));
  // The rows whose phase and round in force stand: the kept rows, unless the rounds moved under them.
  std::size_t kr = rows_kept;
  if (!updated_ || rounds.size() < rounds_seen_ || budget != budget_ || fixed != fixed_) {
    kr = 0;
    rounds_seen_ = 0, rounds_sorted_ = true, rounds_budget_ = false;
    last_round_seq_ = -std::numeric_limits<double>::infinity();
    index_ = RoundIndex();
  }
  for (std::size_t i = rounds_seen_; i < rounds.size(); ++i) {
    const Round& r = rounds[i];
    const double q = r.seq.num;
    if (std::isnan(q) || q < last_round_seq_) rounds_sorted_ = false;
    else last_round_seq_ = q;
    if (!rounds_sorted_ || !(q > seq_max_before_[kr])) kr = 0;
    if (r.budget && *r.budget > 0) {
      if (!rounds_budget_) kr = 0;
      rounds_budget_ = true;
    }
  }
  rounds_seen_ = rounds.size();
  index_.extend(rounds);
  budget_ = budget, fixed_ = fixed;
  const bool first = !updated_;
  updated_ = true;

  const std::vector<Phase> old_phases(phases_.begin() + static_cast<std::ptrdiff_t>(std::min(kr, phases_.size())), phases_.end());
  const long long counted = static_cast<long long>(opt_before_[std::min(kr, opt_before_.size() - 1)] + over_before_[std::min(kr, over_before_.size() - 1)]);
  if (fixed) evaluation_phase_codes_fixed(rows, index_, budget, kr, counted, phases_);
  else evaluation_phase_codes(rows, index_, budget, kr, counted, phases_);
  for (auto* v : {&opt_before_, &over_before_, &wrap_before_}) v->resize(std::min(kr, v->size() - 1) + 1);
  for (std::size_t i = opt_before_.size() - 1; i < n; ++i) {
    const bool counts = !rs[i].pending();
    opt_before_.push_back(opt_before_.back() + (counts && phases_[i] == Phase::Optimization ? 1 : 0));
    over_before_.push_back(over_before_.back() + (counts && phases_[i] == Phase::OverBudget ? 1 : 0));
    wrap_before_.push_back(wrap_before_.back() + (counts && phases_[i] == Phase::WrapUp ? 1 : 0));
  }
  const std::vector<std::optional<std::size_t>> old_rounds(row_rounds_.begin() + static_cast<std::ptrdiff_t>(std::min(kr, row_rounds_.size())), row_rounds_.end());
  rounds_in_force(rows, index_, kr, row_rounds_);
  const std::size_t phase_from = first ? 0 : first_changed(old_phases, phases_, std::min(kr, phases_.size()));
  const std::size_t round_from = first ? 0 : first_changed(old_rounds, row_rounds_, std::min(kr, row_rounds_.size()));
  changes_.phase = std::min(changes_.phase, phase_from);
  changes_.round = std::min(changes_.round, round_from);
}

long long RowPhases::count(Phase p) const {
  switch (p) {
    case Phase::OverBudget: return over_before_.back();
    case Phase::WrapUp: return wrap_before_.back();
    case Phase::Optimization: break;
  }
  return opt_before_.back();
}

RowPhases::Changes RowPhases::take_changes() {
  const Changes c = changes_;
  changes_ = {std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()};
  return c;
}

std::size_t RowPhases::approx_bytes() const {
  std::size_t b = phases_.capacity() * sizeof(Phase) + row_rounds_.capacity() * sizeof(std::optional<std::size_t>);
  b += seq_max_before_.capacity() * sizeof(double);
  for (const auto* v : {&opt_before_, &over_before_, &wrap_before_}) b += v->capacity() * sizeof(std::uint32_t);
  return b;
}

std::vector<std::optional<std::size_t>> rounds_in_force(const RowTable& rows, const std::vector<Round>& rounds) {
  std::vector<std::optional<std::size_t>> out;
  rounds_in_force(rows, RoundIndex(rounds), 0, out);
  return out;
}

std::vector<std::optional<std::size_t>> rounds_in_force(const Series& s) { return rounds_in_force(RowTable(s.iterations), s.rounds); }

std::size_t latest_run_start(const Series& s) {
  std::size_t start = 0;
  std::optional<long long> prev;
  for (std::size_t i = 0; i < s.rounds.size(); ++i) {
    if (!s.rounds[i].round) continue;
    if (prev && *s.rounds[i].round <= *prev) start = i;
    prev = s.rounds[i].round;
  }
  return start;
}

std::optional<Interval> reference_interval(const Iteration& it) {
  if (!it.noise || !it.noise->referenceCi || !it.latencyMs || !it.speedup || !(*it.speedup > 0)) return std::nullopt;
  const double ref = *it.latencyMs * *it.speedup;
  const Interval& r = *it.noise->referenceCi;
  // The speedup may be rounded where it was printed: a part in a million either way still holds.
  if (ref < r.lo * (1 - 1e-6) || ref > r.hi * (1 + 1e-6)) return std::nullopt;
  return r;
}

namespace {
bool labellable(const Iteration& it) { return it.honest_measured() && !it.is_replay() && it.latency_ci(); }
// S-2 between two points that both have a latency.
Comparison compare_points(const Iteration& a, const Iteration& b) {
  return compare_latencies(*a.latencyMs, a.latency_ci(), *b.latencyMs, b.latency_ci());
}
}  // namespace

void label_point(Iteration& it, const Iteration* best, std::size_t best_index) {
  it.vsBest = it.vsReference = Versus::none;
  if (!labellable(it)) return;
  if (best && best->latencyMs) {
    it.vsBest = compare_points(it, *best).verdict;
    it.bestBefore = static_cast<std::uint32_t>(best_index);
  }
  if (auto c = versus_reference(it)) it.vsReference = c->verdict;
}

std::optional<Comparison> versus_best(const std::vector<Iteration>& points, std::size_t i) {
  if (i >= points.size()) return std::nullopt;
  const Iteration& it = points[i];
  if (it.vsBest == Versus::none || it.bestBefore >= points.size() || !labellable(it)) return std::nullopt;
  const Iteration& b = points[it.bestBefore];
  if (!b.latencyMs) return std::nullopt;
  return compare_points(it, b);
}

std::optional<Comparison> versus_reference(const Iteration& it) {
  if (!labellable(it) || !it.speedup || !(*it.speedup > 0)) return std::nullopt;
  return compare_latencies(*it.latencyMs, it.latency_ci(), *it.latencyMs * *it.speedup, reference_interval(it));
}

namespace {
// Why a point cannot be the Final, or nullopt when it can.
std::optional<std::string> final_refusal(const Iteration& it) {
  if (std::string v = verdict_of(it); v != "ok") return v;
  if (!it.latencyMs) return std::string("no-latency");
  if (!(*it.latencyMs > 0) || !std::isfinite(*it.latencyMs)) return std::string("bad-latency");
  return std::nullopt;
}
}  // namespace

FinalClaim final_claim(const std::vector<Iteration>& points, const FinalizeCall& call) {
  FinalClaim c;
  c.callSeq = call.seq.num;
  if (call.named && *call.named < points.size()) c.named = call.named;
  if (!c.named) {
    c.refused = "not-found";
    return c;
  }
  const Iteration& named = points[*c.named];
  if (named.is_replay()) {
    c.refused = "replay";
    return c;
  }
  if (auto why = final_refusal(named)) {
    c.refused = std::move(why);
    return c;
  }
  // The call's own re-measurement (the last replay row it printed), judged by the same rule.
  std::optional<std::size_t> replay;
  for (std::size_t r : call.replays)
    if (r < points.size()) replay = r;
  if (replay) {
    if (auto why = final_refusal(points[*replay])) {
      c.refused = "remeasure-" + *why;
      return c;
    }
  }
  c.index = replay ? replay : c.named;
  return c;
}

std::optional<FinalClaim> final_claim(const std::vector<Iteration>& points, const std::optional<FinalizeCall>& call) {
  if (!call) return std::nullopt;
  return final_claim(points, *call);
}

json to_json(const FinalClaim& c) {
  json j = json::object();
  j["callSeq"] = std::isnan(c.callSeq) ? json(nullptr) : json(c.callSeq);
  if (c.named) j["named"] = *c.named;
  if (c.index) j["index"] = *c.index;
  if (c.refused) j["refused"] = *c.refused;
  return j;
}

std::optional<double> accepted_finalize_seq(const Series& s) {
  const auto claim = final_claim(s.iterations, s.finalize);
  if (!claim || !claim->index) return std::nullopt;
  return claim->callSeq;
}

bool unfinished_run(const Series& s) {
  if (s.rounds.empty()) return false;
  const Round& last = s.rounds.back();
  if (last.wrapUp || last.audit) return false;
  if (auto fin = accepted_finalize_seq(s); fin && *fin > last.seq.num) return false;
  return true;
}

namespace {
// The reference a row implies (latency × speedup, both positive), NaN when none.
double implied_reference(const RowFacts& r) {
  return r.implies_reference() ? r.latency * r.speedup : std::numeric_limits<double>::quiet_NaN();
}
}  // namespace

std::vector<double> implied_references(const RowTable& rows) {
  std::vector<double> out;
  for (const auto& r : rows.rows)
    if (r.implies_reference()) out.push_back(implied_reference(r));
  return out;
}

std::vector<double> implied_references(const Series& s) { return implied_references(RowTable(s.iterations)); }

std::optional<double> reference_latency(const RowTable& rows) {
  ImpliedReferences refs;
  refs.update(rows, 0);
  return refs.median();
}

std::optional<double> reference_latency(const Series& s) { return reference_latency(RowTable(s.iterations)); }

std::optional<Drift> reference_drift(const RowTable& rows) {
  ImpliedReferences refs;
  refs.update(rows, 0);
  return refs.drift(rows);
}

std::optional<Drift> reference_drift(const Series& s) { return reference_drift(RowTable(s.iterations)); }

double labelled_speedup(const RowFacts& r, double reference) {
  return r.has(RowFacts::kSpeedup) && r.speedup > 0 ? r.speedup : reference / r.latency;
}

std::optional<FinalNumber> final_number(const std::vector<Iteration>& points, const std::optional<FinalClaim>& claim) {
  if (!claim || !claim->index || *claim->index >= points.size()) return std::nullopt;
  const std::size_t f = *claim->index;
  FinalNumber out;
  out.index = f;
  out.latency = *points[f].latencyMs;  // accepted: measured, positive and finite
  out.remeasured = points[f].is_replay();
  if (out.remeasured && claim->named && *claim->named != f) {
    const Iteration& first = points[*claim->named];
    const double named = *first.latencyMs;
    const double gap = (out.latency / named - 1.0) * 100.0;
    out.self = claim->named;
    out.gapPct = std::round(gap * 10.0) / 10.0;
    // S-3: with both intervals, the gap is judged by them (flagged unless SAME within noise); without,
    // by the fixed threshold (one replay with no noise estimate of its own).
    if (points[f].latency_ci() && first.latency_ci()) {
      const Comparison c = compare_points(points[f], first);
      out.gapVerdict = c.verdict;
      out.gapPmPct = c.pmPct;
      out.gapFlag = c.verdict != Versus::same;
    } else {
      out.gapFlag = std::fabs(gap) > kFinalGapFlagPct;
    }
  }
  return out;
}

ImpliedReferences::Group& ImpliedReferences::group(std::uint32_t node) {
  for (Group& g : groups_)
    if (g.node == node) return g;
  groups_.push_back({node, {}});
  return groups_.back();
}

void ImpliedReferences::update(const RowTable& rows, std::size_t from) {
  const std::size_t n = rows.size();
  from = std::min(from, of_row_.size());
  auto of = [&](std::size_t i) { return std::pair(implied_reference(rows.rows[i]), rows.rows[i].node); };
  // Many rows changed: sorting them all again is cheaper than one insert each.
  if ((of_row_.size() - from) + (n - from) > of_row_.size() / 8 + 64) {
    of_row_.resize(n);
    all_.clear();
    groups_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (i >= from) of_row_[i] = of(i);
      if (std::isnan(of_row_[i].first)) continue;
      all_.push_back(of_row_[i].first);
      group(of_row_[i].second).refs.push_back(of_row_[i].first);
    }
    std::sort(all_.begin(), all_.end());
    for (Group& g : groups_) std::sort(g.refs.begin(), g.refs.end());
    return;
  }
  auto erase = [](std::vector<double>& v, double x) { v.erase(std::lower_bound(v.begin(), v.end(), x)); };
  auto insert = [](std::vector<double>& v, double x) { v.insert(std::upper_bound(v.begin(), v.end(), x), x); };
  for (std::size_t i = from; i < of_row_.size(); ++i) {
    const auto [ref, node] = of_row_[i];
    if (std::isnan(ref)) continue;
    erase(all_, ref);
    erase(group(node).refs, ref);
  }
  of_row_.resize(from);
  for (std::size_t i = from; i < n; ++i) {
    const auto [ref, node] = of_row_.emplace_back(of(i));
    if (std::isnan(ref)) continue;
    insert(all_, ref);
    insert(group(node).refs, ref);
  }
}

std::optional<double> ImpliedReferences::median() const {
  const std::size_t n = all_.size();
  if (n == 0) return std::nullopt;
  if (n % 2) return all_[n / 2];
  return (all_[n / 2 - 1] + all_[n / 2]) / 2;
}

std::optional<Drift> ImpliedReferences::drift(const RowTable& rows) const {
  // J-4 per measuring node: a reference measured on another Slurm node is another machine, so points are
  // compared only with points of the same node (points without a node form one group). The widest
  // alarming group is reported (on a tie, the node named first); with no node anywhere this is J-4
  // over all points.
  auto name = [&](std::uint32_t node) { return node == 0 ? std::string_view() : std::string_view(rows.nodes[node - 1]); };
  std::optional<Drift> out;
  std::string_view out_node;
  for (const Group& g : groups_) {
    if (g.refs.size() < 4) continue;
    const double lo = g.refs.front(), hi = g.refs.back(), ratio = hi / lo;
    if (!(ratio >= kReferenceDriftRatio)) continue;
    if (!out || ratio > out->ratio || (ratio == out->ratio && name(g.node) < out_node)) {
      out = Drift{lo, hi, ratio, g.refs.size()};
      out_node = name(g.node);
    }
  }
  return out;
}

long long stagnation_count(const Series& s) {
  long long n = 0;
  std::size_t from = s.bestIndex ? *s.bestIndex + 1 : 0;
  for (std::size_t i = from; i < s.iterations.size(); ++i)
    if (!s.iterations[i].pending) ++n;
  return n;
}

bool plan_stale(const Series& s, long long evals_per_turn) {
  if (s.plans.empty()) return false;
  double last = s.plans.back().seq.num;
  long long need = std::max<long long>(2, evals_per_turn > 0 ? evals_per_turn : 3), n = 0;
  for (const auto& it : s.iterations)
    if (!it.pending && it.seq.num > last) ++n;
  return n >= need;
}

bool reviewable(const Series& s) { return !s.iterations.empty() || !s.plans.empty(); }

bool unreviewed_evals(const Series& s) {
  double last = -1;
  for (const auto& r : s.rounds)
    if (r.review) last = r.seq.num;
  for (const auto& it : s.iterations)
    if (it.seq.num > last) return true;
  return false;
}

bool round_progressed(const Series& s, const LoopState& state) {
  if (completed_evals(s) <= state.lastEvalCount) return false;  // nothing new was measured
  if (!state.significantProgress || !state.lastBestIndex) return true;
  const auto was = static_cast<std::size_t>(*state.lastBestIndex);
  if (was >= s.iterations.size() || !s.iterations[was].latencyMs) return true;
  const Iteration& before = s.iterations[was];
  if (!before.latency_ci()) return true;  // the best had no interval: new evaluations are progress, as without intervals
  if (!s.bestIndex || *s.bestIndex == was) return false;  // measured more, none better
  const Iteration& now = s.iterations[*s.bestIndex];
  const auto c = compare_points(now, before);
  return c.verdict != Versus::same && c.verdict != Versus::slower;  // faster, or unsure (no interval to tell by)
}

bool at_limit(const Series& s, long long pct) {
  if (pct <= 0 || !s.bestIndex || *s.bestIndex >= s.iterations.size()) return false;
  const auto f = s.iterations[*s.bestIndex].limit_fraction();
  return f && std::isfinite(*f) && *f * 100.0 >= static_cast<double>(pct);
}

Decision decide_continuation(const Series& s, const LoopState& state, long long max_no_progress_rounds) {
  Decision d;
  d.evalsDone = completed_evals(s);
  double challenged = state.challengedFinalizeSeq.value_or(-1);
  if (auto fin = accepted_finalize_seq(s); fin && *fin > challenged) {
    d.action = "stop";
    d.reason = "finalized";
  } else if (d.evalsDone >= state.budget) {
    d.action = "wrap-up";
    d.reason = "budget";
  } else if (at_limit(s, state.limitPct)) {
    d.action = "wrap-up";
    d.reason = "at-limit";
  } else if (state.round > 0 && !round_progressed(s, state) && state.noProgressRounds + 1 >= max_no_progress_rounds) {
    d.action = "wrap-up";
    d.reason = "no-progress";
  } else {
    d.action = "continue";
  }
  return d;
}

long long evals_over_budget(const Series& s, long long budget) {
  if (budget <= 0) return 0;
  return std::max<long long>(0, completed_evals(s) - budget);
}

json derived_json(const Series& s, bool has_user_task, const json& loop_inputs) {
  json state = state_defaults();
  long long max_np = 2, ept = 3, limit_pct = 0;
  bool significant = true;
  if (loop_inputs.is_object()) {
    if (auto st = loop_inputs.find("state"); st != loop_inputs.end() && st->is_object())
      for (auto it = st->begin(); it != st->end(); ++it) state[it.key()] = it.value();
    max_np = int_or(loop_inputs, "maxNoProgressRounds", max_np);
    significant = bool_or(loop_inputs, "significantProgress", significant);
    ept = int_or(loop_inputs, "evalsPerTurn", ept);
    limit_pct = int_or(loop_inputs, "wrapUpAtLimitPct", limit_pct);
  }
  LoopState ls = LoopState::from_json(state);
  ls.significantProgress = significant;
  ls.limitPct = limit_pct;

  json j = json::object();
  j["loopInputs"] = json{{"state", state}, {"maxNoProgressRounds", max_np}, {"evalsPerTurn", ept}};
  if (!significant) j["loopInputs"]["significantProgress"] = false;
  if (limit_pct > 0) j["loopInputs"]["wrapUpAtLimitPct"] = limit_pct;
  j["hasUserTask"] = has_user_task;
  j["completedEvals"] = completed_evals(s);
  j["evaluationPhases"] = evaluation_phases(s, ls.budget);
  json wrap = json::array();
  const WrapUpIndex in_wrap(s.rounds);
  for (const auto& it : s.iterations) wrap.push_back(in_wrap(it.seq.num));
  j["inWrapUpPhase"] = wrap;
  j["latestRunStart"] = latest_run_start(s);
  j["unfinishedRun"] = unfinished_run(s);
  j["impliedReferences"] = implied_references(s);
  auto ref = reference_latency(s);
  j["referenceLatency"] = ref ? json(*ref) : json(nullptr);
  auto drift = reference_drift(s);
  j["referenceDrift"] = drift ? json{{"min", drift->min}, {"max", drift->max}, {"ratio", drift->ratio},
                                     {"count", drift->count}}
                              : json(nullptr);
  j["stagnationCount"] = stagnation_count(s);
  j["planStale"] = plan_stale(s, ept);
  j["reviewable"] = reviewable(s);
  j["unreviewedEvals"] = unreviewed_evals(s);
  j["decision"] = decide_continuation(s, ls, max_np).to_json();
  if (const auto claim = final_claim(s.iterations, s.finalize)) j["finalClaim"] = to_json(*claim);
  return j;
}

}  // namespace kopt
