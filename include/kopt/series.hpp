// The panel state (spec P-2, P-3): iterations, plans, environments, rounds and the seq lists.
#pragma once
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kopt/json.hpp"
#include "kopt/noise.hpp"

namespace kopt {

// An optional value kept off its struct, behind one pointer: for an Iteration's rarely present
// parts, so that a point without them pays 8 bytes each rather than the value's size (a live
// session holds tens of thousands of points). Reads like std::optional; copies are deep.
template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): as std::optional
  Boxed(T v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT(google-explicit-constructor)
  Boxed(std::optional<T> v) : p_(v ? std::make_unique<T>(std::move(*v)) : nullptr) {}  // NOLINT(google-explicit-constructor)
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;
  template <class... A>
  T& emplace(A&&... a) {
    p_ = std::make_unique<T>(std::forward<A>(a)...);
    return *p_;
  }
  // Assigning a value (a string literal to a Boxed<std::string>, say), as to a std::optional.
  template <class U>
    requires(std::is_constructible_v<T, U &&> && !std::is_same_v<std::decay_t<U>, Boxed> && !std::is_same_v<std::decay_t<U>, std::nullopt_t>)
  Boxed& operator=(U&& u) {
    if (p_) *p_ = T(std::forward<U>(u));
    else p_ = std::make_unique<T>(std::forward<U>(u));
    return *this;
  }
  void reset() { p_.reset(); }
  template <class U>
  T value_or(U&& dflt) const {
    return p_ ? *p_ : static_cast<T>(std::forward<U>(dflt));
  }
  friend bool operator==(const Boxed& a, const Boxed& b) { return a.p_ ? (b.p_ && *a.p_ == *b.p_) : !b.p_; }
  friend bool operator==(const Boxed& a, std::nullopt_t) { return !a.p_; }
  template <class U>
    requires(!std::is_same_v<U, Boxed> && !std::is_same_v<U, std::nullopt_t>)
  friend bool operator==(const Boxed& a, const U& u) {
    return a.p_ && *a.p_ == u;
  }
  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  operator std::optional<T>() const { return p_ ? std::optional<T>(*p_) : std::nullopt; }  // NOLINT(google-explicit-constructor)
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }

 private:
  std::unique_ptr<T> p_;
};

// Room for n elements in a per-point vector (the points, their rows and the chart's per-point state),
// grown by an eighth rather than doubled (issue 48): at 1M events a doubling left up to as much room
// again, tens of MB over a session's vectors (most after the first point past a catch-up whose vectors
// were made to size). Amortized O(1) all the same, at about 8 moves per element over a session.
template <class V>
void reserve_room(V& v, std::size_t n) {
  if (n > v.capacity()) v.reserve(std::max(n, v.capacity() + v.capacity() / 8 + 16));
}

// A seq as logged (copied verbatim) plus its numeric value for comparisons (NaN when not a number).
struct Seq {
  json raw;
  double num = 0;
};

struct Change {
  Seq seq;
  std::string tool;
  std::string kind;  // "write" | "edit"
  std::string filePath;
  std::optional<std::string> content, oldText, newText;
  bool replaceAll = false;
  bool truncated = false;
};

// Where a point was measured on a Slurm cluster (contract `native_metrics.slurm`); each field when given.
struct SlurmWhere {
  std::optional<std::string> jobId, node, partition, gpu;
};

// Ours (DV-13): the bytes a plugin-measured point measured, as the plugin's evaluator hashed them
// (kernel_evaluate's result, `sources`): each path as the agent gave it and the SHA-256 of its bytes.
struct SourceHash {
  std::string path, sha256;
};
struct MeasuredSources {
  std::vector<SourceHash> solution;
  std::optional<SourceHash> reference, inputs;
  // Every file the builds read (issue 51: the compilers' dependency lists, paths relative to the
  // session's working directory), when the result carried them; empty for older results.
  std::vector<SourceHash> read;
};

