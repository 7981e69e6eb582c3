// The /series route's session (include/kopt/session.hpp) and the per-revision figures it reads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <limits>
#include <map>
#include <optional>
#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "kopt/projector.hpp"
#include "kopt/session.hpp"
#include "json_compare.hpp"

using namespace kopt;

namespace {
// The rules as the spec reads them, one seq at a time: the oracles the indexes are checked against.
// M-5: the phase after the rounds in log order up to the first whose seq is above the point's.
bool in_wrap_up_phase(const std::vector<Round>& rounds, double seq) {
  bool phase = false;
  for (const auto& r : rounds) {
    if (!(r.seq.num <= seq)) break;
    if (r.wrapUp || r.audit) phase = true;
    else if (r.round) phase = false;
  }
  return phase;
}
// The loop message in force: the last round in log order with seq < the row's.
std::optional<std::size_t> round_in_force(const Series& s, double seq) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < s.rounds.size(); ++i)
    if (s.rounds[i].seq.num < seq) found = i;
  return found;
}
}  // namespace

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

// The same in any query order (the index walks on from its last answer for ascending queries and
// searches otherwise), and the round in force per row equals the one-row rule (rows in any order,
// rounds sorted or not, with or without NaN seqs).
TEST(M5_WrapUpPhase, QueriesInAnyOrderAndRoundsInForce) {
  std::mt19937 rng(11);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int trial = 0; trial < 600; ++trial) {
    Series s;
    s.rounds.resize(rng() % 14);
    const bool sorted = trial % 3 != 0, with_nan = trial % 5 == 0;
    for (std::size_t k = 0; k < s.rounds.size(); ++k) {
      Round& r = s.rounds[k];
      r.seq.num = sorted ? static_cast<double>(k * 4 + rng() % 3) : static_cast<double>(rng() % 60);
      if (with_nan && rng() % 4 == 0) r.seq.num = nan;
      switch (rng() % 4) {
        case 0: r.wrapUp = true; break;
        case 1: r.audit = true; break;
        case 2: r.round = 1; break;
        default: break;
      }
    }
    s.iterations.resize(rng() % 30);
    double seq = -2;
    for (auto& it : s.iterations) {
      seq = trial % 2 ? seq + static_cast<double>(rng() % 5) : static_cast<double>(rng() % 64) - 2;  // ascending or not
      it.seq.num = rng() % 23 == 0 ? nan : seq;
    }
    const WrapUpIndex index(s.rounds);
    for (const auto& it : s.iterations)
      ASSERT_EQ(index(it.seq.num), in_wrap_up_phase(s.rounds, it.seq.num)) << "trial " << trial;
    const auto force = rounds_in_force(s);
    ASSERT_EQ(force.size(), s.iterations.size());
    bool has_nan = false;
    for (const auto& r : s.rounds) has_nan = has_nan || std::isnan(r.seq.num);
    if (has_nan) continue;  // NaN round seqs: the rule's linear walk and the sorted search may differ (as before)
    for (std::size_t i = 0; i < s.iterations.size(); ++i)
      ASSERT_EQ(force[i], round_in_force(s, s.iterations[i].seq.num)) << "trial " << trial << " row " << i;
  }
}

