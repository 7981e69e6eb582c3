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
  std::size_t sent = 0;
  for (const auto& w : kopt::words()) {
    const std::string key = w.key;
    // The chart carries the words the tab draws (verdict, provenance, the limit's); the exports' words stay in C++.
    if (key.rfind("verdict.", 0) == 0 || key.rfind("trust.", 0) == 0 || key.rfind("limit.", 0) == 0) {
      EXPECT_EQ(j["zh"][w.key], w.zh);
      EXPECT_EQ(j["en"][w.key], w.en);
      ++sent;
    } else {
      EXPECT_FALSE(j["zh"].contains(key)) << key;
      EXPECT_FALSE(j["en"].contains(key)) << key;
    }
  }
  EXPECT_EQ(j["zh"].size(), sent);
  for (const char* v : kopt::verdict_names()) {
    EXPECT_EQ(j["tone"][v], std::string(kopt::verdict_tone(v)));
    EXPECT_STRNE(kopt::word(std::string("verdict.") + v, false), "") << v;
  }
}

// Issue 49: a latency with its interval, read by the comparison, the report and the exports.
TEST(Labels, IntervalsEffectsAndFractions) {
  EXPECT_EQ(kopt::interval_label(2.0, 1.98, 2.02), "± 1.0%");
  // Asymmetric: the wider side, so the label holds the whole interval.
  EXPECT_EQ(kopt::interval_label(1.0, 0.99, 1.03), "± 3.0%");
  EXPECT_EQ(kopt::interval_label(1.2, 1.19, 1.21), "± 0.8%");
  EXPECT_EQ(kopt::interval_label(1.0, 0.9999, 1.0001), "± <0.1%");
  EXPECT_EQ(kopt::latency_interval_label(1.234, 1.224, 1.244), "1.234ms ± 0.8%");
  EXPECT_EQ(kopt::latency_interval_label(0.5, 0.45, 0.5), "500µs ± 10.0%");
  EXPECT_EQ(kopt::effect_label(-3.14, 0.84), "3.1% ± 0.8");
  EXPECT_EQ(kopt::fraction_label(0.6234), "62.3%");
  EXPECT_EQ(kopt::fraction_label(1.05), "105%");
  EXPECT_STREQ(kopt::word("versus.same", true), "噪声内相同");
  EXPECT_STREQ(kopt::word("md.vsBest", false), "vs ★");
}

// Issue 48: the words the tab and the HTML report both show live in the one table; the tab's bundle
// carries page_words_json, and nothing else of the table.
TEST(Labels, PageWordsAreOneTableForTheTabAndTheReport) {
  const auto j = kopt::json::parse(kopt::page_words_json());
  std::size_t pages = 0;
  for (const auto& w : kopt::words()) {
    if (!w.page) {
      EXPECT_FALSE(j["zh"].contains(w.key)) << w.key;
      continue;
    }
    ++pages;
    EXPECT_EQ(j["zh"][w.key], w.zh);
    EXPECT_EQ(j["en"][w.key], w.en);
    EXPECT_STRNE(w.zh, "") << w.key;
    EXPECT_STRNE(w.en, "") << w.key;
  }
  EXPECT_EQ(j["zh"].size(), pages);
  EXPECT_EQ(j["en"].size(), pages);
  EXPECT_STREQ(kopt::word("rev.failed", true), "监督失败");
  EXPECT_STREQ(kopt::word("legend.best", false), "best");
  // The chart's words stay the verdicts', provenance's and limit's: the page words travel in the bundle.
  EXPECT_FALSE(kopt::json::parse(kopt::words_json())["en"].contains("legend.best"));
}
