// The packed row facts (include/kopt/row_facts.hpp) the per-revision rules read instead of Iterations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kopt/derived.hpp"
#include "kopt/row_facts.hpp"

using namespace kopt;

namespace {
Iteration row(double seq, std::optional<double> latency, std::optional<double> speedup = std::nullopt) {
  Iteration it;
  it.seq.raw = seq;
  it.seq.num = seq;
  it.latencyMs = latency;
  it.speedup = speedup;
  it.correct = true;
  return it;
}
}  // namespace

TEST(RowFacts, EachFlagFromItsField) {
  std::vector<Iteration> its;
  its.push_back(row(1, 2.0, 3.0));
  its.push_back(row(2, std::nullopt));
  its.back().pending = true;
  its.back().correct.reset();
  its.push_back(row(3, 0.0));  // present but not measured
  its.back().channel = "replay";
  its.back().finalized = true;
  its.push_back(row(4, std::numeric_limits<double>::infinity()));
  its.back().error = "boom";
  its.push_back(row(5, 1.0));
  its.back().compiled = false;
  its.back().seq.raw = "5";  // a seq that is not a JSON number
  const RowTable t(its);
  ASSERT_EQ(t.size(), 5u);
  const auto& r = t.rows;
  EXPECT_TRUE(r[0].measured() && r[0].implies_reference() && r[0].has(RowFacts::kCorrect) && !r[0].has(RowFacts::kBad));
  EXPECT_DOUBLE_EQ(r[0].latency * r[0].speedup, 6.0);
  EXPECT_TRUE(r[1].pending() && !r[1].has(RowFacts::kLatency) && !r[1].measured() && !r[1].has(RowFacts::kCorrect));
  EXPECT_TRUE(r[2].has(RowFacts::kLatency) && !r[2].measured() && r[2].replay() && r[2].has(RowFacts::kFinalized));
  EXPECT_TRUE(!r[3].measured() && r[3].has(RowFacts::kBad));
  EXPECT_TRUE(r[4].has(RowFacts::kBad) && !r[4].has(RowFacts::kSeqNumber) && r[0].has(RowFacts::kSeqNumber));
}

TEST(RowFacts, UpdateRereadsFromTheFirstChangedRowOnly) {
  std::vector<Iteration> its = {row(1, 1.0), row(2, 2.0), row(3, 3.0)};
  RowTable t(its);
  its[0].latencyMs = 9.0;  // changed, but before `from`: kept as it was read
  its[2].latencyMs = 4.0;
  its.push_back(row(4, 5.0));
  t.update(its, 2);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.rows[0].latency, 1.0);
  EXPECT_EQ(t.rows[2].latency, 4.0);
  EXPECT_EQ(t.rows[3].latency, 5.0);
  t.update(its, 0);
  EXPECT_EQ(t.rows[0].latency, 9.0);
}

TEST(RowFacts, SlurmNodesAreNamedOnceAndDriftGroupsByThem) {
  std::vector<Iteration> its;
  for (int i = 0; i < 8; ++i) {
    its.push_back(row(i, 1.0, i < 4 ? 10.0 : 10.0 + i));  // node b's implied references drift, a's do not
    its.back().slurm = SlurmWhere{};
    its.back().slurm->node = i < 4 ? "a" : "b";
  }
  const RowTable t(its);
  ASSERT_EQ(t.nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.rows[0].node, 1u);
  EXPECT_EQ(t.rows[7].node, 2u);
  const auto d = reference_drift(t);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->count, 4u);
  EXPECT_DOUBLE_EQ(d->min, 14.0);
  EXPECT_DOUBLE_EQ(d->max, 17.0);
}
