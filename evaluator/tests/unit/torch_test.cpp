// LibTorch-side units: deterministic input generation, byte rewrites that bypass the version
// counter, checksums, and the compile cache (hit, miss, atomic result, namespace injection).
#include <gtest/gtest.h>
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "compile_cache.hpp"
#include "inputs.hpp"
#include "proc.hpp"
#include "spec.hpp"

using namespace kopt::bench;
using nlohmann::json;

namespace {
InputSpec sample_spec() {
  return parse_spec(json::parse(R"({"inputs":[
    {"name":"x","shape":[4,5],"dtype":"float32","dist":{"kind":"normal","mean":1,"std":2}},
    {"name":"i","shape":[6],"dtype":"int64","dist":{"kind":"randint","low":3,"high":9}},
    {"name":"c","shape":[3],"dist":{"kind":"const","value":2.5}},
    {"name":"r","shape":[2,2],"dist":{"kind":"arange","start":1,"step":0.5}},
    {"name":"s","scalar":0.25}],"seed":5})"));
}
std::string unique_copy(const std::string& src, const std::string& dir) {
  std::random_device rd;
  std::string dst = dir + "/cand_" + std::to_string(rd()) + ".cpp";
  std::ifstream in(src);
  std::ofstream out(dst);
  out << in.rdbuf() << "\n// nonce " << rd() << rd() << "\n";
  return dst;
}
}  // namespace

TEST(Inputs, SameSeedSameValuesOtherSeedOtherValues) {
  InputSpec s = sample_spec();
  auto a = draw_inputs(s, 11, "float32", at::kCPU);
  auto b = draw_inputs(s, 11, "float32", at::kCPU);
  auto c = draw_inputs(s, 12, "float32", at::kCPU);
  ASSERT_EQ(a.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(at::equal(a[i].toTensor(), b[i].toTensor())) << i;
  EXPECT_FALSE(at::equal(a[0].toTensor(), c[0].toTensor()));
  EXPECT_FALSE(at::equal(a[1].toTensor(), c[1].toTensor()));
  EXPECT_EQ(checksum(a), checksum(b));
  EXPECT_NE(checksum(a), checksum(c));
}

TEST(Inputs, DistributionsDtypesAndPrecision) {
  InputSpec s = sample_spec();
  auto v = draw_inputs(s, 1, "bfloat16", at::kCPU);
  EXPECT_EQ(v[0].toTensor().scalar_type(), at::kBFloat16);  // floating: the precision
  EXPECT_EQ(v[1].toTensor().scalar_type(), at::kLong);      // integer keeps its dtype
  at::Tensor i = v[1].toTensor();
  EXPECT_GE(i.min().item<int64_t>(), 3);
  EXPECT_LT(i.max().item<int64_t>(), 9);
  EXPECT_TRUE(at::equal(v[2].toTensor().to(at::kFloat), at::full({3}, 2.5)));
  EXPECT_TRUE(at::allclose(v[3].toTensor().to(at::kFloat), at::tensor({1.0f, 1.5f, 2.0f, 2.5f}).view({2, 2})));
  EXPECT_TRUE(v[4].isDouble());
  EXPECT_DOUBLE_EQ(v[4].toDouble(), 0.25);
  auto big = parse_spec(json::parse(R"({"inputs":[{"shape":[20000],"dist":{"kind":"normal","mean":3,"std":2}}]})"));
  at::Tensor t = draw_inputs(big, 9, "float32", at::kCPU)[0].toTensor();
  EXPECT_NEAR(t.mean().item<double>(), 3.0, 0.1);
  EXPECT_NEAR(t.std().item<double>(), 2.0, 0.1);
}

TEST(Inputs, FileInputAndSizeMismatch) {
  char d[] = "/tmp/kopt-bench-inputs.XXXXXX";
  std::string dir = mkdtemp(d);
  float vals[4] = {1, 2, 3, 4};
  std::ofstream(dir + "/x.bin", std::ios::binary).write(reinterpret_cast<char*>(vals), sizeof vals);
  auto ok = parse_spec(json::parse(R"({"inputs":[{"shape":[2,2],"dist":{"kind":"file","path":"x.bin"}}]})"), dir);
  EXPECT_TRUE(at::equal(draw_inputs(ok, 1, "float32", at::kCPU)[0].toTensor(),
                        at::tensor({1.f, 2.f, 3.f, 4.f}).view({2, 2})));
  auto bad = parse_spec(json::parse(R"({"inputs":[{"shape":[3],"dist":{"kind":"file","path":"x.bin"}}]})"), dir);
  try {
    draw_inputs(bad, 1, "float32", at::kCPU);
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("has 16 bytes, the shape and dtype need 12"), std::string::npos) << e.what();
  }
}

TEST(Inputs, OverwriteBytesKeepsAddressAndVersionCounter) {
  InputSpec s = sample_spec();
  auto a = draw_inputs(s, 1, "float32", at::kCPU);
  auto b = draw_inputs(s, 2, "float32", at::kCPU);
  const void* p = a[0].toTensor().data_ptr();
  auto ver = a[0].toTensor()._version();
  overwrite_bytes(a, b);
  EXPECT_EQ(a[0].toTensor().data_ptr(), p);
  EXPECT_EQ(a[0].toTensor()._version(), ver);  // a cache keyed on the version counter cannot tell
  EXPECT_TRUE(at::equal(a[0].toTensor(), b[0].toTensor()));
  EXPECT_EQ(checksum(a), checksum(b));
}