// A RoundIndex extended round by round answers as one built at once, and as the one-row rules
// (the wrap-up walk, the round in force, DV-11's budget), queried in any order between extensions.
TEST(M5_WrapUpPhase, RoundIndexExtendedInPartsEqualsOneBuiltAtOnce) {
  std::mt19937 rng(23);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int trial = 0; trial < 300; ++trial) {
    Series s;
    RoundIndex kept;
    const bool sorted = trial % 3 != 0;
    double q = -2;
    for (int k = 0; k < 16; ++k) {
      Round r;
      q = sorted ? q + static_cast<double>(rng() % 4) : static_cast<double>(rng() % 60);
      r.seq.num = trial % 7 == 0 && rng() % 5 == 0 ? nan : q;
      switch (rng() % 4) {
        case 0: r.wrapUp = true; break;
        case 1: r.audit = true; break;
        case 2: r.round = 1; break;
        default: break;
      }
      if (rng() % 3 == 0) r.budget = 1 + rng() % 9;
      s.rounds.push_back(r);
      if (rng() % 2) continue;  // now and then two rounds before the next extension
      kept.extend(s.rounds);
      ASSERT_EQ(kept.size(), s.rounds.size());
      const RoundIndex fresh(s.rounds);
      bool has_nan = false;
      std::vector<double> budget_seqs;
      for (const auto& x : s.rounds) {
        has_nan = has_nan || std::isnan(x.seq.num);
        if (x.budget) budget_seqs.push_back(x.seq.num);
      }
      for (int j = 0; j < 12; ++j) {
        const double seq = rng() % 11 == 0 ? nan : static_cast<double>(rng() % 70) - 3;
        ASSERT_EQ(kept.in_wrap_up(seq), in_wrap_up_phase(s.rounds, seq)) << "trial " << trial;
        ASSERT_EQ(kept.in_force(seq), fresh.in_force(seq)) << "trial " << trial;
        ASSERT_EQ(kept.budget_at(seq), fresh.budget_at(seq)) << "trial " << trial;
        if (!has_nan) {
          ASSERT_EQ(kept.in_force(seq), round_in_force(s, seq)) << "trial " << trial << " seq " << seq;
        }
        // DV-11 as written: the latest round stating a budget at or before the seq, else the first.
        if (!has_nan && std::is_sorted(budget_seqs.begin(), budget_seqs.end()) && !std::isnan(seq)) {
          std::optional<long long> want;
          for (const auto& x : s.rounds)
            if (x.budget && (!want || x.seq.num <= seq)) want = *x.budget;
          ASSERT_EQ(kept.budget_at(seq), want) << "trial " << trial << " seq " << seq;
        }
      }
    }
  }
}

// The pooled reference is the median of the implied references (J-3), and the drift the widest
// alarming node group (J-4), whatever the order of the points.
TEST(J3_PooledReference, MedianAndDriftInAnyOrder) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    Series s;
    std::vector<double> refs;
    s.iterations.resize(rng() % 40);
    for (auto& it : s.iterations) {
      if (rng() % 6 == 0) continue;  // unmeasured
      it.latencyMs = 0.5 + (rng() % 100) / 50.0;
      it.speedup = 1.0 + (rng() % 30) / 10.0;
      if (rng() % 2) it.slurm = SlurmWhere{std::nullopt, std::string(1, static_cast<char>('a' + rng() % 3)), std::nullopt, std::nullopt};
      refs.push_back(*it.latencyMs * *it.speedup);
    }
    std::sort(refs.begin(), refs.end());
    const auto ref = reference_latency(s);
    if (refs.empty()) {
      EXPECT_FALSE(ref);
      continue;
    }
    const std::size_t n = refs.size();
    ASSERT_TRUE(ref);
    EXPECT_DOUBLE_EQ(*ref, n % 2 ? refs[n / 2] : (refs[n / 2 - 1] + refs[n / 2]) / 2) << "trial " << trial;
    // Drift by the rule: group by node, the widest group of at least 4 with ratio >= 1.15, the first
    // node name on a tie.
    std::map<std::string, std::vector<double>> groups;
    for (const auto& it : s.iterations)
      if (it.latencyMs) groups[it.slurm && it.slurm->node ? *it.slurm->node : ""].push_back(*it.latencyMs * *it.speedup);
    std::optional<Drift> want;
    for (const auto& [node, v] : groups) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      const double ratio = *hi / *lo;
      if (v.size() >= 4 && ratio >= kReferenceDriftRatio && (!want || ratio > want->ratio)) want = Drift{*lo, *hi, ratio, v.size()};
    }
    const auto got = reference_drift(s);
    ASSERT_EQ(got.has_value(), want.has_value()) << "trial " << trial;
    if (got) {
      EXPECT_TRUE(got->min == want->min && got->max == want->max && got->count == want->count) << "trial " << trial;
    }
  }
}

