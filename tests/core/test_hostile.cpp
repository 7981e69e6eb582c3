// Hostile input: whatever a log, a tool argument or a file holds, the core neither crashes nor
// grows without bound, skips and counts what it cannot read, and still projects the rest.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/projector.hpp"
#include "kopt/session.hpp"

using kopt::json;

namespace {

json call(int seq, const std::string& id, const std::string& name, const std::string& args) {
  return json{{"type", "tool/call"}, {"seq", seq}, {"data", {{"callId", id}, {"name", name}, {"arguments", args}}}};
}
json result(int seq, const std::string& id, const std::string& text) {
  return json{{"type", "tool/result"}, {"seq", seq},
              {"data", {{"callId", id}, {"message", {{"content", json::array({{{"type", "text"}, {"text", text}}})}}}}}};
}
const std::string kGood = "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":2}";

// A good evaluation after the hostile part must still be projected.
void expect_good_point_survives(kopt::Projector& p, int seq) {
  p.feed_event(call(seq, "good", "bash", "{\"command\":\"./bench\"}"));
  p.feed_event(result(seq + 1, "good", kGood));
  json s = json::parse(p.series_json("h", 0));
  ASSERT_FALSE(s["iterations"].empty());
  EXPECT_EQ(s["iterations"].back()["latencyMs"], 2);
}

