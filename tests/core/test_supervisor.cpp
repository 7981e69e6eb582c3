// Supervisor: verdict parsing (N-1, unit vectors), effort choice, rubric, digest.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kopt/loop.hpp"
#include "kopt/projector.hpp"
#include "kopt/supervisor.hpp"

using namespace kopt;

namespace {

json load(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

Iteration point(double seq, double latency, bool correct = true) {
  Iteration it;
  it.seq.raw = seq;
  it.seq.num = seq;
  it.tool = "bash";
  it.channel = "shell";
  it.latencyMs = latency;
  it.correct = correct;
  it.artifactPath = "k.cu";
  return it;
}

}  // namespace

TEST(SupervisorVerdict, N1_UnitVectorsAdviceFromReply) {
  const json expected = load(std::string(KOPT_FIXTURES_DIR) + "/vectors/unit.expected.json");
  const json& cases = expected.at("adviceFromReply");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const Verdict v = advice_from_reply(c.at("reply").get<std::string>());
    const json advice = v.advice ? json(*v.advice) : json(nullptr);
    const json note = v.note ? json(*v.note) : json(nullptr);
    EXPECT_EQ(advice, c.at("advice")) << "reply: " << c.at("reply").dump().substr(0, 80);
    EXPECT_EQ(note, c.at("note")) << "reply: " << c.at("reply").dump().substr(0, 80);
  }
}

TEST(SupervisorVerdict, N1_EmptyReplyIsNotAReview) {
  for (const char* r : {"", "   ", "\n\t", "\xE3\x80\x80"}) {  // includes U+3000
    const Verdict v = advice_from_reply(r);
    EXPECT_FALSE(v.answered()) << r;
    EXPECT_FALSE(v.approved);
  }
  EXPECT_TRUE(advice_from_reply("OK").approved);
  EXPECT_TRUE(advice_from_reply("OK").answered());
  EXPECT_FALSE(advice_from_reply("OK").note.has_value());
}

TEST(SupervisorVerdict, N1_VerdictWordStaysAscii) {
  // A translated verdict is advice, never an approval: the protocol word is ASCII.
  const Verdict v = advice_from_reply("好的：一切正常");
  EXPECT_FALSE(v.approved);
  ASSERT_TRUE(v.advice);
  const Verdict w = advice_from_reply("OK：四类思路都试过了");  // full-width colon is not a separator
  EXPECT_TRUE(w.approved);
  ASSERT_TRUE(w.note);
  EXPECT_EQ(*w.note, "：四类思路都试过了");
}

TEST(SupervisorEffort, OnlyDeclaredEfforts) {
  const std::vector<std::string> decl{"off", "low", "high"};
  EXPECT_EQ(choose_effort(std::string("low"), decl, std::string("high")), std::optional<std::string>("low"));
  EXPECT_EQ(choose_effort(std::string("max"), decl, std::string("high")), std::optional<std::string>("high"));
  EXPECT_EQ(choose_effort(std::nullopt, decl, std::string("high")), std::optional<std::string>("high"));
  EXPECT_EQ(choose_effort(std::nullopt, decl, std::nullopt), std::nullopt);
  EXPECT_EQ(choose_effort(std::string("off"), {}, std::nullopt), std::nullopt);
  EXPECT_EQ(choose_effort(std::string("off"), {"low"}, std::string("low")), std::nullopt);  // no silent reasoning
  EXPECT_EQ(choose_effort(std::string("high"), {}, std::nullopt), std::nullopt);           // model declares none
}

TEST(SupervisorLanguage, GuessAndCodes) {
  EXPECT_EQ(guess_lang("优化 solution/k.cu 里的 attention kernel"), Lang::zh);
  EXPECT_EQ(guess_lang("optimize the attention kernel"), Lang::en);
  EXPECT_EQ(guess_lang(""), Lang::en);
  EXPECT_EQ(parse_lang("zh"), Lang::zh);
  EXPECT_EQ(parse_lang("en"), Lang::en);
  EXPECT_EQ(parse_lang("fr"), std::nullopt);
  EXPECT_EQ(lang_code(Lang::zh), "zh");
}

