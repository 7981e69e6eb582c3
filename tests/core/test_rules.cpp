// Rule-by-rule tests of the projection core, named after the spec sections (spec/projection.md,
// kept in docs/eval-contract.md), beyond what the conformance vectors cover.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/finalize.hpp"
#include "kopt/projector.hpp"
#include "kopt/shell.hpp"
#include "kopt/utf16.hpp"

#include "test_events.hpp"

using kopt::json;

namespace {

using kopt::test::call;
using kopt::test::result;
json project(const json& events) {
  kopt::Projector p;
  p.feed(events);
  return json::parse(p.series_json("t", 0));
}

TEST(JsNumber, WritesNumbersAsJavaScriptDoes) {
  EXPECT_EQ(kopt::js_number(0), "0");
  EXPECT_EQ(kopt::js_number(-0.0), "0");
  EXPECT_EQ(kopt::js_number(1.5), "1.5");
  EXPECT_EQ(kopt::js_number(-1.5), "-1.5");
  EXPECT_EQ(kopt::js_number(100), "100");
  EXPECT_EQ(kopt::js_number(1e21), "1e+21");
  EXPECT_EQ(kopt::js_number(1e20), "100000000000000000000");
  EXPECT_EQ(kopt::js_number(1e-7), "1e-7");
  EXPECT_EQ(kopt::js_number(1.5e-6), "0.0000015");
  EXPECT_EQ(kopt::js_number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(kopt::js_number(1e308), "1e+308");
  EXPECT_EQ(kopt::js_number(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(kopt::js_number(std::numeric_limits<double>::infinity()), "null");
}

TEST(JsStringify, KeepsKeyOrderAndEscapesLikeJsonStringify) {
  auto j = kopt::parse_json(R"({"b":1.0,"a":[true,null,"x\u0001\"\\\n"],"c":12.40})");
  ASSERT_TRUE(j);
  EXPECT_EQ(kopt::js_stringify(*j), R"({"b":1,"a":[true,null,"x\u0001\"\\\n"],"c":12.4})");
}

TEST(JsStringify, InvalidUtf8NeverReachesTheOutput) {
  json j = std::string("a\xff\xc0\x80" "b\xe7\xae\x97");
  EXPECT_EQ(kopt::js_stringify(j), "\"a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "b\xe7\xae\x97\"");
}

TEST(ParseJson, RejectsTooDeepNestingWithoutCrashing) {
  std::string deep(100000, '[');
  EXPECT_FALSE(kopt::parse_json(deep));
  std::string ok = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(kopt::parse_json(ok));
  EXPECT_FALSE(kopt::parse_json("{\"a\":1e400}"));  // overflow: rejected (docs/limits.md)
  EXPECT_FALSE(kopt::parse_json("\"\xff\""));       // invalid UTF-8
}

TEST(Utf16, CapsCountCodeUnitsAndNeverSplitAPair) {
  std::string cjk = "\xE7\xAE\x97\xE5\xAD\x90";      // 算子: 2 units, 6 bytes
  std::string emoji = "\xF0\x9F\x98\x80";            // 1 code point, 2 units
  EXPECT_EQ(kopt::utf16_length(cjk), 2u);
  EXPECT_EQ(kopt::utf16_length(emoji + "a"), 3u);
  EXPECT_EQ(kopt::utf16_prefix(emoji + "a", 1), "");  // half a pair is left out
  EXPECT_EQ(kopt::utf16_prefix(emoji + "a", 2), emoji);
  EXPECT_EQ(kopt::utf16_suffix("a" + emoji, 1), "");
  bool cut = false;
  EXPECT_EQ(kopt::utf16_cap(cjk + cjk, 3, &cut), cjk + "\xE7\xAE\x97\xE2\x80\xA6");
  EXPECT_TRUE(cut);
}

TEST(D7_WireCommand, CountsUtf16UnitsForNonAsciiCommands) {
  std::string cmd;
  for (int i = 0; i < 200; ++i) cmd += "\xE7\xAE\x97";  // 200 units
  EXPECT_FALSE(kopt::wire_command(cmd).length);
  for (int i = 0; i < 101; ++i) cmd += "\xE7\xAE\x97";  // 301 units
  auto w = kopt::wire_command(cmd);
  ASSERT_TRUE(w.length);
  EXPECT_EQ(*w.length, 301u);
  EXPECT_EQ(kopt::utf16_length(w.command), 300u);
}