long rss_kb() {
  std::ifstream st("/proc/self/status");
  std::string line;
  while (std::getline(st, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

TEST(Hostile, TenMegabyteSingleLineResult) {
  kopt::Projector p;
  std::string big(10u << 20, 'x');
  big += "\n" + kGood;
  p.feed_event(call(1, "c", "bash", "{\"command\":\"./b\"}"));
  p.feed_event(result(2, "c", big));
  json s = json::parse(p.series_json("h", 0));
  EXPECT_EQ(s["iterations"].size(), 1u);
  std::string line = "KERNEL_EVAL={\"artifact\":\"" + std::string(10u << 20, 'a') + "\",\"correct\":true}";
  p.feed_event(call(3, "d", "bash", "{\"command\":\"./b\"}"));
  p.feed_event(result(4, "d", line));  // the object closes beyond the 20 000-unit window: dropped
  EXPECT_EQ(json::parse(p.series_json("h", 0))["iterations"].size(), 1u);
}

TEST(Hostile, NestedTenThousandDeep) {
  std::string deep = std::string(10000, '[') + std::string(10000, ']');
  std::string deep_obj;
  for (int i = 0; i < 10000; ++i) deep_obj += "{\"a\":";
  deep_obj += "1" + std::string(10000, '}');
  kopt::Projector p;
  p.feed_event(call(1, "c", "kernel_evaluate", deep_obj));
  p.feed_event(result(2, "c", "KERNEL_EVAL=" + deep_obj + "\n" + deep));
  p.feed_event(call(3, "e", "bash", "{\"command\":\"./b\"}"));
  p.feed_event(result(4, "e", "KERNEL_EVAL={\"artifact\":\"k\",\"correct\":true,\"x\":" + deep + "}"));
  // A deeply nested message tree: as deep as parsing admits (2048), walked iteratively.
  json nested = json{{"text", "KERNEL_EVAL={\"artifact\":\"k\",\"correct\":false}"}};
  for (int i = 0; i < 2000; ++i) {  // built by moving, so the test itself stays linear
    json outer = json::object();
    outer["content"] = json::array();
    outer["content"].push_back(std::move(nested));
    nested = std::move(outer);
  }
  p.feed_event(call(5, "n", "bash", "{\"command\":\"./b\"}"));
  p.feed_event(json{{"type", "tool/result"}, {"seq", 6}, {"data", {{"callId", "n"}, {"message", std::move(nested)}}}});
  // Deeper than that only arrives as text: the event is skipped and counted, the log goes on.
  std::string deep_event = "{\"type\":\"tool/result\",\"seq\":7,\"data\":{\"callId\":\"n\",\"message\":" +
                           std::string(10000, '[') + std::string(10000, ']') + "}}";
  kopt::LogReadStats lst;
  kopt::read_log_text(deep_event + "\n" + call(8, "after", "bash", "{}").dump() + "\n",
                      [&](const json& e) { p.feed_event(e); }, lst);
  EXPECT_EQ(lst.skipped, 1u);
  EXPECT_EQ(lst.events, 1u);
  json s = json::parse(p.series_json("h", 0));
  EXPECT_EQ(s["iterations"].size(), 2u);  // the pending bench row and the nested-text point
  expect_good_point_survives(p, 7);
  kopt::LogReadStats st;
  std::size_t n = 0;
  kopt::read_log_text(std::string(100000, '['), [&](const json&) { ++n; }, st);
  EXPECT_EQ(n, 0u);
}

TEST(Hostile, InvalidUtf8IsSkippedOrReplacedNeverThrown) {
  kopt::Projector p;
  kopt::LogReadStats st;
  std::string log = call(1, "c", "bash", "{\"command\":\"./b\"}").dump() + "\n" +
                    "{\"type\":\"tool/result\",\"seq\":2,\"data\":{\"callId\":\"c\",\"text\":\"\xff\xfe\"}}\n" +
                    result(3, "c", kGood).dump() + "\n";
  kopt::read_log_text(log, [&](const json& e) { p.feed_event(e); }, st);
  EXPECT_EQ(st.skipped, 1u);
  EXPECT_EQ(json::parse(p.series_json("h", 0))["iterations"].size(), 1u);
  // Invalid bytes inside an event built elsewhere still give valid JSON out.
  p.feed_event(call(4, "z\xff", "bash", "{\"command\":\"./b\xfe\"}"));
  p.feed_event(result(5, "z\xff", "KERNEL_EVAL={\"artifact\":\"k2\",\"correct\":true}"));
  EXPECT_NO_THROW(json::parse(p.series_json("h", 0)));
}

TEST(Hostile, NonFiniteAndOutOfRangeLatencies) {
  kopt::Projector p;
  int seq = 0;
  for (const char* lat : {"NaN", "Infinity", "-Infinity", "1e308", "-1", "0", "1e-320", "\"5\"", "null", "1e400"}) {
    // The call and its result take two seqs; "n" keeps each payload distinct (identical ones merge).
    const int at = seq;
    seq += 2;
    std::string id = "c" + std::to_string(at);
    p.feed_event(call(at, id, "bash", "{\"command\":\"./b\"}"));
    p.feed_event(result(at + 1, id, std::string("KERNEL_EVAL={\"artifact\":\"k\",\"correct\":true,\"latency_ms\":") + lat + ",\"n\":" + std::to_string(at) + "}"));
  }
  json s = json::parse(p.series_json("h", 0));
  // NaN / Infinity / 1e400 are not JSON (JSON.parse rejects the first two too): no point.
  // 1e308 and the subnormal 1e-320 are finite and > 0: measured; the others carry an error.
  std::size_t measured = 0, errors = 0;
  for (const auto& it : s["iterations"]) {
    measured += it.contains("latencyMs");
    errors += it.contains("error");
  }
  EXPECT_EQ(measured, 2u);
  EXPECT_EQ(errors, 4u);
  EXPECT_EQ(s["bestIndex"], 3);  // 1e-320 ms is the "fastest": reported, as the log says
  auto ref = kopt::reference_latency(p.series());
  EXPECT_FALSE(ref);
}

TEST(Hostile, DuplicateAndMissingCallIdsAndBackwardSeqs) {
  kopt::Projector p;
  p.feed_event(call(10, "dup", "bash", "{\"command\":\"./a\"}"));
  p.feed_event(call(9, "dup", "kernel_evaluate", "{}"));  // the same id again: the later call wins
  p.feed_event(result(8, "dup", "{\"correct\":true,\"latency_ms\":1}"));
  p.feed_event(result(7, "dup", kGood));                 // a second result: unclaimed -> uncollected
  p.feed_event(json{{"type", "tool/call"}, {"seq", 6}, {"data", {{"name", "bash"}}}});  // no id: skipped
  p.feed_event(json{{"type", "tool/result"}, {"seq", 5}, {"data", {{"message", {{"content", "x"}}}}}});  // no id: ignored
  p.feed_event(json{{"type", "tool/result"}, {"seq", "not a number"}, {"data", {{"callId", "never-called"}}}});
  json s = json::parse(p.series_json("h", 0));
  ASSERT_EQ(s["iterations"].size(), 1u);
  EXPECT_EQ(s["iterations"][0]["tool"], "kernel_evaluate");
  EXPECT_EQ(s["uncollectedSeqs"], json::array({7}));
  EXPECT_EQ(p.stats().skipped, 1u);
  expect_good_point_survives(p, 3);
}

TEST(Hostile, TruncatedAndGarbageZstd) {
  std::string path = (std::filesystem::temp_directory_path() / ("kopt-hostile-" + std::to_string(::getpid()))).string();
  std::ofstream(path, std::ios::binary) << std::string("\x28\xb5\x2f\xfd", 4) << std::string(1000, '\x42');
  kopt::LogReadStats st;
  kopt::Projector p;
  kopt::read_log_file(path, [&](const json& e) { p.feed_event(e); }, st);
  EXPECT_TRUE(st.truncated);
  EXPECT_NE(st.error.find("zstd"), std::string::npos);
  std::remove(path.c_str());
}

// 1M-event logs. Memory follows what a session keeps (per point), never the log's size: events it
// does not read cost nothing, and each point costs a bounded amount, its part of the body (text
// held to answer /series) included. Reported.
std::string million_event_log(int every) {
  std::string path = (std::filesystem::temp_directory_path() / ("kopt-million-" + std::to_string(::getpid()))).string();
  std::ofstream out(path);
  int seq = 0;
  for (int i = 0; seq < 1000000; ++i) {
    std::string id = "c" + std::to_string(i);
    for (int k = 0; k < every && seq < 1000000; ++k)
      out << "{\"type\":\"assistant/chunk\",\"seq\":" << seq++ << ",\"data\":{\"chunk\":{\"text\":\"thinking about the tile size\"}}}\n";
    if (seq >= 1000000) break;
    out << call(seq++, id, "bash", "{\"command\":\"./bench --v " + std::to_string(i) + "\"}").dump() << "\n";
    out << result(seq++, id, "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":" +
                                 std::to_string(1 + (i % 997) / 100.0) + ",\"i\":" + std::to_string(i) + "}")
               .dump()
        << "\n";
  }
  return path;
}

struct SoakFigures {
  std::size_t events, points, log_mb, series_kb;
  long rss_delta_kb;
};

SoakFigures soak(int every) {
  std::string path = million_event_log(every);
  std::size_t log_mb = std::filesystem::file_size(path) >> 20;
  long before = rss_kb();
  kopt::Projector p;
  kopt::Session session(p, "m");
  kopt::LogReadStats st;
  EXPECT_TRUE(kopt::read_log_file(path, [&](const json& e) { p.feed_event(e); }, st));
  // The whole session as the route holds it after an answer: its outline, rows and chart beside
  // the projection, and the body's shared pieces (series and chart, never joined into one copy).
  session.revise("{}");
  std::size_t series_bytes = session.answer_parts(std::nullopt).size();
  std::size_t series_kb = series_bytes >> 10;
  long after = rss_kb();
  std::remove(path.c_str());
  SoakFigures f{st.events, p.series().iterations.size(), log_mb, series_kb, after - before};
  std::printf("[ soak ] 1M events, %zu MB log: %zu points, body %zu KB, RSS +%ld MB (%.0f bytes per point)\n", f.log_mb,
              f.points, f.series_kb, f.rss_delta_kb >> 10, f.points ? f.rss_delta_kb * 1024.0 / f.points : 0.0);
  return f;
}

TEST(HostileSoak, MillionEventsMostlyUnreadCostAlmostNothing) {
  SoakFigures f = soak(/*every=*/5000);  // ~200 evaluations among a million chunk events
  EXPECT_EQ(f.events, 1000000u);
  EXPECT_LT(f.rss_delta_kb, 32 * 1024);
}

TEST(HostileSoak, MillionEventsManyPointsStayBoundedPerPoint) {
  SoakFigures f = soak(/*every=*/6);  // 125 000 evaluations: far beyond any real run
  EXPECT_EQ(f.events, 1000000u);
  EXPECT_GT(f.points, 100000u);
  EXPECT_LT(f.rss_delta_kb * 1024.0 / f.points, 2048.0);
  RecordProperty("rss_delta_kb", std::to_string(f.rss_delta_kb));
}

}  // namespace
