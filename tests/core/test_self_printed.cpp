// D-8 (DV-10): a contract line whose payload the command itself spells out is not a measurement.
#include <gtest/gtest.h>

#include "kopt/contract.hpp"
#include "kopt/shell.hpp"

namespace {

// Judges the first contract line of `output` against `command`.
bool self_printed(const std::string& command, const std::string& output) {
  auto payloads = kopt::contract_payloads(output);
  EXPECT_EQ(payloads.size(), 1u) << output;
  if (payloads.empty()) return false;
  kopt::CommandSpelling spelling(command);
  return spelling.spells(payloads[0].text, payloads[0].payload);
}

const std::string kLine = R"(KERNEL_EVAL={"artifact":"k.py","latency_ms":0.1,"correct":true})";
const std::string kEscaped = R"(KERNEL_EVAL={\"artifact\":\"k.py\",\"latency_ms\":0.1,\"correct\":true})";

TEST(D8_SelfPrinted, CarriersThatSpellThePayload) {
  EXPECT_TRUE(self_printed("echo '" + kLine + "' | tee x.log", kLine));
  EXPECT_TRUE(self_printed("printf '%s\\n' '" + kLine + "' >&2; cat /dev/null | tee y", kLine));
  EXPECT_TRUE(self_printed("cat <<EOF | tee r\n" + kLine + "\nEOF", kLine));
  EXPECT_TRUE(self_printed("tee r <<< '" + kLine + "'", kLine));
  EXPECT_TRUE(self_printed("python3 -c \"print('" + kEscaped + "')\"", kLine));
  EXPECT_TRUE(self_printed("bash -c \"echo \\\"" + kEscaped + "\\\"\"", kLine));  // escaped quotes inside the quoted script
  EXPECT_TRUE(self_printed("X='" + kLine + "'; ./bench >/dev/null; echo \"$X\"", kLine));
  // re-serialised: different key order and spacing, Python and JavaScript literals
  EXPECT_TRUE(self_printed(R"(./emit '{"correct": true, "latency_ms": 0.1, "artifact": "k.py"}')", kLine));
  EXPECT_TRUE(self_printed(
      R"j(python3 -c "import json;print('KERNEL_EVAL='+json.dumps({'artifact':'k.py','latency_ms':0.1,'correct':True}))")j",
      R"(KERNEL_EVAL={"artifact": "k.py", "latency_ms": 0.1, "correct": true})"));
  EXPECT_TRUE(self_printed(
      R"j(node -e 'console.log("KERNEL_EVAL="+JSON.stringify({latency_ms: 0.1, correct: true, artifact: "k.py"}))')j",
      kLine));
}

TEST(D8_SelfPrinted, GenuineBenchmarksAreNotSelfPrinted) {
  EXPECT_FALSE(self_printed("./bench | tee log", kLine));
  EXPECT_FALSE(self_printed("./bench | grep KERNEL_EVAL", kLine));
  EXPECT_FALSE(self_printed("python3 bench.py --artifact k.py", kLine));
  // a spelled record that differs in one value is not this payload
  EXPECT_FALSE(self_printed(R"(./bench --expect '{"artifact":"k.py","latency_ms":0.2,"correct":true}')", kLine));
  // a spelled record with an extra key is not this payload
  EXPECT_FALSE(self_printed(R"(./bench --cfg '{"artifact":"k.py","latency_ms":0.1,"correct":true,"x":1}')", kLine));
}

TEST(D8_SelfPrinted, HostileCommandsStayBounded) {
  std::string deep(100000, '{');
  EXPECT_FALSE(self_printed(deep, kLine));
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "{\"a\":1} ";
  EXPECT_FALSE(self_printed(many, kLine));
  EXPECT_FALSE(self_printed(std::string(50000, '\\') + "\"", kLine));
}

}  // namespace