// Kept up to date row by row (rows appended, changed in place from some row on, dropped, few or
// many at a time), the pooled reference is always the median of all the rows, computed afresh.
TEST(J3_PooledReference, UpdatedFromAnyRowEqualsAFreshMedian) {
  std::mt19937 rng(9);
  ImpliedReferences pooled;
  std::vector<Iteration> its;
  for (int step = 0; step < 400; ++step) {
    const std::size_t from = its.empty() || rng() % 3 == 0 ? its.size() : rng() % its.size();
    const std::size_t drop = rng() % 4 == 0 ? std::min<std::size_t>(rng() % 5, its.size() - from) : 0;  // rows removed
    its.resize(its.size() - drop);
    for (std::size_t i = from; i < its.size(); ++i) its[i] = Iteration{};  // changed in place
    for (unsigned k = rng() % (rng() % 10 == 0 ? 300 : 4); k-- > 0;) its.emplace_back();
    for (std::size_t i = from; i < its.size(); ++i) {
      if (rng() % 5 == 0) continue;  // implies no reference
      its[i].latencyMs = 0.5 + (rng() % 100) / 50.0;
      its[i].speedup = 1.0 + (rng() % 30) / 10.0;
    }
    const RowTable rows(its);
    pooled.update(rows, from);
    const auto want = reference_latency(rows);
    ASSERT_EQ(pooled.median().has_value(), want.has_value()) << "step " << step;
    if (want) {
      ASSERT_EQ(*pooled.median(), *want) << "step " << step;
    }
  }
}

// The same for the drift (J-4), per Slurm node: kept up to date row by row, it is always the drift
// of all the rows computed afresh.
TEST(J3_PooledReference, DriftUpdatedFromAnyRowEqualsAFreshOne) {
  std::mt19937 rng(13);
  ImpliedReferences drift;
  std::vector<Iteration> its;
  std::size_t alarms = 0;
  for (int step = 0; step < 400; ++step) {
    const std::size_t from = its.empty() || rng() % 3 == 0 ? its.size() : rng() % its.size();
    const std::size_t drop = rng() % 4 == 0 ? std::min<std::size_t>(rng() % 5, its.size() - from) : 0;  // rows removed
    its.resize(its.size() - drop);
    for (std::size_t i = from; i < its.size(); ++i) its[i] = Iteration{};
    for (unsigned k = rng() % (rng() % 10 == 0 ? 300 : 4); k-- > 0;) its.emplace_back();
    for (std::size_t i = from; i < its.size(); ++i) {
      if (rng() % 5 == 0) continue;
      its[i].latencyMs = 0.5 + (rng() % 100) / 50.0;
      its[i].speedup = (step % 50 < 25 ? 1.0 : 2.0) / *its[i].latencyMs * (1 + (rng() % 40) / 100.0);
      if (rng() % 2) its[i].slurm = SlurmWhere{std::nullopt, std::string(1, static_cast<char>('a' + rng() % 3)), std::nullopt, std::nullopt};
    }
    const RowTable rows(its);
    drift.update(rows, from);
    const auto want = reference_drift(rows);
    const auto got = drift.drift(rows);
    ASSERT_EQ(got.has_value(), want.has_value()) << "step " << step;
    if (want) {
      ++alarms;
      ASSERT_TRUE(got->min == want->min && got->max == want->max && got->count == want->count) << "step " << step;
    }
  }
  EXPECT_GT(alarms, 50u);
}

namespace {
json ev(const char* text) { return *parse_json(text); }
std::string joined(const std::vector<TextPiece>& pieces) {
  std::string out;
  for (const TextPiece& p : pieces) out += *p;
  return out;
}
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

// A revision is assembled once; nothing changed means the same bytes (the same object). The body's
// head is shared: a held head keeps its bytes while the session moves on, and a control change
// alone keeps the head.
TEST(P_SeriesRoute, BodyOncePerRevision) {
  Projector p;
  Session s(p, "s");
  s.feed(ev(R"([{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"kernel_evaluate","arguments":"{}"}}])"));
  const auto r1 = s.revise("{}");
  const std::string b1 = s.body();
  EXPECT_EQ(s.revise("{}"), r1);
  EXPECT_EQ(s.body_head(), s.body_head());
  const std::vector<TextPiece> held = s.body_head();
  const std::string held_text = joined(held);
  EXPECT_EQ(s.revise("{\"x\":1}"), r1 + 1);
  EXPECT_EQ(s.body_head(), held) << "the control is the tail";
  EXPECT_EQ(s.body_tail(), ",\"control\":{\"x\":1}}");
  EXPECT_EQ(s.revise("{}"), r1 + 2);
  EXPECT_EQ(s.body(), b1);
  s.feed(ev(R"({"type":"assistant/chunk","seq":2,"time":9})"));
  EXPECT_EQ(s.revise("{}"), r1 + 2) << "an event the projection does not read changes nothing";
  EXPECT_EQ(s.updated_at(), 5);
  s.feed(ev(R"({"type":"tool/result","seq":3,"time":7,"data":{"callId":"a","message":{"content":[{"text":"{\"correct\":true,\"latency_ms\":2}"}]}}})"));
  const auto r2 = s.revise("{}");
  EXPECT_GT(r2, r1 + 2);
  EXPECT_NE(s.body(), b1);
  EXPECT_NE(s.body_head(), held);
  EXPECT_EQ(joined(held), held_text) << "a held head keeps its bytes";
  EXPECT_EQ(s.completed_evals(), 1);
  auto body = parse_json(s.body());
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)["updatedAt"], 7);
  EXPECT_EQ((*body)["chart"]["points"].size(), 1u);
  EXPECT_EQ(*(*body).find("control"), json::object());
}

