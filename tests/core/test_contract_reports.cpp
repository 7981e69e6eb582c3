// kopt parse's per-line verdicts (contract_line_reports): every line that starts with KERNEL_EVAL= is
// a point, a degraded point (which field, why) or rejected (why), with its line number.
#include <gtest/gtest.h>

#include "kopt/contract.hpp"

namespace {

using K = kopt::ContractLineReport::Kind;

bool has_note(const kopt::ContractLineReport& r, const std::string& field) {
  for (const auto& n : r.notes)
    if (n.field == field) return true;
  return false;
}

TEST(ContractReports, EveryPrefixedLineIsReportedWithItsLineNumber) {
  const std::string text =
      "warming up\n"
      "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":1.25}\n"
      "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":\"fast\"}\n"
      "KERNEL_EVAL={\"artifact\":\"k.cu\", correct: true}\n"
      "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":NaN}\n"
      "  KERNEL_EVAL=done\n"
      "KERNEL_EVAL={\"correct\":\"yes\"}\n"
      "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":2\n"
      "not KERNEL_EVAL={\"artifact\":\"x\",\"correct\":true}\n";
  auto r = kopt::contract_line_reports(text);
  ASSERT_EQ(r.size(), 7u);  // the last line does not start with the prefix
  EXPECT_EQ(r[0].line, 1u);
  EXPECT_EQ(r[0].kind, K::Point);
  EXPECT_TRUE(r[0].notes.empty());

  EXPECT_EQ(r[1].line, 2u);
  EXPECT_EQ(r[1].kind, K::Degraded);
  ASSERT_TRUE(has_note(r[1], "latency_ms"));
  EXPECT_NE(r[1].notes[0].reason.find("\"fast\""), std::string::npos);

  EXPECT_EQ(r[2].kind, K::Rejected);
  EXPECT_EQ(r[2].reason, "invalid JSON");
  EXPECT_FALSE(r[2].payload);
  EXPECT_EQ(r[3].kind, K::Rejected);  // NaN is no JSON
  EXPECT_EQ(r[3].reason, "invalid JSON");

  EXPECT_EQ(r[4].line, 5u);  // leading whitespace still starts the line
  EXPECT_EQ(r[4].kind, K::Rejected);
  EXPECT_NE(r[4].reason.find("no '{'"), std::string::npos);

  EXPECT_EQ(r[5].kind, K::Rejected);
  EXPECT_NE(r[5].reason.find("\"correct\" is \"yes\""), std::string::npos);
  EXPECT_NE(r[5].reason.find("artifact"), std::string::npos);
  ASSERT_TRUE(r[5].payload);

  EXPECT_EQ(r[6].kind, K::Rejected);
  EXPECT_NE(r[6].reason.find("do not close"), std::string::npos);
}

TEST(ContractReports, AgreesWithTheProjectionRules) {
  // A line is reported as a point exactly when the projection's own rules make it one.
  const std::string text =
      "KERNEL_EVAL={\"artifact_path\":\"a\",\"correct\":false}\n"
      "KERNEL_EVAL={\"artifact\":\"\",\"correct\":true}\n"
      "KERNEL_EVAL={\"artifact\":\"a\",\"correct\":1}\n"
      "KERNEL_EVAL=[1,2]\n"
      "KERNEL_EVAL={\"artifact\":\"a\",\"correct\":true,\"latency_ms\":-3,\"compiled\":\"y\","
      "\"native_metrics\":{\"a\":\"1\",\"b\":2},\"blocking\":\"oops\",\"workload_indices\":[\"x\"]}\n";
  auto r = kopt::contract_line_reports(text);
  auto payloads = kopt::contract_payloads(text);
  std::size_t points = 0;
  for (const auto& p : payloads) points += kopt::payload_is_point(p.payload);
  std::size_t reported = 0;
  for (const auto& x : r) reported += x.kind != K::Rejected;
  EXPECT_EQ(points, reported);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].kind, K::Point);
  EXPECT_EQ(r[1].kind, K::Rejected);
  EXPECT_EQ(r[2].kind, K::Rejected);
  EXPECT_EQ(r[3].kind, K::Rejected);
  EXPECT_EQ(r[4].kind, K::Degraded);
  for (const char* f : {"latency_ms", "compiled", "native_metrics", "blocking", "workload_indices"})
    EXPECT_TRUE(has_note(r[4], f)) << f;
}

TEST(ContractReports, NotesDoNotChangeTheFields) {
  auto p = kopt::parse_json(R"({"artifact":"a","correct":true,"latency_ms":"fast","native_metrics":{"speedup":2}})");
  ASSERT_TRUE(p);
  kopt::Iteration a, b;
  std::vector<kopt::FieldNote> notes;
  kopt::apply_payload_fields(a, *p);
  kopt::apply_payload_fields(b, *p, &notes);
  EXPECT_EQ(a.latencyMs, b.latencyMs);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.speedup, b.speedup);
  EXPECT_EQ(notes.size(), 1u);
}

TEST(ContractReports, NoPrefixNoReports) {
  EXPECT_TRUE(kopt::contract_line_reports("").empty());
  EXPECT_TRUE(kopt::contract_line_reports("KERNEL_EVAL\nkernel_eval={}\n").empty());
}

}  // namespace