TEST(SupervisorRubric, CoversTheChecksAndAppendsInstructions) {
  const std::string sys = supervisor_system(ReviewKind::progress, Lang::zh, "  Never accept FP16 results.  ");
  for (const char* must : {"Budget discipline", "Correctness first", "More than one family", "Profiling done",
                           "real evaluation", "Plan vs diff", "Wrap up when due", "`OK: `", "Chinese",
                           "ASCII"}) {
    EXPECT_NE(sys.find(must), std::string::npos) << must;
  }
  // Appended after the rubric, never replacing it.
  const auto rubric_at = sys.find("Correctness first");
  const auto extra_at = sys.find("Never accept FP16 results.");
  ASSERT_NE(extra_at, std::string::npos);
  EXPECT_LT(rubric_at, extra_at);
  EXPECT_EQ(supervisor_system(ReviewKind::progress, Lang::en, "   ").find("Project rules"), std::string::npos);
  EXPECT_NE(supervisor_system(ReviewKind::headroom, Lang::en, "").find("`DONE: `"), std::string::npos);
  EXPECT_NE(supervisor_system(ReviewKind::audit, Lang::en, "").find("finalized"), std::string::npos);
  EXPECT_NE(supervisor_prompt(ReviewKind::audit, "DIGEST").find("DIGEST"), std::string::npos);
}

TEST(SupervisorDigest, SummaryTableFullCommandAndRealDiffs) {
  Series s;
  for (int i = 0; i < 6; ++i) s.iterations.push_back(point(10 + i * 10, 5.0 - i * 0.5));
  s.bestIndex = 5;
  // A long command: the reviewer sees the whole of it (N-2), not the 300-char wire cut.
  std::string full = "cd /ws && " + std::string(400, 'x') + " && ./bench --kernel k.cu";
  s.iterations[4].command = full.substr(0, 180) + " … " + full.substr(full.size() - 117);
  s.iterations[4].fullCommand = full;
  Change edit;
  edit.kind = "edit";
  edit.filePath = "k.cu";
  edit.oldText = "int a;\nconst int BLOCK = 64;\nint b;";
  edit.newText = "int a;\nconst int BLOCK = 128;\nint b;";
  s.iterations[1].changes.push_back(edit);
  Change old_edit = edit;
  old_edit.oldText = "OLDEST_CHANGE_MARKER";
  old_edit.newText = "y";
  s.iterations[0].changes.push_back(old_edit);
  Change write;
  write.kind = "write";
  write.filePath = "k2.cu";
  write.content = "__global__ void k() {}";
  s.iterations[3].changes.push_back(write);
  s.iterations[5].changes.push_back(edit);
  Plan p;
  p.seq.raw = 5;
  p.seq.num = 5;
  p.phase = "explore";
  p.approach = "tiling";
  s.plans.push_back(p);
  DigestInputs in;
  in.budget = 10;
  in.round = 2;
  in.diffIterations = 3;
  const std::string d = supervisor_digest(s, in);
  EXPECT_NE(d.find("6/10"), std::string::npos);
  EXPECT_NE(d.find("Best honest row: #6"), std::string::npos);
  EXPECT_NE(d.find("./bench --kernel k.cu"), std::string::npos);
  EXPECT_NE(d.find(std::string(400, 'x')), std::string::npos);
  EXPECT_NE(d.find("- const int BLOCK = 64;"), std::string::npos);
  EXPECT_NE(d.find("+ const int BLOCK = 128;"), std::string::npos);
  EXPECT_NE(d.find("+ __global__ void k() {}"), std::string::npos) << d;
  EXPECT_NE(d.find("[explore] tiling"), std::string::npos);
  EXPECT_NE(d.find("Profiling: no profiler run"), std::string::npos);
  EXPECT_NE(d.find("Environment: not reported"), std::string::npos);
  // Only the latest 3 iterations that changed code.
  EXPECT_EQ(d.find("OLDEST_CHANGE_MARKER"), std::string::npos);
  // Unchanged context lines are not shown as changes.
  EXPECT_EQ(d.find("- int a;"), std::string::npos);
}