// /series deltas (docs/protocol.md), applied here by the protocol's table.
namespace {
void apply_delta(json& body, const json& d) {
  for (const char* k : {"sessionId", "updatedAt", "bestIndex"}) body[k] = d.at(k);
  // The latest finalize call (H-8) travels whole in each delta, as bestIndex does; absent when there is none.
  if (d.contains("finalize")) body["finalize"] = d.at("finalize");
  else body.erase("finalize");
  json& its = body["iterations"];
  ASSERT_EQ(d["iterations"]["from"], its.size());
  for (const auto& c : d["iterations"]["changed"]) {
    ASSERT_LT(c[0].get<std::size_t>(), its.size());
    its[c[0].get<std::size_t>()] = c[1];
  }
  for (const auto& row : d["iterations"]["items"]) its.push_back(row);
  for (const char* k : {"plans", "envs", "profileSeqs", "uncollectedSeqs", "echoedSeqs", "rounds"}) {
    if (!d.contains(k)) continue;
    ASSERT_EQ(d[k]["from"], body[k].size()) << k;
    for (const auto& x : d[k]["items"]) body[k].push_back(x);
  }
  if (d["control"].is_null()) body.erase("control");
  else body["control"] = d["control"];
  if (!d.contains("chart")) return;
  const json& c = d["chart"];
  if (!c.contains("append")) {
    body["chart"] = c;
    return;
  }
  // An append keeps the held items before `append` (profile marks: `appendProfiled`) and has no
  // `line` (the reader draws it).
  const std::size_t k = c["append"].get<std::size_t>();
  const std::size_t kp = c["appendProfiled"].get<std::size_t>();
  json next = c;
  next.erase("append");
  next.erase("appendProfiled");
  for (const char* key : {"points", "phases", "rowRounds"}) {
    ASSERT_LE(k, body["chart"][key].size()) << key;
    json arr = json::array();
    for (std::size_t i = 0; i < k; ++i) arr.push_back(body["chart"][key][i]);
    for (const auto& x : c[key]) arr.push_back(x);
    next[key] = std::move(arr);
  }
  // The profile marks: the held ones before `appendProfiled`, then these.
  const json& held = body["chart"]["markers"]["profiled"];
  ASSERT_LE(kp, held.size());
  json marks = json::array();
  for (std::size_t i = 0; i < kp; ++i) marks.push_back(held[i]);
  for (const auto& x : c["markers"]["profiled"]) marks.push_back(x);
  next["markers"]["profiled"] = std::move(marks);
  body["chart"] = std::move(next);
}

// `n` evaluations numbered from `from`, each a call and its result.
json evals(int from, int n) {
  json out = json::array();
  for (int i = from; i < from + n; ++i) {
    const std::string id = "e" + std::to_string(i);
    const double lat = 1.0 + (i % 37) * 0.01;
    out.push_back({{"type", "tool/call"}, {"seq", 2 * i + 1}, {"time", i}, {"data", {{"callId", id}, {"name", "kernel_evaluate"}, {"arguments", "{}"}}}});
    const std::string text = "{\"correct\":true,\"latency_ms\":" + js_number(lat) + ",\"speedup\":" + js_number(2.0 / lat) + "}";
    out.push_back({{"type", "tool/result"}, {"seq", 2 * i + 2}, {"time", i}, {"data", {{"callId", id}, {"message", {{"content", json::array({{{"text", text}}})}}}}}});
  }
  return out;
}
json without_line(json body) {
  body["chart"].erase("line");
  return body;
}
}  // namespace