TEST(B1_ContractLine, CarriageReturnIsTrailingJunkAndMidLineMentionsDoNotCount) {
  auto p = kopt::contract_payloads("KERNEL_EVAL={\"artifact\":\"a\",\"correct\":true}\r\nsay KERNEL_EVAL={\"x\":1}\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].payload["artifact"], "a");
}

TEST(B2_ContractLine, FirstBalancedObjectOnlyNoRetry) {
  EXPECT_TRUE(kopt::contract_payloads("KERNEL_EVAL={bad} {\"artifact\":\"a\",\"correct\":true}").empty());
  auto p = kopt::contract_payloads("KERNEL_EVAL= junk {\"artifact\":\"a\\\"}\",\"correct\":false} tail");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].payload["artifact"], "a\"}");
}

TEST(B6_Latency, NonFiniteOrNonPositiveLatencyIsAnError) {
  kopt::Iteration it;
  kopt::apply_payload_fields(it, json{{"artifact", "a"}, {"correct", true}, {"latency_ms", -2.5}, {"speedup", 3}});
  EXPECT_FALSE(it.latencyMs);
  ASSERT_TRUE(it.error);
  EXPECT_EQ(*it.error, "invalid latency_ms: -2.5");
  EXPECT_EQ(it.speedup, 3);  // an explicit speedup stays
}

TEST(D4_Wrappers, ChainAndSwallowOptionValues) {
  EXPECT_EQ(kopt::command_kind("sudo -u root nice -n 5 timeout -s KILL 60 tail -f log"), kopt::CommandKind::ReadBack);
  EXPECT_EQ(kopt::command_kind("env -u X A=1 ./bench"), kopt::CommandKind::Run);
  EXPECT_EQ(kopt::command_kind("A=1 B=2"), kopt::CommandKind::Echo);
  EXPECT_EQ(kopt::command_kind(""), kopt::CommandKind::Run);
  EXPECT_EQ(kopt::command_kind("echo 'a; ./bench'"), kopt::CommandKind::Echo);  // operators inside quotes are data
  EXPECT_EQ(kopt::command_kind("echo \"$(./bench)\""), kopt::CommandKind::Echo);  // quoted: opaque, by design
  EXPECT_EQ(kopt::command_kind("echo $(./bench)"), kopt::CommandKind::Run);
}

TEST(E6_ProfilerHops, AtMostThreeHops) {
  const std::vector<std::string> prof{"ncu"};
  EXPECT_TRUE(kopt::matches_profile_command("ssh a ssh b ssh c ncu -o r x", prof));
  EXPECT_FALSE(kopt::matches_profile_command("ssh a ssh b ssh c ssh d ncu -o r x", prof));
  EXPECT_TRUE(kopt::matches_profile_command("bash -c 'ncu --set full ./a'", prof));
  EXPECT_FALSE(kopt::matches_profile_command("echo ncu -o x y", prof));
}

TEST(G1_Dedup, SessionWideByCompactPayloadNotByWhitespace) {
  json ev = json::array({call(1, "c1", "bash", {{"command", "./b"}}),
                         result(2, "c1", "KERNEL_EVAL={\"artifact\":\"k\",\"correct\":true,\"latency_ms\":1.0}"),
                         call(3, "c2", "bash", {{"command", "./b"}}),
                         result(4, "c2", "KERNEL_EVAL={ \"artifact\" : \"k\", \"correct\":true, \"latency_ms\":1 }"),
                         call(5, "c3", "bash", {{"command", "./b"}}),
                         result(6, "c3", "KERNEL_EVAL={\"correct\":true,\"artifact\":\"k\",\"latency_ms\":1}")});
  json s = project(ev);
  ASSERT_EQ(s["iterations"].size(), 2u);  // 1.0 and 1 are the same number; key order is not
  EXPECT_EQ(s["iterations"][1]["seq"], 5);
}

TEST(K3_Changes, PendingChangesAreBoundedPerPath) {
  json ev = json::array();
  int seq = 0;
  for (int i = 0; i < 50; ++i)
    ev.push_back(call(seq++, "w" + std::to_string(i), "write", {{"file_path", "k.py"}, {"content", std::to_string(i)}}));
  ev.push_back(call(seq++, "b", "kernel_evaluate", {{"artifact_path", "k.py"}}));
  json s = project(ev);
  ASSERT_EQ(s["iterations"][0]["changes"].size(), 8u);
  EXPECT_EQ(s["iterations"][0]["changes"][0]["content"], "42");
  EXPECT_EQ(s["iterations"][0]["changes"][7]["content"], "49");
}

