// kernel_evaluate (DV-13): the argument check and the tool result (kopt/evaluate.hpp), and the provenance
// rule in the projector (the vector dv13-plugin-measured covers the log side as a whole).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kopt/contract.hpp"
#include "kopt/evaluate.hpp"
#include "kopt/finalize.hpp"
#include "kopt/projector.hpp"
#include "kopt/report.hpp"
#include "kopt/supervisor.hpp"
#include "kopt/verdict.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

class EvaluateArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kopt-evaluate-XXXXXX";
    root_ = fs::path(mkdtemp(tmpl));
    ws_ = root_ / "ws";
    fs::create_directories(ws_ / "solution");
    for (const char* f : {"solution/k.cpp", "solution/util.cpp", "ref.pt", "inputs.json", "problem.py", "solution/kernel.py"})
      std::ofstream(ws_ / f) << "x";
    std::ofstream(root_ / "secret.cpp") << "outside";
    fs::create_symlink(root_ / "secret.cpp", ws_ / "solution" / "link.cpp");
  }
  void TearDown() override { fs::remove_all(root_); }

  kopt::EvaluateCheck check(const std::string& args) { return kopt::check_evaluate_args(json::parse(args), ws_.string()); }
  std::string error(const std::string& args) {
    auto c = check(args);
    EXPECT_FALSE(c.request) << args;
    return c.error;
  }

  fs::path root_, ws_;
};

constexpr const char* kBase = R"("reference":"ref.pt","inputs":"inputs.json")";

TEST_F(EvaluateArgs, AcceptedArgumentsBecomeTheKoptBenchCommandLine) {
  auto c = check(std::string(R"({"solution":["solution/k.cpp","solution/util.cpp"],)") + kBase +
                 R"(,"options":{"atol":0.5,"fresh_inputs":false,"no_timing":true,"max_trials":40,"precision":"float16","baseline":"solution/../base.json"}})");
  ASSERT_TRUE(c.request) << c.error;
  const auto& r = *c.request;
  EXPECT_EQ(r.artifact, "solution/k.cpp");
  EXPECT_FALSE(r.slurm);
  ASSERT_EQ(r.files.size(), 4u);
  EXPECT_EQ(r.files[0].role, "solution");
  EXPECT_EQ(r.files[0].given, "solution/k.cpp");
  EXPECT_EQ(r.files[0].real, (fs::canonical(ws_) / "solution/k.cpp").string());
  EXPECT_EQ(r.files[2].role, "reference");
  EXPECT_EQ(r.files[3].role, "inputs");
  const std::string canon = fs::canonical(ws_).string();
  const std::vector<std::string> want = {"--ref", canon + "/ref.pt", "--inputs", canon + "/inputs.json", "--solution",
                                         canon + "/solution/k.cpp," + canon + "/solution/util.cpp", "--artifact",
                                         "solution/k.cpp", "--atol", "0.5", "--baseline", canon + "/base.json",
                                         "--no-fresh-inputs", "--max-trials", "40", "--no-timing", "--precision", "float16"};
  EXPECT_EQ(r.argv, want);  // options in key order
  // b/ does not exist: the baseline's folder must, inside the working directory.
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"baseline":"nope/b.json"}})").find("options.baseline"),
            std::string::npos);
  auto d = check(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"baseline":"base.json"},"artifact_path":"final.cpp"})");
  ASSERT_TRUE(d.request) << d.error;
  EXPECT_EQ(d.request->artifact, "final.cpp");
  EXPECT_EQ(d.request->argv.back(), canon + "/base.json");
}

TEST_F(EvaluateArgs, PathsOutsideTheWorkingDirectoryAreRefused) {
  for (const std::string& s : std::vector<std::string>{"../secret.cpp", (root_ / "secret.cpp").string(), "solution/link.cpp", "/etc/passwd"}) {
    const std::string e = error(R"({"solution":")" + s + "\"," + kBase + "}");
    EXPECT_NE(e.find("outside the session's working directory"), std::string::npos) << s << ": " << e;
  }
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp","reference":"../secret.cpp","inputs":"inputs.json"})")).find("reference"),
            std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"baseline":"../b.json"}})").find("outside"),
            std::string::npos);
}