// A pending call answered later changes its point in place: the delta names that row; applied to
// the body of `since` it gives the current body; unknown revisions get the full body.
TEST(P_SeriesDelta, InPlaceChangesAndFullFallback) {
  Projector p;
  Session s(p, "s", {}, 1000);
  s.feed(ev(R"([{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"kernel_evaluate","arguments":"{}"}},
               {"type":"tool/call","seq":2,"time":6,"data":{"callId":"b","name":"kernel_evaluate","arguments":"{}"}}])"));
  const auto r1 = s.revise("{}");
  EXPECT_EQ(r1, 1001u);
  const json b1 = *parse_json(s.body());
  EXPECT_EQ(s.delta(1000), nullptr) << "before the first revision";
  EXPECT_EQ(s.delta(r1 + 1), nullptr) << "a future revision";
  auto full = parse_json(s.answer(7));
  ASSERT_TRUE(full);
  EXPECT_EQ((*full)["kind"], "full");
  EXPECT_EQ((*full)["revision"], r1);
  EXPECT_EQ((*full)["body"], b1);

  const std::string* same = s.delta(r1);
  ASSERT_NE(same, nullptr);
  auto d0 = *parse_json(*same);
  EXPECT_EQ(d0["kind"], "delta");
  EXPECT_TRUE(d0["iterations"]["items"].empty() && d0["iterations"]["changed"].empty());
  EXPECT_FALSE(d0.contains("chart")) << "nothing changed, no chart";

  s.feed(ev(R"([{"type":"tool/result","seq":3,"time":7,"data":{"callId":"a","message":{"content":[{"text":"{\"correct\":true,\"latency_ms\":2}"}]}}},
               {"type":"tool/call","seq":4,"time":8,"data":{"callId":"c","name":"kernel_evaluate","arguments":"{}"}}])"));
  const auto r2 = s.revise(R"({"loop":1})");
  auto d = *parse_json(*s.delta(r1));
  EXPECT_EQ(d["kind"], "delta");
  EXPECT_EQ(d["revision"], r2);
  EXPECT_EQ(d["since"], r1);
  ASSERT_EQ(d["iterations"]["changed"].size(), 1u);
  EXPECT_EQ(d["iterations"]["changed"][0][0], 0) << "the answered call";
  EXPECT_EQ(d["iterations"]["items"].size(), 1u) << "the new call";
  EXPECT_TRUE(d.contains("chart"));
  json b = b1;
  apply_delta(b, d);
  EXPECT_EQ(test::first_difference(*parse_json(s.body()), b), "");

  // Control only: no rows, no chart; an empty control is absent from the body and null here.
  s.revise("");
  auto dc = *parse_json(*s.delta(r2));
  EXPECT_TRUE(dc["control"].is_null());
  EXPECT_FALSE(dc.contains("chart"));
  apply_delta(b, dc);
  EXPECT_EQ(test::first_difference(*parse_json(s.body()), b), "");
  EXPECT_FALSE(b.contains("control"));
}

// A long run's chart is sent from the first point that changed: a new evaluation inside the axes is
// one point, not the whole curve; across revisions whose chart nobody asked for, the snapshots chain.
TEST(P_SeriesDelta, ChartAppends) {
  Projector p;
  Session s(p, "s");
  s.feed(evals(0, 110));  // the x axis spans 125 iterations until the 127th
  const auto r1 = s.revise("{}");
  const json b1 = *parse_json(s.body());
  s.feed(evals(110, 1));
  const auto r2 = s.revise("{}");
  const std::string d2_text = *s.delta(r1);
  auto d2 = *parse_json(d2_text);
  ASSERT_EQ(d2["chart"]["append"], 110);
  EXPECT_EQ(d2["chart"]["points"].size(), 1u);
  EXPECT_LT(d2_text.size(), 4000u) << "one point, not 111";
  json b = b1;
  apply_delta(b, d2);
  EXPECT_EQ(test::first_difference(without_line(*parse_json(s.body())), b), "");

  // r3 and r4 arrive with nobody asking; a reader at r2 gets one append covering both.
  s.feed(evals(111, 2));
  s.revise("{}");
  s.feed(evals(113, 2));
  s.revise("{}");
  auto d4 = *parse_json(*s.delta(r2));
  ASSERT_EQ(d4["chart"]["append"], 111);
  EXPECT_EQ(d4["chart"]["points"].size(), 4u);
  apply_delta(b, d4);
  EXPECT_EQ(test::first_difference(without_line(*parse_json(s.body())), b), "");

  // A finalize call changes the markers, which are outside the per-point items: an append of no
  // items that carries them. A longer axis changes the frame, not the points.
  json fin = json::array({{{"type", "tool/call"}, {"seq", 1000}, {"time", 300}, {"data", {{"callId", "f"}, {"name", "kernel_finalize"}, {"arguments", R"({"iteration":3})"}}}}});
  s.feed(fin);
  s.revise("{}");
  auto d5 = *parse_json(*s.delta(s.revision() - 1));
  ASSERT_TRUE(d5.contains("chart"));
  EXPECT_EQ(d5["chart"]["append"], 115);
  EXPECT_TRUE(d5["chart"]["points"].empty());
  apply_delta(b, d5);
  EXPECT_EQ(test::first_difference(without_line(*parse_json(s.body())), b), "");
  const auto r6 = s.revision();
  s.feed(evals(115, 20));
  s.revise("{}");
  auto d6 = *parse_json(*s.delta(r6));
  EXPECT_NE(d6["chart"]["frame"], b["chart"]["frame"]) << "the axis grew to 160";
  EXPECT_EQ(d6["chart"]["append"], 115) << "only the new points";
  apply_delta(b, d6);
  EXPECT_EQ(test::first_difference(without_line(*parse_json(s.body())), b), "");
}

