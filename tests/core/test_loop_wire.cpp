// series_from_wire: the loop decides the same from the /series body as from the projector —
// checked against every conformance vector's expected series and derived values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kopt/loop.hpp"

using namespace kopt;

namespace {

json load(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

}  // namespace

TEST(LoopWire, DecisionsFromTheWireMatchTheVectors) {
  const std::filesystem::path dir = std::filesystem::path(KOPT_FIXTURES_DIR) / "vectors";
  int cases = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".expected.json") || name.starts_with("unit")) continue;
    const json exp = load(e.path());
    const json& d = exp.at("derived");
    const Series s = series_from_wire(exp.at("series"));
    const json& in = d.at("loopInputs");
    LoopState st = LoopState::from_json(in.at("state"));
    st.significantProgress = in.value("significantProgress", true);
    st.limitPct = in.value("wrapUpAtLimitPct", 0LL);
    const Decision dec = decide_continuation(s, st, in.at("maxNoProgressRounds").get<long long>());
    EXPECT_EQ(dec.to_json(), d.at("decision")) << name;
    EXPECT_EQ(completed_evals(s), d.at("completedEvals").get<long long>()) << name;
    EXPECT_EQ(reviewable(s), d.at("reviewable").get<bool>()) << name;
    EXPECT_EQ(unreviewed_evals(s), d.at("unreviewedEvals").get<bool>()) << name;
    EXPECT_EQ(stagnation_count(s), d.at("stagnationCount").get<long long>()) << name;
    EXPECT_EQ(plan_stale(s, in.at("evalsPerTurn").get<long long>()), d.at("planStale").get<bool>()) << name;
    ++cases;
  }
  EXPECT_GE(cases, 70);
}

TEST(LoopWire, DigestReadsAWireSeries) {
  const json exp = load(std::filesystem::path(KOPT_FIXTURES_DIR) / "vectors" / "n01-digest-full.expected.json");
  const Series s = series_from_wire(exp.at("series"));
  ASSERT_FALSE(s.iterations.empty());
  DigestInputs in;
  in.budget = 20;
  const std::string digest = supervisor_digest(s, in);
  EXPECT_NE(digest.find("## Evaluations"), std::string::npos);
  EXPECT_NE(digest.find("Plans (latest last)"), std::string::npos);
  EXPECT_NE(digest.find("Environment (agent-reported)"), std::string::npos);
  EXPECT_LT(digest.size(), 40000u);
}
