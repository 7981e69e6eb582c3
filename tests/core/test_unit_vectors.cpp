// The direct vectors of unit.expected.json for the predicates and parsers the core owns.
#include <gtest/gtest.h>

#include "json_compare.hpp"
#include "kopt/anchors.hpp"
#include "kopt/config.hpp"
#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/match.hpp"
#include "kopt/shell.hpp"

using kopt::json;

namespace {

const json& unit() {
  static json u = kopt::test::load_json_file(KOPT_FIXTURES_DIR "/vectors/unit.expected.json");
  return u;
}

std::vector<std::string> default_profilers() { return kopt::ProjectionConfig{}.profileCommands; }

TEST(UnitVectors, IsReadBackCommand) {
  ASSERT_FALSE(unit()["isReadBackCommand"].empty());
  for (const auto& c : unit()["isReadBackCommand"])
    EXPECT_EQ(kopt::is_read_back_command(c["command"].get<std::string>()), c["readBack"].get<bool>()) << c["command"];
}

TEST(UnitVectors, CommandKind) {
  ASSERT_FALSE(unit()["commandKind"].empty());
  for (const auto& c : unit()["commandKind"])
    EXPECT_EQ(kopt::to_string(kopt::command_kind(c["command"].get<std::string>())), c["kind"].get<std::string>())
        << c["command"];
}

TEST(UnitVectors, MatchesProfileCommand) {
  ASSERT_FALSE(unit()["matchesProfileCommand"].empty());
  for (const auto& c : unit()["matchesProfileCommand"])
    EXPECT_EQ(kopt::matches_profile_command(c["command"].get<std::string>(), default_profilers()),
              c["profiles"].get<bool>())
        << c["command"];
}

TEST(UnitVectors, MatchesTool) {
  for (const auto& c : unit()["matchesTool"])
    EXPECT_EQ(kopt::matches_any_tool(c["name"].get<std::string>(), c["patterns"].get<std::vector<std::string>>()),
              c["matches"].get<bool>())
        << c.dump();
}

TEST(UnitVectors, SamePath) {
  for (const auto& c : unit()["samePath"])
    EXPECT_EQ(kopt::same_path(c["a"].get<std::string>(), c["b"].get<std::string>()), c["same"].get<bool>()) << c.dump();
}

TEST(UnitVectors, TrailerPayloads) {
  for (const auto& c : unit()["trailerPayloads"]) {
    json got = json::array();
    for (auto& p : kopt::contract_payloads(c["text"].get<std::string>())) got.push_back(p.payload);
    EXPECT_EQ(kopt::test::first_difference(c["payloads"], got), "") << c["text"];
  }
}

TEST(UnitVectors, ParseResultJson) {
  for (const auto& c : unit()["parseResultJson"]) {
    auto p = kopt::parse_result_json(c["text"].get<std::string>());
    json got = p ? *p : json(nullptr);
    EXPECT_EQ(kopt::test::first_difference(c["parsed"], got), "") << c["text"];
  }
}

TEST(UnitVectors, WireCommand) {
  const json inputs = kopt::test::load_json_file(KOPT_FIXTURES_DIR "/vectors/unit.inputs.json")["wireCommands"];
  const json& want = unit()["wireCommand"];
  ASSERT_EQ(inputs.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::string in = inputs[i].get<std::string>();
    auto w = kopt::wire_command(in);
    EXPECT_EQ(w.command, want[i]["command"].get<std::string>()) << i;
    EXPECT_EQ(want[i]["length"].get<std::size_t>(), in.size()) << i;  // the inputs are ASCII
    if (want[i].contains("commandLength")) EXPECT_EQ(w.length, want[i]["commandLength"].get<std::size_t>()) << i;
    else EXPECT_FALSE(w.length.has_value()) << i;
  }
}

TEST(UnitVectors, AnchorsMatchByteForByte) {
  const json& a = unit()["constants"]["anchors"];
  EXPECT_EQ(a["EVAL_TRAILER_PREFIX"], kopt::anchors::kEvalTrailerPrefix);
  EXPECT_EQ(a["REPLAY_LINE_PREFIX"], kopt::anchors::kReplayLinePrefix);
  EXPECT_EQ(a["REPLAY_TOOL"], kopt::anchors::kReplayTool);
  EXPECT_EQ(a["LOOP_PLUGIN_ID"], kopt::anchors::kLoopPluginId);
  EXPECT_EQ(a["LOOP_LINE_PREFIX"], kopt::anchors::kLoopLinePrefix);
  EXPECT_EQ(a["WRAPUP_LINE_PREFIX"], kopt::anchors::kWrapupLinePrefix);
  EXPECT_EQ(a["AUDIT_LINE_PREFIX"], kopt::anchors::kAuditLinePrefix);
  EXPECT_EQ(a["WRAPUP_CLOSE_LINE"], kopt::anchors::kWrapupCloseLine);
  EXPECT_EQ(a["AUDIT_CLOSE_LINE"], kopt::anchors::kAuditCloseLine);
  EXPECT_EQ(a["CHALLENGE_LINE"], kopt::anchors::kChallengeLine);
  EXPECT_EQ(a["REVIEW_HEADER"], kopt::anchors::kReviewHeader);
  EXPECT_EQ(a["REVIEW_OK_LINE"], kopt::anchors::kReviewOkLine);
  EXPECT_EQ(a["CONTINUE_TRAILER"], kopt::anchors::kContinueTrailer);
  EXPECT_EQ(a["BACKGROUND_JOB_ANNOUNCE"].get<std::string>(), std::string(kopt::anchors::kBackgroundJobAnnounce) + "(\\S+)");
  EXPECT_EQ(a["COUNTERS"].get<std::string>(), "(\\d+)/(\\d+)" + std::string(kopt::anchors::kCountersSuffix));
}

TEST(UnitVectors, DefaultProjectionAndDriftRatio) {
  const json& o = unit()["constants"]["other"];
  EXPECT_EQ(kopt::test::first_difference(o["DEFAULT_PROJECTION"], kopt::ProjectionConfig{}.to_json()), "");
  EXPECT_DOUBLE_EQ(o["REFERENCE_DRIFT_RATIO"].get<double>(), kopt::kReferenceDriftRatio);
}

}  // namespace