namespace {
// `n` evaluations: faster and slower points by turns, some without a speedup of their own, some
// failed, every seventh answered after the next call.
json varied_run(int n) {
  json run = json::array();
  json late;
  for (int i = 0; i < n; ++i) {
    const std::string id = "c" + std::to_string(i);
    const double lat = i % 17 == 0 ? 0.5 / (1 + i) : 1.0 + (i % 13) * 0.1;
    std::string text = "{\"correct\":" + std::string(i % 11 == 3 ? "false" : "true") + ",\"latency_ms\":" + js_number(lat);
    if (i % 3) text += ",\"speedup\":" + js_number((2.0 + (i % 5)) / lat);
    text += "}";
    run.push_back({{"type", "tool/call"}, {"seq", 4 * i + 1}, {"data", {{"callId", id}, {"name", "kernel_evaluate"}, {"arguments", "{}"}}}});
    if (!late.is_null()) run.push_back(std::exchange(late, json()));
    const json result = {{"type", "tool/result"}, {"seq", 4 * i + 2}, {"data", {{"callId", id}, {"message", {{"content", json::array({{{"text", text}}})}}}}}};
    if (i % 7 == 0) late = result;  // answered after the next call (pending meanwhile)
    else run.push_back(result);
  }
  if (!late.is_null()) run.push_back(late);
  return run;
}
}  // namespace