TEST_F(EvaluateArgs, MissingFilesAndFoldersAreRefused) {
  EXPECT_NE(error(std::string(R"({"solution":"solution/none.cpp",)") + kBase + "}").find("no such file"), std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution",)") + kBase + "}").find("not a regular file"), std::string::npos);
  EXPECT_NE(error(R"({"solution":"solution/k.cpp","reference":"ref.pt"})").find("inputs is required"), std::string::npos);
  EXPECT_NE(error(R"({"reference":"ref.pt","inputs":"inputs.json"})").find("solution is required"), std::string::npos);
  EXPECT_NE(kopt::check_evaluate_args(json::parse(R"({"solution":"solution/k.cpp","reference":"ref.pt","inputs":"inputs.json"})"),
                                      (root_ / "gone").string())
                .error.find("does not exist"),
            std::string::npos);
}

// A KernelBench problem declares its inputs (get_inputs): no spec is needed, and one given wins.
TEST_F(EvaluateArgs, AKernelBenchProblemNeedsNoInputSpec) {
  auto r = check(R"({"solution":"solution/kernel.py","reference":"problem.py"})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(std::find(r.request->argv.begin(), r.request->argv.end(), "--inputs"), r.request->argv.end());
  EXPECT_EQ(r.request->argv[2], "--solution");
  auto g = check(R"({"solution":"solution/kernel.py","reference":"problem.py","inputs":"inputs.json"})");
  ASSERT_TRUE(g.request) << g.error;
  EXPECT_NE(std::find(g.request->argv.begin(), g.request->argv.end(), "--inputs"), g.request->argv.end());
  EXPECT_NE(error(R"({"solution":"solution/kernel.py","reference":"ref.pt"})").find("inputs is required"), std::string::npos);
}

TEST_F(EvaluateArgs, UnknownOptionsAndArgumentsAndWrongTypesAreRefused) {
  const std::string e = error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"cache_dir":"/tmp"}})");
  EXPECT_NE(e.find("unknown option 'cache_dir'"), std::string::npos) << e;
  EXPECT_NE(e.find("atol"), std::string::npos) << e;  // the list of what is allowed
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"flags":"--seed 1"})").find("unknown argument 'flags'"),
            std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"atol":"0.5"}})").find("options.atol must be a number"),
            std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"warmup":1.5}})").find("integer"),
            std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"options":{"device":"tpu"}})").find("auto, cpu, cuda"),
            std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":[],)") + kBase + "}").find("list of 1 to 32"), std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":[1],)") + kBase + "}").find("list of paths"), std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"where":"moon"})").find("where"), std::string::npos);
  EXPECT_NE(error(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"slurm_options":"-p gpu"})").find("slurm_options"),
            std::string::npos);
  EXPECT_FALSE(kopt::check_evaluate_args_text("{nope", ws_.string()).request);
  EXPECT_FALSE(check("[1,2]").request);
}

TEST_F(EvaluateArgs, SlurmGoesThroughKoptBenchSlurm) {
  auto c = check(std::string(R"({"solution":"solution/k.cpp",)") + kBase + R"(,"where":"slurm","slurm_options":"-p gpu --gres=gpu:1"})");
  ASSERT_TRUE(c.request) << c.error;
  EXPECT_TRUE(c.request->slurm);
  ASSERT_GE(c.request->argv.size(), 2u);
  EXPECT_EQ(c.request->argv[c.request->argv.size() - 2], "--slurm");
  EXPECT_EQ(c.request->argv.back(), "-p gpu --gres=gpu:1");
}

const json kSources = json::parse(R"({"solution":[{"path":"k.cpp","sha256":")" + std::string(64, 'a') +
                                  R"("}],"reference":{"path":"ref.pt","sha256":")" + std::string(64, 'b') + R"("}})");

TEST(EvaluateResult, TheEvaluatorsLineMarkedWithThePluginAndItsBytes) {
  const std::string out =
      "COMPILED: True\nCORRECT: True\nKERNEL_EVAL={\"artifact\":\"k.cpp\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.5}\n";
  json r = json::parse(kopt::evaluate_result({{"artifact", "k.cpp"}, {"output", out}, {"code", 0}, {"sources", kSources},
                                              {"evaluationId", "ke-0011223344556677"}}));
  EXPECT_EQ(r["latency_ms"], 0.5);
  EXPECT_EQ(r["measured_by"], "kernel-opt");
  EXPECT_EQ(r["sources"], kSources);
  EXPECT_EQ(r["evaluation_id"], "ke-0011223344556677");
  EXPECT_EQ(r["report"], "COMPILED: True\nCORRECT: True\n");
  EXPECT_TRUE(kopt::is_plugin_measurement(r));
  ASSERT_TRUE(kopt::measured_sources(r));
}

