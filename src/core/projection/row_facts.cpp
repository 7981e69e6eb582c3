#include "kopt/row_facts.hpp"

#include <algorithm>
#include <cmath>

namespace kopt {

bool RowFacts::measured() const {
  return has(kLatency) && latency > 0 && std::isfinite(latency);
}

bool RowFacts::implies_reference() const {
  return has(kLatency) && has(kSpeedup) && latency > 0 && speedup > 0;
}

std::uint32_t RowTable::node_of(const Iteration& it) {
  if (!it.slurm || !it.slurm->node) return 0;
  const std::string& name = *it.slurm->node;
  // Few names (one per measuring node): a linear search.
  auto at = std::find(nodes.begin(), nodes.end(), name);
  if (at == nodes.end()) at = nodes.insert(nodes.end(), name);
  return static_cast<std::uint32_t>(at - nodes.begin()) + 1;
}

void RowTable::update(const std::vector<Iteration>& its, std::size_t from) {
  from = std::min(from, rows.size());
  reserve_room(rows, its.size());
  rows.resize(its.size());
  for (std::size_t i = from; i < its.size(); ++i) rows[i] = facts_of(its[i], its[i].finalized, node_of(its[i]));
}

RowFacts RowTable::facts_of(const Iteration& it, bool finalized, std::uint32_t node) {
  RowFacts r;
  {
    r.seq = it.seq.num;
    r.latency = it.latencyMs.value_or(0);
    r.speedup = it.speedup.value_or(0);
    r.node = node;
    std::uint16_t f = 0;
    if (it.latencyMs) f |= RowFacts::kLatency;
    if (it.speedup) f |= RowFacts::kSpeedup;
    if (it.pending) f |= RowFacts::kPending;
    if (it.is_replay()) f |= RowFacts::kReplay;
    if (finalized) f |= RowFacts::kFinalized;
    if (it.correct == std::optional<bool>(false) || it.rewardHack || it.error.has_value() || it.evaluatorFailed ||
        it.compiled == std::optional<bool>(false))
      f |= RowFacts::kBad;
    if (it.correct == std::optional<bool>(true)) f |= RowFacts::kCorrect;
    if (it.seq.raw.is_number()) f |= RowFacts::kSeqNumber;
    r.flags = f;
  }
  return r;
}

std::size_t RowTable::approx_bytes() const {
  std::size_t b = rows.capacity() * sizeof(RowFacts);
  for (const auto& n : nodes) b += sizeof(std::string) + n.capacity();
  return b;
}

}  // namespace kopt