// The chart a session writes copies unchanged points from its previous chart: event by event over
// every project vector, and over a run whose axes and pooled reference keep moving, it is the chart
// written from scratch, byte for byte; and the delta from the revision before, applied to the body
// of that revision, is this revision's body (the append starts where the memo says it may).
TEST(P_SeriesRoute, ChartCopiedPointsEqualAFreshChart) {
  // Fed one part at a time (an event, or an array of them).
  auto check_parts = [](const std::vector<json>& parts, const std::string& what) {
    Projector p;
    Session s(p, "s");
    std::size_t step = 0;
    std::uint64_t rev = s.revise("{}");
    json held = *parse_json(s.body());
    for (const json& part : parts) {
      s.feed(part);
      const std::uint64_t now = s.revise("{}");
      const std::string chart = s.chart();
      ASSERT_EQ(chart, chart_json_text(p.series_outline())) << what << " after event " << step;
      if (now != rev) {
        const std::string* d = s.delta(rev);
        ASSERT_NE(d, nullptr) << what << " after event " << step;
        apply_delta(held, *parse_json(*d));
        ASSERT_EQ(test::first_difference(without_line(*parse_json(s.body())), without_line(held)), "") << what << " after event " << step;
        rev = now;
      }
      ++step;
    }
  };
  auto check = [&](const json& events, const std::string& what) { check_parts(std::vector<json>(events.begin(), events.end()), what); };
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(KOPT_FIXTURES_DIR "/vectors")) {
    const std::string name = e.path().filename().string();
    if (name.size() < 12 || name.compare(name.size() - 12, 12, ".events.json") != 0) continue;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    auto events = parse_json(ss.str());
    if (!events || !events->is_array()) continue;
    check(*events, name);
    ++files;
  }
  EXPECT_GT(files, 60u);
  // Faster and slower points by turns (the y axis moves), points without a speedup of their own
  // (labelled by the pooled reference, which moves), failures and calls answered later.
  check(varied_run(150), "generated run");
  // Long enough that every list of the chart seals blocks; calls answered far back (a cut inside a
  // sealed block) and a point 100× faster than the rest (the scale turns to log: all rewritten).
  json long_run = varied_run(20000);
  json far_results = json::array();
  for (int i : {19000, 3000, 5}) {
    json call = {{"type", "tool/call"}, {"seq", 100000 + i}, {"data", {{"callId", "far" + std::to_string(i)}, {"name", "kernel_evaluate"}, {"arguments", "{}"}}}};
    long_run.insert(long_run.begin() + i, call);
    far_results.push_back({{"type", "tool/result"}, {"seq", 200000 + i}, {"data", {{"callId", "far" + std::to_string(i)}, {"message", {{"content", json::array({{{"text", "{\"correct\":true,\"latency_ms\":1.5}"}}})}}}}}});
  }
  std::vector<json> parts;
  for (std::size_t at = 0; at < long_run.size(); at += 4000)
    parts.emplace_back(long_run.begin() + static_cast<std::ptrdiff_t>(at), long_run.begin() + static_cast<std::ptrdiff_t>(std::min(long_run.size(), at + 4000)));
  for (const json& r : far_results) parts.push_back(r);
  parts.push_back({{"type", "tool/call"}, {"seq", 300000}, {"data", {{"callId", "fast"}, {"name", "kernel_evaluate"}, {"arguments", "{}"}}}});
  parts.push_back({{"type", "tool/result"}, {"seq", 300001}, {"data", {{"callId", "fast"}, {"message", {{"content", json::array({{{"text", "{\"correct\":true,\"latency_ms\":0.001}"}}})}}}}}});
  check_parts(parts, "long run");
}

// A long body is handed out as shared pieces: what a reader holds keeps its bytes while the session
// goes on (new points, a row far back changed in place, which rewrites its sealed block), the body
// equals a fresh projection's, and the chart's sealed blocks are handed out again, not rewritten.
TEST(P_SeriesRoute, HeldPiecesKeepTheirBytes) {
  json events = json::array({*parse_json(R"({"type":"tool/call","seq":0,"time":0,"data":{"callId":"late","name":"kernel_evaluate","arguments":"{}"}})")});
  for (const auto& e : evals(1, 1500)) events.push_back(e);
  Projector p;
  Session s(p, "s");
  s.feed(events);
  s.revise("{}");
  const std::vector<TextPiece> held = s.body_head();
  ASSERT_GT(held.size(), 10u) << "more than one block";
  const std::string held_text = joined(held);
  const json late = *parse_json(R"({"type":"tool/result","seq":9000,"time":9000,"data":{"callId":"late","message":{"content":[{"text":"{\"correct\":true,\"latency_ms\":0.5}"}]}}})");
  const json more = evals(2000, 40);
  s.feed(late);
  s.feed(more);
  s.revise("{}");
  EXPECT_EQ(joined(held), held_text);
  events.push_back(late);
  for (const auto& e : more) events.push_back(e);
  Projector fresh_p;
  Session fresh(fresh_p, "s");
  fresh.feed(events);
  fresh.revise("{}");
  EXPECT_EQ(s.body(), fresh.body());
  EXPECT_EQ(parse_json(s.body())->at("iterations").at(0).at("latencyMs"), 0.5) << "the row far back changed";

  // The chart's lists are kept in blocks too: past a few thousand points, a revision that appends
  // hands out the chart's sealed blocks of the revision before, and what a reader holds stays.
  const json many = evals(3000, 3000);
  for (const auto& e : many) events.push_back(e);
  s.feed(many);
  s.revise("{}");
  const std::vector<TextPiece> before = s.body_head();
  const std::string before_text = joined(before);
  auto chart_pieces = [](const std::vector<TextPiece>& head) {
    std::set<const std::string*> out;
    bool chart = false;
    for (const TextPiece& piece : head) {
      if (chart) out.insert(piece.get());
      chart = chart || *piece == ",\"chart\":";
    }
    return out;
  };
  const auto before_chart = chart_pieces(before);
  for (int i = 0; i < 3; ++i) {
    const json one = evals(6000 + i, 1);
    for (const auto& e : one) events.push_back(e);
    s.feed(one);
    s.revise("{}");
    std::size_t shared = 0;
    for (const std::string* piece : chart_pieces(s.body_head()))
      if (before_chart.count(piece) && piece->size() >= TextRope::kBlockBytes) ++shared;
    EXPECT_GE(shared, 1u) << "a sealed block of the chart's points is handed out again";
  }
  EXPECT_EQ(joined(before), before_text);
  Projector again_p;
  Session again(again_p, "s");
  again.feed(events);
  again.revise("{}");
  EXPECT_EQ(test::first_difference(*parse_json(s.body()), *parse_json(again.body())), "");
}

