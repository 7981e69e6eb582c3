// Where a point was measured (native_metrics.slurm): read from the payload, on the wire, and the drift key (J-4).
#include <gtest/gtest.h>

#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/loop.hpp"
#include "kopt/series.hpp"

namespace {

using json = nlohmann::json;

kopt::Iteration from(const json& payload, std::vector<kopt::FieldNote>* notes = nullptr) {
  kopt::Iteration it;
  kopt::apply_payload_fields(it, payload, notes);
  return it;
}

TEST(C4_Slurm, ReadFromNativeMetricsAndNotAMetric) {
  std::vector<kopt::FieldNote> notes;
  auto it = from(json::parse(R"({"artifact":"k.cu","correct":true,"latency_ms":2,
    "native_metrics":{"speedup":1.5,"slurm":{"job_id":4711,"node":"gpu-a17","partition":"h100","gpu":"NVIDIA H100"}}})"),
                 &notes);
  ASSERT_TRUE(it.slurm);
  EXPECT_EQ(it.slurm->jobId, "4711");
  EXPECT_EQ(it.slurm->node, "gpu-a17");
  EXPECT_EQ(it.slurm->partition, "h100");
  EXPECT_EQ(it.slurm->gpu, "NVIDIA H100");
  ASSERT_EQ(it.metrics.size(), 1u);  // slurm is not a metric and is not "dropped"
  EXPECT_EQ(it.speedup, 1.5);
  EXPECT_TRUE(notes.empty());
  std::string wire;
  kopt::write_json(wire, it);
  EXPECT_NE(wire.find(R"("slurm":{"jobId":"4711","node":"gpu-a17","partition":"h100","gpu":"NVIDIA H100"})"),
            std::string::npos)
      << wire;
}

TEST(C4_Slurm, ArrayJobIdsAndPartialRecords) {
  auto it = from(json::parse(R"({"native_metrics":{"slurm":{"job_id":"812_3","node":"n1"}}})"));
  ASSERT_TRUE(it.slurm);
  EXPECT_EQ(it.slurm->jobId, "812_3");
  EXPECT_FALSE(it.slurm->partition);
  std::string wire;
  kopt::write_json(wire, it);
  EXPECT_NE(wire.find(R"("slurm":{"jobId":"812_3","node":"n1"})"), std::string::npos) << wire;
}

TEST(C4_Slurm, BadFieldsAreDroppedWithANote) {
  std::vector<kopt::FieldNote> notes;
  auto it = from(json::parse(R"({"native_metrics":{"slurm":{"job_id":-3,"node":"a\nb","partition":"","gpu":{"x":1}}}})"),
                 &notes);
  EXPECT_FALSE(it.slurm);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].reason.find("4 fields"), std::string::npos) << notes[0].reason;
  notes.clear();
  it = from(json::parse(R"({"native_metrics":{"slurm":"n1"}})"), &notes);
  EXPECT_FALSE(it.slurm);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].reason, "slurm is not an object: ignored");
  it = from(json::parse(R"({"native_metrics":{"slurm":{"node":")" + std::string(200, 'x') + R"("}}})"));
  EXPECT_FALSE(it.slurm);  // over 128 bytes
}

TEST(C4_Slurm, RoundTripsThroughTheWire) {
  auto it = from(json::parse(R"({"artifact":"k","correct":true,"native_metrics":{"slurm":{"job_id":9,"node":"n2"}}})"));
  it.seq.raw = 3;
  it.seq.num = 3;
  it.tool = "bash";
  std::string wire = "{\"iterations\":[";
  kopt::write_json(wire, it);
  wire += "]}";
  auto back = kopt::series_from_wire(json::parse(wire));
  ASSERT_EQ(back.iterations.size(), 1u);
  ASSERT_TRUE(back.iterations[0].slurm);
  EXPECT_EQ(back.iterations[0].slurm->jobId, "9");
  EXPECT_EQ(back.iterations[0].slurm->node, "n2");
}

kopt::Iteration point(double latency, double speedup, const char* node) {
  kopt::Iteration it;
  it.latencyMs = latency;
  it.speedup = speedup;
  if (node) it.slurm = kopt::SlurmWhere{std::nullopt, std::string(node), std::nullopt, std::nullopt};
  return it;
}

TEST(J4_DriftByNode, AReferenceOnAnotherNodeIsAnotherKey) {
  kopt::Series s;
  // node a: reference 10 ms; node b: reference 13 ms (a slower GPU). Each node alone is steady.
  for (int i = 0; i < 4; ++i) s.iterations.push_back(point(5, 2, "a"));
  for (int i = 0; i < 4; ++i) s.iterations.push_back(point(6.5, 2, "b"));
  EXPECT_FALSE(kopt::reference_drift(s));
  // Without nodes the same figures are one group and alarm (13/10 >= 1.15).
  for (auto& it : s.iterations) it.slurm.reset();
  auto d = kopt::reference_drift(s);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->count, 8u);
}

TEST(J4_DriftByNode, DriftWithinOneNodeStillAlarms) {
  kopt::Series s;
  for (double r : {10.0, 10.0, 10.0, 12.0}) s.iterations.push_back(point(r / 2, 2, "a"));
  for (int i = 0; i < 3; ++i) s.iterations.push_back(point(20, 1, "b"));  // too few on b to judge
  auto d = kopt::reference_drift(s);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->count, 4u);
  EXPECT_DOUBLE_EQ(d->min, 10);
  EXPECT_DOUBLE_EQ(d->max, 12);
}

}  // namespace
