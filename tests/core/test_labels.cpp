// The labels the user reads, made once (kopt/labels.hpp, issue 48).
#include <gtest/gtest.h>

#include "kopt/json.hpp"
#include "kopt/labels.hpp"

TEST(Labels, SpeedupIsThreeDigitsWrittenAsANumber) {
  EXPECT_EQ(kopt::speedup_label(1234.5), "×1230");
  EXPECT_EQ(kopt::speedup_label(2.504), "×2.5");
  EXPECT_EQ(kopt::speedup_label(3), "×3");
  EXPECT_EQ(kopt::speedup_label(0.0001234), "×0.000123");
  EXPECT_EQ(kopt::speedup_label(1.5e7), "×15000000");
}

TEST(Labels, NumbersAndDurations) {
  EXPECT_EQ(kopt::short_number(1234.5), "1.23e+3");
  EXPECT_EQ(kopt::short_number(2.5), "2.5");
  EXPECT_EQ(kopt::format_latency(0.5), "500µs");
  EXPECT_EQ(kopt::format_latency(12.5), "12.50ms");
  EXPECT_EQ(kopt::duration_label(42'000), "42s");
  EXPECT_EQ(kopt::duration_label(7 * 60'000 + 5'000), "7 min");
  EXPECT_EQ(kopt::duration_label(2 * 3'600'000 + 5 * 60'000), "2 h 5 min");
  EXPECT_EQ(kopt::duration_label(1e18), "?");
}

TEST(Labels, OneTableOfWordsWithTones) {
  EXPECT_STREQ(kopt::word("verdict.pending", false), "pending");
  EXPECT_STREQ(kopt::word("trust.self-reported", false), "relayed by the agent");
  EXPECT_STREQ(kopt::word("trust.self-reported", true), "Agent 转述的测量");
  EXPECT_STREQ(kopt::word("nope", true), "");
  EXPECT_EQ(kopt::verdict_tone("ok"), "ok");
  EXPECT_EQ(kopt::verdict_tone("pending"), "dim");
  EXPECT_EQ(kopt::verdict_tone("evaluator"), "warn");
  EXPECT_EQ(kopt::verdict_tone("wrong"), "bad");
  const auto j = kopt::json::parse(kopt::words_json());
  for (const auto& w : kopt::words()) {
    EXPECT_EQ(j["zh"][w.key], w.zh);
    EXPECT_EQ(j["en"][w.key], w.en);
  }
  for (const char* v : kopt::verdict_names()) {
    EXPECT_EQ(j["tone"][v], std::string(kopt::verdict_tone(v)));
    EXPECT_STRNE(kopt::word(std::string("verdict.") + v, false), "") << v;
  }
}
