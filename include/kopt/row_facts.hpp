// What the per-revision rules read of each iteration, packed: an Iteration is 408 bytes, so
// a walk over 50k of them misses the cache on every row, while these are 40 bytes each. The chart,
// the phases, the rounds in force, the pooled reference and its drift read a RowTable; a session
// keeps one up to date from the first row that changed (O(changed) per revision).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kopt/series.hpp"

namespace kopt {

struct RowFacts {
  enum : std::uint16_t {
    kLatency = 1,  // latencyMs present (`latency` may still be NaN or not positive)
    kSpeedup = 2,  // speedup present
    kPending = 4,
    kReplay = 8,  // channel "replay"
    kFinalized = 16,
    kBad = 32,         // incorrect, reward hack, error, evaluator failure or not compiled
    kCorrect = 64,     // correct == true
    kSeqNumber = 128,  // the seq is a JSON number
  };
  double seq = 0;          // Seq::num (NaN when it reads as no number)
  double latency = 0;      // *latencyMs when kLatency
  double speedup = 0;      // *speedup when kSpeedup
  std::uint32_t node = 0;  // 0: no Slurm node; else 1 + its index in RowTable::nodes
  std::uint16_t flags = 0;

  bool has(std::uint16_t f) const { return (flags & f) != 0; }
  bool pending() const { return has(kPending); }
  bool replay() const { return has(kReplay); }
  // A latency the chart can place: present, positive and finite.
  bool measured() const;
  // The reference latency this row implies (latency × speedup), when both are positive.
  bool implies_reference() const;
};

struct RowTable {
  std::vector<RowFacts> rows;
  std::vector<std::string> nodes;  // Slurm node names, in the order first seen

  RowTable() = default;
  explicit RowTable(const std::vector<Iteration>& its) { update(its, 0); }
  // Rows [from, its.size()) read again from `its`; rows before `from` are kept as they are.
  void update(const std::vector<Iteration>& its, std::size_t from);
  // One point's facts, its finalized mark and Slurm node given (node_of's number, 0 for none).
  static RowFacts facts_of(const Iteration& it, bool finalized, std::uint32_t node);
  std::size_t size() const { return rows.size(); }
  std::size_t approx_bytes() const;

 private:
  std::uint32_t node_of(const Iteration& it);
};

}  // namespace kopt