// A measurement's noise as its payload reported it (issue 49; docs/eval-contract.md): the interval of the
// latency, the reference's, and how many timed trials. Absent means unknown, never zero.
struct Noise {
  std::optional<Interval> latencyCi, referenceCi;
  std::optional<long long> samples;
};

// Distance to the limit (issue 49): the metrics that say how far a point is from the machine's limit
// (kopt-bench's fractions of the probed memory bandwidth and compute peak). C-4 keeps them past its
// 12 entries and they do not count toward them, so the panel has them whatever order a payload lists.
inline bool always_kept_metric(std::string_view key) { return key == "bandwidth_fraction" || key == "compute_fraction"; }

struct Iteration {
  // The fields the rules read of every row (RowTable::update, the report's and the loop's walks) come
  // first, so that a walk over 50k rows touches their first cache lines only (an Iteration is 408 bytes).
  Seq seq;
  std::optional<double> latencyMs, speedup;
  std::optional<bool> compiled, correct;
  bool rewardHack = false, pending = false, finalized = false, evaluatorFailed = false;
  bool commandUpgraded = false;  // internal: F-3 applies once per point
  // Spec N: the point against the best settled before it and against its reference (noise.hpp), labelled
  // when it settles; none on a point without an interval. bestBefore: the best it was compared with.
  Versus vsBest = Versus::none, vsReference = Versus::none;
  std::uint32_t bestBefore = 0xffffffffu;
  std::optional<std::string> channel;  // "shell" | "replay"; absent for evaluator tools
  // Boxed (series.hpp): present on few points (an error on ~5 %, a job id or an evaluation id on a
  // quarter to a third; the length only when the wire command is cut), 8 bytes each on the others.
  Boxed<std::string> error;
  Boxed<SlurmWhere> slurm;
  Boxed<Noise> noise;
  std::string tool;
  Boxed<std::string> jobId, evaluationId;
  std::optional<std::string> command;  // wire form (D-7)
  Boxed<std::size_t> commandLength;
  std::string fullCommand;  // internal: the whole command, for judgement and replay
  std::optional<std::string> artifactPath;
  std::vector<std::pair<std::string, double>> metrics;
  Boxed<std::vector<std::string>> blocking, advisory, notMeasured;
  Boxed<json> workloadSubset;
  std::vector<Change> changes;
  // DV-13: measured by the plugin's evaluator (kernel_evaluate), never by anything the agent ran.
  bool plugin = false;
  Boxed<MeasuredSources> sources;  // only on plugin points
  // Internal (not on the wire): the `time` of the event that settled the point (NaN when it had none).
  double time = std::numeric_limits<double>::quiet_NaN();

  bool is_replay() const { return channel && *channel == "replay"; }
  // A metric's value by key (the first entry with it), or nullopt.
  std::optional<double> metric(std::string_view key) const {
    for (const auto& [k, v] : metrics)
      if (k == key) return v;
    return std::nullopt;
  }
  // Spec S-5: how near the machine's limit it ran, the larger of its fractions; nullopt when it has none.
  std::optional<double> limit_fraction() const {
    const auto b = metric("bandwidth_fraction"), c = metric("compute_fraction");
    if (b && c) return std::max(*b, *c);
    return b ? b : c;
  }
  // Spec S-1: the latency's interval, or nullopt when the payload gave none.
  std::optional<Interval> latency_ci() const { return noise ? noise->latencyCi : std::nullopt; }
  // I-1 / H-3: correct, no reward hack, no error, measured.
  bool honest_measured() const { return correct.value_or(false) && !rewardHack && !error && latencyMs.has_value(); }
};

// The points' vector grows by moves (reserve_room), never by copies.
static_assert(std::is_nothrow_move_constructible_v<Iteration>);

struct Plan {
  Seq seq;
  std::string phase, approach;
  std::optional<std::string> hypothesis, next;
};