TEST(EvaluateResult, NoLineCancelledOrVoided) {
  json r = json::parse(kopt::evaluate_result({{"artifact", "k.cpp"}, {"output", "kopt-bench: boom\n"}, {"code", 2}}));
  EXPECT_EQ(r["evaluator_failed"], true);
  EXPECT_EQ(r["correct"], false);
  EXPECT_NE(r["error"].get<std::string>().find("exit 2"), std::string::npos);
  r = json::parse(kopt::evaluate_result({{"artifact", "k.cpp"}, {"cancelled", true}, {"output", "KERNEL_EVAL={\"artifact\":\"k.cpp\",\"correct\":true}"}}));
  EXPECT_EQ(r["cancelled"], true);
  EXPECT_NE(r["error"].get<std::string>().find("cancelled"), std::string::npos);
  EXPECT_FALSE(r.contains("latency_ms"));
  // The figures of a run whose files changed under it stay visible, and do not count.
  r = json::parse(kopt::evaluate_result({{"artifact", "k.cpp"}, {"failure", "k.cpp changed"},
                                         {"output", "KERNEL_EVAL={\"artifact\":\"k.cpp\",\"correct\":true,\"latency_ms\":1}"}}));
  EXPECT_EQ(r["correct"], false);
  EXPECT_EQ(r["latency_ms"], 1);
  EXPECT_EQ(r["error"], "k.cpp changed");
  EXPECT_EQ(r["measured_by"], "kernel-opt");
}

// Every file the builds read (issue 51) rides with the point, so kernel_finalize can compare what it
// re-measures with what the log says was measured; a list with one bad entry binds nothing of it.
TEST(EvaluateResult, TheFilesTheBuildReadRideWithThePoint) {
  json src = kSources;
  src["read"] = json::array({{{"path", "common/tile.h"}, {"sha256", std::string(64, 'c')}},
                             {{"path", "k.cpp"}, {"sha256", std::string(64, 'a')}}});
  json r = json::parse(kopt::evaluate_result({{"artifact", "k.cpp"}, {"sources", src},
      {"output", "KERNEL_EVAL={\"artifact\":\"k.cpp\",\"correct\":true,\"latency_ms\":0.5}\n"}}));
  auto m = kopt::measured_sources(r);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->read.size(), 2u);
  EXPECT_EQ(m->read[0].path, "common/tile.h");
  kopt::Iteration it;
  it.sources = m;
  const json wire = kopt::to_json(it)["sources"];
  EXPECT_EQ(wire["read"], src["read"]);
  src["read"][1]["sha256"] = "not a digest";
  r["sources"] = src;
  m = kopt::measured_sources(r);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->read.empty());
  it.sources = m;
  EXPECT_FALSE(kopt::to_json(it)["sources"].contains("read"));
}

// The provenance rule, decided once (projector + trust_of): only the exact tool, a result that is no
// error, with the plugin's mark.
json call(int seq, const std::string& id, const std::string& name, const json& args) {
  return {{"type", "tool/call"}, {"seq", seq}, {"data", {{"callId", id}, {"name", name}, {"arguments", args.dump()}}}};
}
json result(int seq, const std::string& id, const std::string& text, bool error = false) {
  json block = {{"type", "tool-result"}, {"toolCallId", id}, {"content", json::array({{{"type", "text"}, {"text", text}}})}};
  if (error) block["isError"] = true;
  return {{"type", "tool/result"}, {"seq", seq}, {"data", {{"message", {{"source", {{"callId", id}}}, {"content", json::array({block})}}}}}};
}