namespace {

// A tool call and its result, as the host logs them.
void call(json& evs, const std::string& name, const json& args, const std::string& result) {
  const std::string id = "call_" + std::to_string(evs.size());
  json c = json::object();
  c["type"] = "tool/call";
  c["seq"] = evs.size();
  c["data"] = json{{"callId", id}, {"name", name}, {"arguments", args.dump()}};
  evs.push_back(c);
  json r = json::object();
  r["type"] = "tool/result";
  r["seq"] = evs.size();
  r["data"] = json::parse(R"({"message":{"role":"user","content":[{"type":"tool-result","content":[{"type":"text","text":""}]}]}})");
  r["data"]["message"]["source"] = json{{"kind", "tool"}, {"callId", id}};
  r["data"]["message"]["content"][0]["toolCallId"] = id;
  r["data"]["message"]["content"][0]["content"][0]["text"] = result;
  evs.push_back(r);
}

void bench(json& evs, double latency, const std::string& artifact = "k.cu") {
  call(evs, "bash", json{{"command", "./bench --kernel " + artifact}},
       "KERNEL_EVAL={\"artifact\":\"" + artifact + "\",\"latency_ms\":" + std::to_string(latency) + ",\"correct\":true}");
}

}  // namespace

TEST(SupervisorDigest, ChangeHeadersNameTheFileOfAProjectedRun) {
  // The loop hands the controller the projector's own series: its changes keep their file paths
  // (the /series wire form has none), so every diff header says which file changed.
  json evs = json::array();
  call(evs, "write", json{{"file_path", "k.cu"}, {"content", "__global__ void k() {}"}}, "ok");
  bench(evs, 3.0);
  call(evs, "edit", json{{"file_path", "k.cu"}, {"old_string", "k()"}, {"new_string", "k(int n)"}}, "ok");
  bench(evs, 2.5);
  call(evs, "write", json{{"file_path", "src/k2.cu"}, {"content", "// tiled"}}, "ok");
  bench(evs, 2.0, "src/k2.cu");
  Projector p;
  p.feed(evs);
  const Series s = p.series();
  ASSERT_EQ(s.iterations.size(), 3u);
  const std::string d = supervisor_digest(s, DigestInputs{});
  EXPECT_NE(d.find("--- before #1: write k.cu\n"), std::string::npos) << d;
  EXPECT_NE(d.find("--- before #2: edit k.cu\n"), std::string::npos) << d;
  EXPECT_NE(d.find("--- before #3: write src/k2.cu\n"), std::string::npos) << d;
  EXPECT_EQ(d.find(": write \n"), std::string::npos);
  // The controller's review prompt carries the same headers.
  LoopController c;
  c.set_config_route(Route{"p", "m", std::nullopt});
  ASSERT_FALSE(c.set_supervise(true).has_value());
  c.arm(10, Lang::en);
  const Actions a = c.settled(s, HostFacts{});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].type, Action::Type::review);
  EXPECT_NE(a[0].prompt.find("--- before #3: write src/k2.cu"), std::string::npos);
}

TEST(SupervisorDigest, DiffSectionIsCapped) {
  Series s;
  for (int i = 0; i < 3; ++i) {
    auto it = point(i + 1, 2.0);
    Change w;
    w.kind = "write";
    w.filePath = "k.cu";
    w.content = std::string(9000, 'a' + i);
    it.changes.push_back(w);
    s.iterations.push_back(it);
  }
  DigestInputs in;
  in.diffChars = 5000;
  const std::string d = supervisor_digest(s, in);
  EXPECT_LT(d.size(), 7000u);
  EXPECT_NE(d.find("older diff lines left out"), std::string::npos);
  EXPECT_NE(d.find(std::string(100, 'c')), std::string::npos);  // newest kept
  EXPECT_EQ(d.find(std::string(100, 'a')), std::string::npos);
}

TEST(SupervisorDigest, EmptyRun) {
  const std::string d = supervisor_digest(Series{}, DigestInputs{});
  EXPECT_NE(d.find("0/20"), std::string::npos);
  EXPECT_NE(d.find("none yet"), std::string::npos);
}