// The size figure follows the session: taken again after the projection grew or the body was
// assembled, the same figure while nothing changed.
TEST(P_SeriesRoute, ApproxBytesFollowsTheSession) {
  Projector p;
  Session s(p, "s");
  s.revise("{}");
  const std::size_t empty = s.approx_bytes();
  EXPECT_EQ(s.approx_bytes(), empty);
  s.feed(evals(0, 200));
  s.revise("{}");
  const std::size_t fed = s.approx_bytes();
  EXPECT_GT(fed, empty);
  s.body();
  const std::size_t with_body = s.approx_bytes();
  EXPECT_GT(with_body, fed) << "the body's head and the chart count";
  s.revise("{\"x\":1}");
  EXPECT_EQ(s.approx_bytes(), with_body) << "a control change keeps the head";
}

// The history keeps kHistory revisions: older ones get the full body.
TEST(P_SeriesDelta, HistoryIsBounded) {
  Projector p;
  Session s(p, "s");
  const auto r1 = s.revise("0");
  for (std::size_t i = 1; i <= Session::kHistory; ++i) s.revise(std::to_string(i));
  EXPECT_EQ(s.delta(r1), nullptr);
  EXPECT_NE(s.delta(r1 + 1), nullptr);
  EXPECT_NE(s.delta(s.revision()), nullptr);
}

// The session owns its loop: revise() takes the control its LoopController makes from the
// session's own projection, and arming moves the revision.
TEST(P_SessionLoop, ReviseMakesTheControlItself) {
  Projector p;
  Session s(p, "loop");
  const auto events = parse_json(R"([
    {"type":"tool/call","seq":1,"time":10,"data":{"callId":"a","name":"bash","arguments":"{\"command\":\"./bench\"}"}},
    {"type":"tool/result","seq":2,"time":11,"data":{"message":{"source":{"kind":"tool","callId":"a"},"content":[{"type":"text","text":"KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":2}"}]}}}
  ])");
  ASSERT_TRUE(events);
  s.feed(*events);
  const auto r1 = s.revise();
  EXPECT_EQ(s.revise(), r1);
  const auto control = parse_json(s.control_json());
  ASSERT_TRUE(control);
  EXPECT_EQ((*control)["loop"]["evalsDone"], 1);
  EXPECT_EQ((*control)["loop"]["armed"], false);
  s.loop().arm(5, Lang::en);
  EXPECT_GT(s.revise(), r1);
  EXPECT_NE(s.body().find("\"budget\":5"), std::string::npos);
  // Another object of the same session takes the loop over.
  Projector q;
  Session t(q, "loop");
  t.adopt_loop(s);
  EXPECT_TRUE(t.loop().armed());
  EXPECT_FALSE(s.loop().armed());
}

// What feed() takes as text (read_events_text): an array whose too-deep element is one unreadable
// position, JSONL with a broken line, and text that is neither (refused, nothing counted).
TEST(P_SessionLoop, FeedTextCountsPositionsAndUnreadable) {
  Projector p;
  Session s(p, "t");
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EventsText r = s.feed_text("[" + deep + R"(,{"type":"x","seq":1}])");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.positions, 2u);
  EXPECT_EQ(r.unreadable, 1u);
  r = s.feed_text("{\"type\":\"x\",\"seq\":2}\n{broken\n{\"type\":\"x\",\"seq\":3}\n");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.positions, 3u);
  EXPECT_EQ(r.unreadable, 1u);
  EXPECT_FALSE(s.feed_text("not events").ok);
  EXPECT_EQ(s.fed(), 5u);
  EXPECT_EQ(s.unreadable(), 2u);
  s.skip(1);
  EXPECT_EQ(s.fed(), 6u);
  EXPECT_EQ(s.unreadable(), 3u);
}