TEST(DV13_PluginMeasured, OnlyTheEvaluateToolsOwnResultIsPluginMeasured) {
  const std::string good = kopt::evaluate_result({{"artifact", "k.cpp"}, {"sources", kSources}, {"evaluationId", "ke-0011223344556677"},
      {"output", "KERNEL_EVAL={\"artifact\":\"k.cpp\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.5}\n"}});
  kopt::Projector p;
  json args = {{"solution", {"k.cpp"}}, {"reference", "ref.pt"}, {"inputs", "in.json"}};
  p.feed(json::array({call(1, "a", "kernel_evaluate", args), result(2, "a", good),
                      call(3, "b", "kernel_evaluate", args), result(4, "b", good, /*error=*/true),
                      call(5, "c", "x_kernel_evaluate", args), result(6, "c", good),
                      call(7, "d", "bash", {{"command", "./emit"}}), result(8, "d", "KERNEL_EVAL=" + good)}));
  const kopt::Series series = p.series();
  const auto& its = series.iterations;
  ASSERT_EQ(its.size(), 4u);
  EXPECT_EQ(kopt::trust_of(its[0]), "plugin");
  ASSERT_TRUE(its[0].sources);
  EXPECT_EQ(its[0].sources->solution.at(0).sha256, std::string(64, 'a'));
  EXPECT_EQ(its[0].artifactPath, "k.cpp");  // from the solution argument
  EXPECT_EQ(kopt::trust_of(its[1]), "tool");
  EXPECT_FALSE(its[1].sources);
  EXPECT_EQ(kopt::trust_of(its[2]), "tool");
  EXPECT_EQ(kopt::trust_of(its[3]), "self-reported");
  EXPECT_FALSE(its[3].sources);
  // kernel_finalize measures the plugin point again from its bytes.
  auto pick = kopt::pick_replay_point(series, "k.cpp");
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->index, 0u);
  EXPECT_TRUE(pick->plugin);
  EXPECT_EQ(pick->evaluationId, "ke-0011223344556677");
  EXPECT_TRUE(pick->command.empty());
}

// The report and the supervisor's digest name the provenance in words, with the bytes.
TEST(DV13_PluginMeasured, TheReportAndTheDigestNameIt) {
  const std::string good = kopt::evaluate_result({{"artifact", "k.cpp"}, {"sources", kSources},
      {"output", "KERNEL_EVAL={\"artifact\":\"k.cpp\",\"compiled\":true,\"correct\":true,\"latency_ms\":0.5}\n"}});
  kopt::Projector p;
  json args = {{"solution", {"k.cpp"}}, {"reference", "ref.pt"}, {"inputs", "in.json"}};
  p.feed(json::array({call(1, "a", "kernel_evaluate", args), result(2, "a", good),
                      call(3, "d", "bash", {{"command", "./emit"}}), result(4, "d", "KERNEL_EVAL=" + good),
                      call(5, "f", "kernel_finalize", {{"artifact_path", "k.cpp"}}),
                      result(6, "f", "[replay] kernel_evaluate k.cpp\nKERNEL_EVAL={\"artifact\":\"k.cpp\",\"correct\":true,\"latency_ms\":0.6}")}));
  const kopt::Series s = p.series();
  ASSERT_TRUE(s.iterations[0].finalized);  // the earliest of equal latencies: the plugin's
  const std::string d = kopt::supervisor_digest(s, kopt::DigestInputs{});
  EXPECT_NE(d.find("1 of 3 rows were measured by the plugin's evaluator [plugin]"), std::string::npos) << d;
  EXPECT_NE(d.find("1 of 3 rows are self-reported [shell]"), std::string::npos) << d;
  EXPECT_NE(d.find("[plugin] artifact k.cpp"), std::string::npos) << d;
  kopt::ReportInput in;
  in.series = s;
  const kopt::Report r = kopt::build_report(std::move(in));
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].trust, "plugin");
  const std::string zh = kopt::report_html(r, kopt::ReportLang::Zh), en = kopt::report_html(r, kopt::ReportLang::En);
  EXPECT_NE(zh.find("data-kopt=\"trust-plugin\">插件评测器实测"), std::string::npos);
  EXPECT_NE(en.find("measured by the plugin&#39;s evaluator"), std::string::npos);
  EXPECT_NE(en.find("sha256 k.cpp aaaaaaaaaaaa; ref ref.pt bbbbbbbbbbbb"), std::string::npos);
  // The finalize gap of a plugin point: its first figure is the plugin's, not the agent's.
  EXPECT_NE(en.find("⚠ measured 500µs, re-measured +20% off"), std::string::npos) << en.substr(en.find("final-gap"), 200);
  EXPECT_EQ(en.find("self-reported 500"), std::string::npos);
}

}  // namespace