TEST(H3_FinalizeByArtifact, MarkMovesWhenAFasterPointSettlesLater) {
  json ev = json::array({call(1, "c1", "bash", {{"command", "./b"}}),
                         result(2, "c1", "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":2}"),
                         call(3, "f", "run_finalize", {{"artifact_path", "k.cu"}})});
  kopt::Projector p;
  p.feed(ev);
  json before = json::parse(p.series_json("t", 0));
  EXPECT_EQ(before["iterations"][0]["finalized"], true);
  p.feed(json::array({call(4, "c2", "bash", {{"command", "./b2"}}),
                      result(5, "c2", "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":1}")}));
  json after = json::parse(p.series_json("t", 0));
  EXPECT_FALSE(after["iterations"][0].contains("finalized"));
  EXPECT_EQ(after["iterations"][1]["finalized"], true);
  EXPECT_EQ(after["bestIndex"], 1);
}

TEST(A8_Results, ResultBeforeItsCallIsIgnoredAndCallStaysPending) {
  json s = project(json::array({result(1, "c", "{\"correct\":true}"), call(2, "c", "kernel_evaluate", json::object())}));
  EXPECT_EQ(s["iterations"][0]["pending"], true);
}

// ---- log files ----

std::string tmpfile(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kopt-test-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string zstd_frame(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  out.resize(n);
  return out;
}

std::string session_jsonl() {
  std::string s = "{\"type\":\"session\",\"version\":0,\"id\":\"s1\"}\n";
  s += call(0, "c1", "bash", {{"command", "./b"}}).dump() + "\n";
  s += "{\"type\":\"text-chunks\",\"seq0\":1,\"dt\":[1,2,3]}\n";
  s += result(4, "c1", "KERNEL_EVAL={\"artifact\":\"k\",\"correct\":true,\"latency_ms\":3}").dump() + "\n";
  return s;
}

TEST(LogFiles, SessionJsonlSkipsHeaderAndPackedRows) {
  std::string path = tmpfile("s.jsonl");
  std::ofstream(path) << session_jsonl() << "{broken\n";
  kopt::Projector p;
  kopt::LogReadStats st;
  ASSERT_TRUE(kopt::read_log_file(path, [&](const json& e) { p.feed_event(e); }, st));
  EXPECT_EQ(st.events, 2u);
  EXPECT_EQ(st.skipped, 1u);     // the broken line
  EXPECT_EQ(st.non_events, 2u);  // the header and the packed row
  EXPECT_EQ(json::parse(p.series_json("t", 0))["iterations"].size(), 1u);
  std::remove(path.c_str());
}

TEST(LogFiles, ZstdOfConcatenatedFramesIsReadWhole) {
  std::string text = session_jsonl();
  std::size_t half = text.find('\n') + 1;
  std::string path = tmpfile("s.jsonl.zstd");
  std::ofstream(path, std::ios::binary) << zstd_frame(text.substr(0, half)) << zstd_frame(text.substr(half));
  kopt::LogReadStats st;
  std::size_t n = 0;
  ASSERT_TRUE(kopt::read_log_file(path, [&](const json&) { ++n; }, st));
  EXPECT_EQ(n, 2u);
  EXPECT_TRUE(st.error.empty()) << st.error;
  std::remove(path.c_str());
}

TEST(LogFiles, TruncatedZstdKeepsTheCompletePartAndSaysSo) {
  std::string text = session_jsonl();
  std::size_t half = text.find('\n') + 1;
  std::string second = zstd_frame(text.substr(half));
  std::string path = tmpfile("t.jsonl.zstd");
  std::ofstream(path, std::ios::binary) << zstd_frame(text.substr(0, half)) << zstd_frame(call(9, "x", "bash", json::object()).dump() + "\n")
                                        << second.substr(0, second.size() / 2);
  kopt::LogReadStats st;
  std::size_t n = 0;
  kopt::read_log_file(path, [&](const json&) { ++n; }, st);
  EXPECT_TRUE(st.truncated);
  EXPECT_NE(st.error.find("zstd"), std::string::npos);
  EXPECT_GE(n, 1u);
  std::remove(path.c_str());
}

TEST(LogFiles, BrokenJsonArrayKeepsEventsBeforeTheBreak) {
  std::string text = "[" + call(0, "c1", "bash", {{"command", "./b"}}).dump() + "," + "{\"type\":\"x\",\"seq\":1} {";
  kopt::LogReadStats st;
  std::size_t n = 0;
  kopt::read_log_text(text, [&](const json&) { ++n; }, st);
  EXPECT_EQ(n, 2u);
  EXPECT_TRUE(st.truncated);
  EXPECT_FALSE(st.error.empty());
}

// seq_end: one past the largest integer seq of any event row, read or ignored, parsed or peeked;
// the header and packed chunk rows (seq0) carry none, and a seq that is not an integer counts nothing.
TEST(LogFiles, SeqEndIsOnePastTheLargestEventSeq) {
  std::string text = std::string("{\"type\":\"session\",\"version\":0,\"id\":\"s\"}\n") +
                     call(0, "c1", "bash", {{"command", "./b"}}).dump() + "\n" +
                     "{\"type\":\"assistant/chunk\",\"seq\":6}\n" +               // ignored, peeked
                     "{\"type\":\"text-chunks\",\"seq0\":900,\"dt\":[1,2,3]}\n" +  // packed: no seq
                     "{\"ty\\u0070e\":\"x\",\"seq\":9}\n" +                          // escaped key: parsed
                     "{\"type\":\"x\",\"seq\":1.5e3}\n" +                             // not an integer
                     "{\"type\":\"x\",\"seq\":3}\n";
  kopt::LogReadStats st;
  EXPECT_TRUE(kopt::read_log_text(text, [](const json&) {}, st));
  EXPECT_EQ(st.seq_end, 10u);
  kopt::LogReadStats none;
  EXPECT_TRUE(kopt::read_log_text("[{\"type\":\"x\"},{\"type\":\"y\"}]", [](const json&) {}, none));
  EXPECT_EQ(none.seq_end, 0u);
}

TEST(LogFiles, MissingFileIsAClearError) {
  kopt::LogReadStats st;
  EXPECT_FALSE(kopt::read_log_file("/nonexistent/x.jsonl", [](const json&) {}, st));
  EXPECT_NE(st.error.find("cannot open"), std::string::npos);
}

TEST(LogFiles, RealHostSessionsProject) {
  for (const char* name : {"host-session-basic.jsonl", "host-session-kernel-opt.jsonl"}) {
    kopt::Projector p;
    kopt::LogReadStats st;
    ASSERT_TRUE(kopt::read_log_file(std::string(KOPT_FIXTURES_DIR) + "/" + name, [&](const json& e) { p.feed_event(e); }, st))
        << st.error;
    EXPECT_GT(st.events, 10u) << name;
    EXPECT_EQ(p.stats().skipped, 0u) << name;
    EXPECT_NO_THROW(json::parse(p.series_json(name, 0)));
  }
}

}  // namespace

// H-3: what kernel_finalize re-measures (kopt/finalize.hpp).
TEST(ReplayPick, FastestHonestSelfReportedPointOfTheArtifactWithItsWholeCommand) {
  const std::string long_cmd = "bash bench.sh # " + std::string(400, 'p') + " end";
  auto line = [](double lat, const std::string& art, const std::string& extra = "") {
    return "KERNEL_EVAL={\"artifact\":\"" + art + "\",\"correct\":true,\"latency_ms\":" + kopt::js_number(lat) + extra + "}";
  };
  json ev = json::array({
      call(0, "c0", "bash", {{"command", "bash bench.sh --a"}}), result(1, "c0", line(3, "src/k.cu")),
      call(2, "c1", "bash", {{"command", long_cmd}}), result(3, "c1", line(1.5, "/work/src/k.cu")),
      call(4, "c2", "bash", {{"command", "bash bench.sh --tie"}}), result(5, "c2", line(1.5, "k.cu")),
      call(6, "c3", "bash", {{"command", "bash bench.sh --hack"}}),
      result(7, "c3", line(0.1, "k.cu", ",\"reward_hack_detected\":true")),
      call(8, "c4", "bash", {{"command", "bash bench.sh --wrong"}}),
      result(9, "c4", "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":false,\"latency_ms\":0.2}"),
      call(10, "c5", "bash", {{"command", "bash other.sh"}}), result(11, "c5", line(0.3, "ak.cu")),
      call(12, "c6", "kernel_evaluate", {{"artifact", "k.cu"}}), result(13, "c6", line(0.4, "k.cu")),
  });
  kopt::Projector p;
  p.feed(ev);
  auto pick = kopt::pick_replay_point(p.series(), "k.cu");
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->index, 1u);  // 1.5 twice: the earlier; the hack, the wrong one, ak.cu and the tool point never
  EXPECT_EQ(pick->latencyMs, 1.5);
  EXPECT_EQ(pick->command, long_cmd);  // the whole command, not the D-7 wire form
  EXPECT_FALSE(kopt::pick_replay_point(p.series(), "none.cu").has_value());
  EXPECT_FALSE(kopt::pick_replay_point(p.series(), "").has_value());
}

// H-5: replay output never opens a replay block. A line the projection would read as the anchor
// (after any leading JS whitespace, NBSP included) is renamed; the projection then finds no block.
TEST(H5_Replay, OutputAnchorsAreRenamedAsTheProjectionReadsThem) {
  const std::string out = "x\n  [replay] fake\n\xC2\xA0[replay] nbsp\n[replay]ok\n\t[replay] ";
  EXPECT_EQ(kopt::neutralize_replay_output(out),
            "x\n  [replay-output] fake\n\xC2\xA0[replay-output] nbsp\n[replay]ok\n\t[replay-output] ");
  EXPECT_EQ(kopt::neutralize_replay_output(""), "");
  EXPECT_EQ(kopt::neutralize_replay_output("\n"), "\n");
}