TEST(CompileCache, MissThenHitThenMissOnEditWithAtomicResult) {
  Toolchain tc = Toolchain::from_build_config();
  char d[] = "/tmp/kopt-bench-cc.XXXXXX";
  std::string dir = mkdtemp(d);
  std::string src = unique_copy(std::string(KOPT_TESTS_DIR) + "/honest/relu_loop.cpp", dir);
  BuildResult first = build_cached(tc, {src}, KOPT_TEST_CACHE);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(first.pch_used);
  EXPECT_EQ(first.key.size(), 64u);
  EXPECT_EQ(first.ns, "kopt_" + first.key.substr(0, 16));
  BuildResult again = build_cached(tc, {src}, KOPT_TEST_CACHE);
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.so_path, first.so_path);
  std::ofstream(src, std::ios::app) << "// edited\n";
  BuildResult edited = build_cached(tc, {src}, KOPT_TEST_CACHE);
  ASSERT_TRUE(edited.ok) << edited.log;
  EXPECT_FALSE(edited.cached);
  EXPECT_NE(edited.key, first.key);
  // a header next to the sources is part of the key too
  std::ofstream(dir + "/helper.h") << "// new header\n";
  EXPECT_NE(build_key(tc, {src}, nullptr), edited.key);
  // no temporary files of these builds left in the cache (other tests may be building now)
  std::string listing;
  if (DIR* dp = opendir((std::string(KOPT_TEST_CACHE) + "/so").c_str())) {
    while (dirent* e = readdir(dp))
      if (std::string(e->d_name).rfind(first.key, 0) == 0 && std::string(e->d_name).find(".tmp.") != std::string::npos)
        listing += e->d_name;
    closedir(dp);
  }
  EXPECT_EQ(listing, "");
}

TEST(CompileCache, CompileErrorIsReportedNotCached) {
  Toolchain tc = Toolchain::from_build_config();
  char d[] = "/tmp/kopt-bench-cc.XXXXXX";
  std::string dir = mkdtemp(d);
  std::string src = unique_copy(std::string(KOPT_TESTS_DIR) + "/misc/compile_error.cpp", dir);
  BuildResult r = build_cached(tc, {src}, KOPT_TEST_CACHE);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("no_such_method"), std::string::npos) << r.log;
  struct stat st;
  EXPECT_NE(::stat(r.so_path.c_str(), &st), 0);
  BuildResult missing = build_cached(tc, {dir + "/none.cpp"}, KOPT_TEST_CACHE);
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.log.find("source not found"), std::string::npos);
}

TEST(Namespace, TwoBuildsOfTheSameOpLoadSideBySide) {
  // Same op source, two builds: each gets its own injected namespace, so both register
  // "forward" in one process without the duplicate-namespace abort.
  Toolchain tc = Toolchain::from_build_config();
  char d[] = "/tmp/kopt-bench-ns.XXXXXX";
  std::string dir = mkdtemp(d);
  std::string s1 = unique_copy(std::string(KOPT_TESTS_DIR) + "/honest/relu_loop.cpp", dir);
  std::string s2 = unique_copy(std::string(KOPT_TESTS_DIR) + "/honest/relu_loop.cpp", dir);
  BuildResult a = build_cached(tc, {s1}, KOPT_TEST_CACHE);
  BuildResult b = build_cached(tc, {s2}, KOPT_TEST_CACHE);
  ASSERT_TRUE(a.ok && b.ok) << a.log << b.log;
  ASSERT_NE(a.ns, b.ns);
  ASSERT_NE(dlopen(a.so_path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  ASSERT_NE(dlopen(b.so_path.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  at::Tensor x = at::randn({8});
  for (const auto& ns : {a.ns, b.ns}) {
    auto op = c10::Dispatcher::singleton().findSchema({ns + "::forward", ""});
    ASSERT_TRUE(op.has_value()) << ns;
    std::vector<c10::IValue> stack{x};
    op->callBoxed(&stack);
    EXPECT_TRUE(at::equal(stack[0].toTensor(), at::relu(x)));
  }
}

TEST(Namespace, OpHeaderRefusesABuildWithoutInjection) {
  Toolchain tc = Toolchain::from_build_config();
  std::vector<std::string> argv{tc.cxx};
  for (const auto& f : tc.cxx_flags) argv.push_back(f);
  for (const auto& f : tc.include_flags) argv.push_back(f);
  // compile a file that includes kopt/op.h with no -DKOPT_NS
  char d[] = "/tmp/kopt-bench-ns.XXXXXX";
  std::string dir = mkdtemp(d);
  std::ofstream(dir + "/t.cpp") << "#include <kopt/op.h>\n";
  argv.insert(argv.end(), {"-fsyntax-only", dir + "/t.cpp"});
  ProcStatus st = run_process(argv, dir + "/log", 120);
  EXPECT_TRUE(st.exited && st.code != 0);
  EXPECT_NE(read_file(dir + "/log").find("KOPT_NS is injected by kopt-bench"), std::string::npos) << read_file(dir + "/log");
}