struct Env {
  Seq seq;
  std::string location, device;
  std::optional<std::string> constraint, probe, notes;
  std::optional<json> versions;  // record of strings
};

struct Round {
  Seq seq;
  std::optional<long long> round, evalsUsed, budget;
  std::optional<std::string> review, reviewNote;
  bool reviewFailed = false;  // ours: the message says its review was asked for and failed
  bool wrapUp = false, audit = false, challenge = false;
  // Listed among the reviews (the tab's card, the report's): a review came back, or it was asked for
  // and failed (a failed review is shown as such, never left out).
  bool reviewed() const { return review.has_value() || reviewFailed; }
  // The word that names this loop message (kopt/labels.hpp; "rev.round" takes {n}: round_text()).
  const char* label_key() const {
    if (audit) return "rev.audit";
    if (challenge) return "rev.challenge";
    if (wrapUp) return "rev.wrapup";
    return "rev.round";
  }
  // The round's number as its label shows it, "—" when the message has none.
  std::string round_text() const { return round ? std::to_string(*round) : std::string("—"); }
};

// The latest finalize call (H-8: the latest call by seq decides the Final, whatever it names and wherever
// that sits in the log): the point it names, resolved as the log stands (its evaluation_id's latest
// point, else its artifact's best by H-3), and the plugin's re-measurements in its own result (H-5).
// Wire key `finalize` ({seq, named?, replays}), absent when the log has no finalize call.
struct FinalizeCall {
  Seq seq;
  std::optional<std::size_t> named;
  std::vector<std::size_t> replays;
};

// A snapshot of the series, finalize marks (H-2, H-3) and bestIndex applied.
struct Series {
  std::vector<Iteration> iterations;
  std::vector<Plan> plans;
  std::vector<Env> envs;
  std::vector<Seq> profileSeqs, uncollectedSeqs, echoedSeqs;
  std::vector<Round> rounds;
  std::optional<std::size_t> bestIndex;
  std::optional<FinalizeCall> finalize;
};

// Wire form of each piece (keys as in spec P-3; absent optionals are absent).
// What a chart and a run's summary read of a series: its points, profile marks, rounds and best
// index, wherever they are kept (a Series; or a session's points, read in place from its projector,
// beside the outline's other lists: Session keeps no second copy of its points).
struct SeriesView {
  const std::vector<Iteration>& iterations;
  const std::vector<Seq>& profileSeqs;
  const std::vector<Round>& rounds;
  std::optional<std::size_t> bestIndex;
  const std::optional<FinalizeCall>& finalize;

  SeriesView(const Series& s)  // NOLINT(google-explicit-constructor): a Series is a view of itself
      : iterations(s.iterations), profileSeqs(s.profileSeqs), rounds(s.rounds), bestIndex(s.bestIndex), finalize(s.finalize) {}
  SeriesView(const std::vector<Iteration>& its, const Series& lists)
      : iterations(its), profileSeqs(lists.profileSeqs), rounds(lists.rounds), bestIndex(lists.bestIndex), finalize(lists.finalize) {}
};

json to_json(const Iteration& it);
json to_json(const Plan& p);
json to_json(const Env& e);
json to_json(const Round& r);
void write_json(std::string& out, const Iteration& it);
void write_json(std::string& out, const Plan& p);
void write_json(std::string& out, const Env& e);
void write_json(std::string& out, const Round& r);
// The whole series object (keys sessionId, updatedAt, iterations, plans, envs, profileSeqs,
// uncollectedSeqs, echoedSeqs, rounds, bestIndex, finalize when there is one).
// The `finalize` object's wire text (shared by every writer of a body or a delta).
void write_json(std::string& out, const FinalizeCall& f);
json to_json(const Series& s, std::string_view session_id, double updated_at);
// And back: the one reader of the wire form (a /series body or a vector's `series`), for the
// loop's and the chart's oracles; the internal full command is the wire command
// (src/core/projection/series_wire.cpp).
Series series_from_wire(const json& body);

}  // namespace kopt
