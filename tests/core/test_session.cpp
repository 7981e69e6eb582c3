// The /series route's session (include/kopt/session.hpp) and the per-revision figures it reads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "kopt/projector.hpp"
#include "kopt/session.hpp"

using namespace kopt;

// M-5 through the index equals the rule's walk, for rounds in any order, NaN seqs included.
TEST(M5_WrapUpPhase, IndexEqualsTheWalk) {
  std::mt19937 rng(7);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<Round> rounds(rng() % 12);
    for (auto& r : rounds) {
      const int k = static_cast<int>(rng() % 20);
      r.seq.num = k == 19 ? nan : k * 3;
      switch (rng() % 4) {
        case 0: r.wrapUp = true; break;
        case 1: r.audit = true; break;
        case 2: r.round = 1; break;
        default: break;
      }
    }
    const WrapUpIndex index(rounds);
    for (double seq : {-1.0, 0.0, 1.0, 2.0, 3.0, 10.0, 28.5, 30.0, 57.0, 1e9, nan,
                       std::numeric_limits<double>::infinity()})
      ASSERT_EQ(index(seq), in_wrap_up_phase(rounds, seq)) << "trial " << trial << " seq " << seq;
  }
}

namespace {
json ev(const char* text) { return *parse_json(text); }
}  // namespace

// The outline carries exactly what the chart reads: its chart equals the full series' chart.
TEST(P_SeriesRoute, OutlineChartEqualsFullChart) {
  Projector p;
  p.feed(ev(R"([
    {"type":"tool/call","seq":1,"data":{"callId":"a","name":"kernel_evaluate","arguments":"{\"artifact_path\":\"k.cu\"}"}},
    {"type":"tool/result","seq":2,"data":{"callId":"a","message":{"content":[{"text":"{\"correct\":true,\"latency_ms\":2,\"speedup\":1.5}"}]}}},
    {"type":"tool/call","seq":3,"data":{"callId":"b","name":"kernel_evaluate","arguments":"{}"}},
    {"type":"tool/result","seq":4,"data":{"callId":"b","message":{"content":[{"text":"{\"correct\":false,\"latency_ms\":1,\"error\":\"x\"}"}]}}},
    {"type":"tool/call","seq":5,"data":{"callId":"c","name":"kernel_evaluate","arguments":"{}"}}
  ])"));
  ChartOptions opt;
  opt.budget = 1;
  EXPECT_EQ(js_stringify(chart_json(p.series_outline(), opt)), js_stringify(chart_json(p.series(), opt)));
  EXPECT_EQ(chart_json_text(p.series(), opt), js_stringify(chart_json(p.series(), opt)));
  EXPECT_EQ(completed_evals(p.series_outline()), completed_evals(p.series()));
}

// A revision is assembled once; nothing changed means the same bytes (the same object).
TEST(P_SeriesRoute, BodyOncePerRevision) {
  Projector p;
  Session s(p, "s");
  s.feed(ev(R"([{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"kernel_evaluate","arguments":"{}"}}])"));
  const auto r1 = s.revise("{}");
  const std::string b1 = s.body();
  EXPECT_EQ(s.revise("{}"), r1);
  EXPECT_EQ(&s.body(), &s.body());
  EXPECT_EQ(s.body(), b1);
  s.feed(ev(R"({"type":"assistant/chunk","seq":2,"time":9})"));
  EXPECT_EQ(s.revise("{}"), r1) << "an event the projection does not read changes nothing";
  EXPECT_EQ(s.updated_at(), 5);
  s.feed(ev(R"({"type":"tool/result","seq":3,"time":7,"data":{"callId":"a","message":{"content":[{"text":"{\"correct\":true,\"latency_ms\":2}"}]}}})"));
  const auto r2 = s.revise("{}");
  EXPECT_GT(r2, r1);
  EXPECT_NE(s.body(), b1);
  EXPECT_EQ(s.completed_evals(), 1);
  auto body = parse_json(s.body());
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)["updatedAt"], 7);
  EXPECT_EQ((*body)["chart"]["points"].size(), 1u);
  EXPECT_EQ(*(*body).find("control"), json::object());
}
