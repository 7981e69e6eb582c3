// LibTorch-side units: deterministic input generation, byte rewrites that bypass the version
// counter, checksums, the compile cache (hit, miss, atomic result, namespace injection) and the
// dispatcher fingerprint.
#include <gtest/gtest.h>
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>
#include <dlfcn.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <map>
#include <cmath>
#include <random>
#include <set>

#include "compare.hpp"
#include "compile_cache.hpp"
#include "guards.hpp"
#include "inputs.hpp"
#include "proc.hpp"
#include "sha256.hpp"
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
std::string real_of(const std::string& p) {
  char b[PATH_MAX];
  return ::realpath(p.c_str(), b) ? std::string(b) : p;
}
std::string temp_dir(const char* stem) {
  std::string t = std::string("/tmp/") + stem + ".XXXXXX";
  std::vector<char> b(t.begin(), t.end());
  b.push_back(0);
  return real_of(mkdtemp(b.data()));
}
void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
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

// ---- the output contract (compare.hpp), rule by rule ----
namespace {
at::Tensor f32(std::vector<double> v) { return at::tensor(v, at::kDouble).to(at::kFloat); }
LazyOracle oracle_of(std::vector<at::Tensor> o) {
  LazyOracle l;
  l.fn = [o]() { return std::optional<Outputs>(o); };
  return l;
}
Verdict compare(const at::Tensor& c, const at::Tensor& r, LazyOracle l = {}) {
  return judge({c}, {r}, l, Tolerance{});
}
}  // namespace

// The one-pass judge (compare.hpp: one_pass) says exactly what the rules as tensor ops say, on
// outputs that pass, fail each rule, sit at a bound, hold non-finite values, are non-contiguous or
// of each float dtype; sums taken in another order may differ in their last bits only.
TEST(Compare, OnePassAgreesWithTheRules) {
  at::manual_seed(7);
  const at::Tensor base = at::randn({48, 40}, at::kDouble);
  std::vector<std::pair<std::string, std::pair<at::Tensor, at::Tensor>>> cases;
  auto add = [&](const std::string& name, at::Tensor c, at::Tensor r) { cases.push_back({name, {c, r}}); };
  for (auto dt : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    const std::string d = c10::toString(dt);
    const at::Tensor r = base.to(dt);
    add(d + " equal", r.clone(), r);
    add(d + " rounding", (base * (1 + 1e-7)).to(dt), r);
    add(d + " beyond atol", (base + 1e-2).to(dt), r);
    add(d + " at the bound", (base + (base.abs() * 1e-4 + 1e-4)).to(dt), r);
    at::Tensor z = r.clone();
    z.view(-1).narrow(0, 0, 5).zero_();
    add(d + " zeros", z, r);
    add(d + " transposed", r.t().contiguous().t(), r);
    add(d + " low signal", (base * 1e-6).to(dt), (base * 1e-6 * 1.001).to(dt));
    add(d + " zero reference", at::zeros_like(r), at::zeros_like(r));
    at::Tensor nan_both = r.clone();
    nan_both.view(-1)[3] = NAN;
    add(d + " NaN on both", nan_both.clone(), nan_both);
    add(d + " NaN on one", nan_both, r);
  }
  // Under atol, summed: the relative L2 rule decides (floor 1e-5), and just inside it.
  const at::Tensor r = base.to(at::kFloat) * 1e-2;
  add("L2 over the floor", (r + 5e-5 * at::sign(r)).to(at::kFloat), r);
  add("L2 near the floor", (r.to(at::kDouble) * (1 + 0.999e-5)).to(at::kFloat), r);
  at::Tensor flips = r.clone();
  flips.view(-1).narrow(0, 0, 40).mul_(-1e-3);
  add("sign flips under atol", flips, r);
  for (const auto& [name, cr] : cases) {
    SCOPED_TRACE(name);
    LazyOracle a = oracle_of({cr.second.to(at::kDouble)}), b = oracle_of({cr.second.to(at::kDouble)});
    const Verdict one = judge({cr.first}, {cr.second}, a, Tolerance{}, {}, true);
    const Verdict ops = judge({cr.first}, {cr.second}, b, Tolerance{}, {}, false);
    EXPECT_EQ(one.ok, ops.ok);
    EXPECT_EQ(one.fatal, ops.fatal);
    EXPECT_EQ(one.failed_rule, ops.failed_rule);
    EXPECT_EQ(one.message, ops.message);
    EXPECT_EQ(one.rule, ops.rule);
    EXPECT_EQ(one.low_signal, ops.low_signal);
    EXPECT_EQ(one.max_abs, ops.max_abs);
    EXPECT_EQ(one.max_rel, ops.max_rel);
    auto close = [](double x, double y, double rel) { return x == y || std::abs(x - y) <= rel * std::max(std::abs(x), std::abs(y)); };
    EXPECT_PRED3(close, one.avg_abs, ops.avg_abs, 1e-12);
    EXPECT_PRED3(close, one.rel_l2, ops.rel_l2, 1e-9);
  }
}

// Issue 49: the least bytes a call moves, inputs read once and outputs written once.
TEST(Compare, BytesMovedCountsInputsAndOutputsOnce) {
  at::Tensor x = at::randn({64, 256});  // the relu fixture: 64 KiB in, 64 KiB out
  EXPECT_EQ(bytes_moved({x}, {at::relu(x)}), 2u * 64 * 256 * 4);
  at::Tensor a = at::zeros({3, 5}, at::kDouble), b = at::zeros({7}, at::kLong), h = at::zeros({10}, at::kHalf);
  EXPECT_EQ(bytes_moved({a, b, at::Tensor()}, {h, at::Tensor()}), 3u * 5 * 8 + 7 * 8 + 10 * 2);
  EXPECT_EQ(bytes_moved({}, {}), 0u);
  // A view counts its own elements, not its base's storage.
  EXPECT_EQ(bytes_moved({x.narrow(0, 0, 2)}, {}), 2u * 256 * 4);
}

TEST(Compare, EqualNaNsAndSameInfinitiesAreEqualInEveryRule) {
  const double inf = INFINITY, nan = NAN;
  at::Tensor r = f32({-inf, 1.5, nan, inf, -2.0, 3.0});
  // the oracle has the same non-finite positions; its own error is then finite too
  Verdict v = compare(f32({-inf, 1.5, nan, inf, -2.0, 3.0}), r, oracle_of({r.to(at::kDouble)}));
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.max_abs, 0);
  EXPECT_EQ(v.rel_l2, 0);
  // The comparison works on copies: a float64 reference keeps its NaN for the next comparison.
  at::Tensor r64 = r.to(at::kDouble);
  EXPECT_TRUE(compare(r64.clone(), r64).ok);
  EXPECT_TRUE(at::isnan(r64[2]).item<bool>());
  // sqrt of negatives: NaN where the reference has NaN, a bound that is no NaN where it has one
  at::Tensor x = f32({-1, 4, -9, 16});
  EXPECT_TRUE(compare(at::sqrt(x), at::sqrt(x.clone())).ok);
  for (auto [cand, what] : {std::pair{f32({inf, 1.5, nan, inf, -2.0, 3.0}), "+inf where the reference has -inf"},
                            std::pair{f32({-inf, 1.5, 0.0, inf, -2.0, 3.0}), "a number where the reference has NaN"},
                            std::pair{f32({-inf, nan, nan, inf, -2.0, 3.0}), "NaN where the reference has a number"},
                            std::pair{f32({-inf, 1.5, nan, inf, -inf, 3.0}), "-inf where the reference has a number"}}) {
    Verdict w = compare(cand, r);
    EXPECT_FALSE(w.ok) << what;
    EXPECT_EQ(w.failed_rule, "non-finite") << what;
    EXPECT_NE(w.message.find(what), std::string::npos) << w.message;
  }
}

TEST(Compare, DtypeAndDeviceAreTheReferencesStridesAreFree) {
  at::Tensor r = at::randn({2, 3, 4, 5});
  Verdict d = compare(r.sign().to(at::kChar), r.sign());  // the same values in another dtype
  EXPECT_FALSE(d.ok);
  EXPECT_TRUE(d.fatal);
  EXPECT_EQ(d.failed_rule, "dtype");
  EXPECT_NE(d.message.find("has dtype Char, the reference's is Float"), std::string::npos) << d.message;
  LazyOracle none;
  Verdict w = judge({r.clone()}, {r}, none, Tolerance{}, {c10::DeviceType::CUDA});  // it lived on the GPU
  EXPECT_FALSE(w.ok);
  EXPECT_EQ(w.failed_rule, "device");
  EXPECT_NE(w.message.find("is on cuda, the reference's is on cpu"), std::string::npos) << w.message;
  Verdict cl = compare(r.contiguous(at::MemoryFormat::ChannelsLast), r);
  EXPECT_TRUE(cl.ok) << cl.message;
}

TEST(Compare, ZerosUnderBothFloorsFailHonestUnderflowAndResiduesPass) {
  // 8 of 2048 rows computed, the rest zero: every element under atol, relative L2 under its floor.
  at::Tensor x = at::randn({2048, 16}, at::kDouble);
  at::Tensor s = at::full({2048, 1}, 1e-7, at::kDouble);
  s.narrow(0, 0, 8).fill_(1.0);
  at::Tensor r = (x * s).to(at::kFloat);
  at::Tensor c = at::zeros_like(r);
  c.narrow(0, 0, 8).copy_(r.narrow(0, 0, 8));
  Verdict v = compare(c, r, oracle_of({x * s}));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failed_rule, "magnitude") << v.message;
  // Without an oracle the rule still sees values within 64x of the largest.
  at::Tensor big = at::randn({64, 64}) + 3;
  at::Tensor dropped = big.clone();
  dropped.narrow(0, 0, 16).zero_();
  Tolerance loose;
  loose.rtol = 2;  // every element within tolerance
  LazyOracle none;
  Verdict b = judge({dropped}, {big}, none, loose);
  EXPECT_EQ(b.failed_rule, "magnitude") << b.message;
  // Honest: exact zeros where the reference is a denormal (underflow, flushed), or where the
  // reference's value is a rounding residue the fp64 oracle puts at zero.
  at::Tensor r2 = at::randn({4096});
  at::Tensor o2 = r2.to(at::kDouble);
  r2.narrow(0, 0, 512).fill_(1e-40f);  // denormal in float32
  r2.narrow(0, 512, 512).fill_(3e-8f);   // a residue: the oracle says 0
  o2.narrow(0, 0, 512).fill_(1e-40);
  o2.narrow(0, 512, 512).zero_();
  at::Tensor c2 = r2.clone();
  c2.narrow(0, 0, 1024).zero_();
  Verdict h = compare(c2, r2, oracle_of({o2}));
  EXPECT_TRUE(h.ok) << h.message;
  // A sliver (1/1024 of the positions: 4 here) is allowed, one more is not (small values: the
  // relative L2 rule does not see them).
  r2.narrow(0, 2048, 8).fill_(1e-6f);
  o2.narrow(0, 2048, 8).copy_(r2.narrow(0, 2048, 8));
  at::Tensor c3 = r2.clone();
  c3.narrow(0, 2048, 4).zero_();
  Verdict sliver = compare(c3, r2, oracle_of({o2}));
  EXPECT_TRUE(sliver.ok) << sliver.message;
  c3.narrow(0, 2052, 1).zero_();
  EXPECT_EQ(compare(c3, r2, oracle_of({o2})).failed_rule, "magnitude");
}

TEST(Compare, SmallValuesOffBelowTheMagnitudeRuleMeetTheRelativeL2Rule) {
  // y = x * s with three quarters of the columns at 2e-5 (mixed_scale.pt): those values 1.5x off stay
  // under atol and within 8x, but add up in the relative L2 error against the fp64 oracle.
  at::Tensor x = at::randn({64, 128}, at::kDouble);
  at::Tensor s = at::full({128}, 2e-5, at::kDouble);
  s.narrow(0, 0, 32).fill_(1.0);
  at::Tensor o = x * s;
  at::Tensor r = o.to(at::kFloat);
  at::Tensor c = r.clone();
  c.narrow(1, 32, 96).mul_(1.5);
  Verdict v = compare(c, r, oracle_of({o}));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.failed_rule, "relative L2") << v.message;
  EXPECT_NE(v.message.find("against the fp64 oracle"), std::string::npos) << v.message;
}

TEST(Inputs, RegimesLeaveTheDeclaredDistributionIntegersStayInRange) {
  InputSpec s = sample_spec();
  auto declared = draw_inputs(s, 7, "float32", at::kCPU);
  auto again = draw_inputs(s, 7, "float32", at::kCPU, Regime{});
  EXPECT_TRUE(at::equal(declared[0].toTensor(), again[0].toTensor()));  // the declared draw is unchanged
  std::set<RegimeKind> kinds;
  for (size_t k = 0; k < 4; ++k) {
    Regime g = pick_regime(99, k, false);
    kinds.insert(g.kind);
    EXPECT_GE(std::fabs(g.f), 128.0) << g.describe();
    EXPECT_LE(std::fabs(g.f), 256.0) << g.describe();
    Regime m = pick_regime(99, k, true);
    EXPECT_EQ(m.kind, g.kind);
    EXPECT_LE(std::fabs(m.f), 16.0);
    EXPECT_EQ(pick_regime(99, k, false).f, g.f);  // deterministic from the seed
    auto v = draw_inputs(s, 7, "float32", at::kCPU, g);
    at::Tensor x = v[0].toTensor(), i = v[1].toTensor();
    const double spread = (x - 1).abs().max().item<double>();  // declared: mean 1, std 2
    if (g.kind != RegimeKind::Outliers)  // (1 in 64 values: maybe none of these 20; checked below)
      EXPECT_GT(spread, 2 * 6.0) << g.describe();  // far outside anything N(1, 2) gives on 20 values
    EXPECT_GE(i.min().item<int64_t>(), 3);
    EXPECT_LE(i.max().item<int64_t>(), 8);
    EXPECT_TRUE(at::equal(v[2].toTensor(), declared[2].toTensor()));  // const
    EXPECT_TRUE(at::equal(v[3].toTensor(), declared[3].toTensor()));  // arange
    EXPECT_EQ(v[4].toDouble(), 0.25);
  }
  EXPECT_EQ(kinds.size(), 4u);  // each kind once in four trials
  InputSpec big = parse_spec(json::parse(R"({"inputs":[{"name":"x","shape":[8192],"dist":{"kind":"normal","mean":1,"std":2}}]})"));
  at::Tensor o = draw_inputs(big, 3, "float32", at::kCPU, Regime{RegimeKind::Outliers, 200})[0].toTensor();
  const double far = (o - 1).abs().gt(2 * 8).to(at::kDouble).mean().item<double>();  // beyond 8 spreads
  EXPECT_GT(far, 0.5 / 64);
  EXPECT_LT(far, 1.5 / 64);
  Regime sh{RegimeKind::Shifted, 150};
  EXPECT_GT(draw_inputs(s, 7, "float32", at::kCPU, sh)[0].toTensor().min().item<double>(), 1 + 2 * 150 - 2 * 8);
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
  EXPECT_EQ(first.content_key.size(), 64u);
  EXPECT_EQ(first.ns, "kopt_" + first.key.substr(0, 16));
  EXPECT_EQ(first.so_path, std::string(KOPT_TEST_CACHE) + "/so/" + first.content_key + ".so");
  // The build read the source and the toolchain's headers only (kopt/op.h, LibTorch, the C++ library).
  ASSERT_EQ(first.files_read.size(), 1u);
  EXPECT_EQ(first.files_read[0].path, real_of(src));
  EXPECT_EQ(first.files_read[0].sha256, sha256_hex(read_file(src)));
  EXPECT_EQ(first.workspace, real_of(dir));  // no .git above /tmp: the folder holding the sources
  BuildResult again = build_cached(tc, {src}, KOPT_TEST_CACHE);
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.so_path, first.so_path);
  EXPECT_EQ(again.files_read.size(), 1u);
  std::ofstream(src, std::ios::app) << "// edited\n";
  BuildResult edited = build_cached(tc, {src}, KOPT_TEST_CACHE);
  ASSERT_TRUE(edited.ok) << edited.log;
  EXPECT_FALSE(edited.cached);
  EXPECT_NE(edited.key, first.key);
  // A header beside the sources that no build reads is no part of anything.
  std::ofstream(dir + "/helper.h") << "// new header\n";
  EXPECT_EQ(build_key(tc, {src}, nullptr), edited.key);
  BuildResult beside = build_cached(tc, {src}, KOPT_TEST_CACHE);
  EXPECT_TRUE(beside.ok && beside.cached) << beside.log;
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

// Issue 51: every file the build read is known from the compiler's dependency files, bound by its
// SHA-256, and part of what decides a cache hit; a file outside the workspace is refused.
namespace {
// A scale op whose factor comes from a header in a sibling folder and whose offset from one in a
// subfolder: what the built library computes shows which header bytes it was built from.
std::string scale_op(const std::string& nonce) {
  return "#include <kopt/op.h>\n#include <ATen/ATen.h>\n#include \"../common/tile.h\"\n#include \"sub/inner.h\"\n"
         "static at::Tensor forward(const at::Tensor& x) { return x * kTileScale + kInnerOffset; }\n"
         "KOPT_LIBRARY(m) { m.def(\"forward(Tensor x) -> Tensor\"); }\n"
         "KOPT_LIBRARY_IMPL(CPU, m) { m.impl(\"forward\", &forward); }\n// " + nonce + "\n";
}
std::string nonce() {
  std::random_device rd;
  return std::to_string(rd()) + std::to_string(rd());
}
at::Tensor call_forward(const BuildResult& b, const at::Tensor& x) {
  void* h = dlopen(b.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(h, nullptr) << dlerror();
  auto op = c10::Dispatcher::singleton().findSchema({b.ns + "::forward", ""});
  EXPECT_TRUE(op.has_value()) << b.ns;
  if (!op) return at::Tensor();
  std::vector<c10::IValue> stack{x};
  op->callBoxed(&stack);
  return stack[0].toTensor();
}
std::map<std::string, std::string> read_map(const BuildResult& b) {
  std::map<std::string, std::string> m;
  for (const auto& f : b.files_read) m[f.path] = f.sha256;
  return m;
}
}  // namespace

TEST(CompileCache, HeadersInASiblingFolderAndASubfolderAreBoundAndAnEditedOneRebuilds) {
  Toolchain tc = Toolchain::from_build_config();
  const std::string ws = temp_dir("kopt-bench-ws");
  ASSERT_TRUE(make_dirs(ws + "/common") && make_dirs(ws + "/sol/sub"));
  write_text(ws + "/common/tile.h", "#pragma once\nconstexpr float kTileScale = 2.0f;\n");
  write_text(ws + "/sol/sub/inner.h", "#pragma once\nconstexpr float kInnerOffset = 0.5f;\n");
  write_text(ws + "/sol/unused.h", "#error not included\n");
  const std::string src = ws + "/sol/k.cpp";
  write_text(src, scale_op(nonce()));
  BuildResult first = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(first.workspace, ws);
  // Exactly the files the build read: the source and both headers, wherever they are; not the header
  // beside the source that nothing includes, not the toolchain's.
  const std::map<std::string, std::string> want{{ws + "/common/tile.h", sha256_hex(read_file(ws + "/common/tile.h"))},
                                                {ws + "/sol/k.cpp", sha256_hex(read_file(src))},
                                                {ws + "/sol/sub/inner.h", sha256_hex(read_file(ws + "/sol/sub/inner.h"))}};
  EXPECT_EQ(read_map(first), want);
  // The same bytes: a hit. A header nobody reads changes nothing.
  write_text(ws + "/sol/unused.h", "// still not included\n");
  BuildResult again = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(again.ok) << again.log;
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.so_path, first.so_path);
  EXPECT_EQ(read_map(again), want);
  // The sibling folder's header changed, the sources did not: the same key, yet no hit: a new build.
  write_text(ws + "/common/tile.h", "#pragma once\nconstexpr float kTileScale = 3.0f;\n");
  BuildResult edited = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(edited.ok) << edited.log;
  EXPECT_FALSE(edited.cached) << "a cached library built from the old header was reused";
  EXPECT_EQ(edited.key, first.key);
  EXPECT_NE(edited.content_key, first.content_key);
  EXPECT_NE(edited.so_path, first.so_path);
  EXPECT_EQ(read_map(edited)[ws + "/common/tile.h"], sha256_hex("#pragma once\nconstexpr float kTileScale = 3.0f;\n"));
  at::Tensor x = at::arange(4, at::kFloat);
  EXPECT_TRUE(at::allclose(call_forward(edited, x), x * 3 + 0.5)) << "the library was not built from the edited header";
  // The subfolder's header likewise.
  write_text(ws + "/sol/sub/inner.h", "#pragma once\nconstexpr float kInnerOffset = 1.5f;\n");
  BuildResult sub = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(sub.ok) << sub.log;
  EXPECT_FALSE(sub.cached);
  EXPECT_NE(sub.so_path, edited.so_path);
  // Back to the first bytes: the manifest still knows that build, so it is found again.
  write_text(ws + "/common/tile.h", "#pragma once\nconstexpr float kTileScale = 2.0f;\n");
  write_text(ws + "/sol/sub/inner.h", "#pragma once\nconstexpr float kInnerOffset = 0.5f;\n");
  BuildResult back = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(back.ok) << back.log;
  EXPECT_TRUE(back.cached);
  EXPECT_EQ(back.so_path, first.so_path);
  // The record kopt-bench prints: every file, its digest, paths as read.
  json rec = files_read_record(ws, back.files_read);
  EXPECT_EQ(rec["count"], 3);
  EXPECT_EQ(rec["workspace"], ws);
  EXPECT_EQ(rec["files"][0]["path"], ws + "/common/tile.h");
  std::string listing;
  for (const auto& [p, h] : want) listing += h + "  " + p + "\n";
  EXPECT_EQ(rec["sha256"], sha256_hex(listing));  // as `sha256sum` prints the files, sorted by path
}

TEST(CompileCache, AFileOutsideTheWorkspaceIsRefusedWithTheReason) {
  Toolchain tc = Toolchain::from_build_config();
  const std::string ws = temp_dir("kopt-bench-ws");
  const std::string out = temp_dir("kopt-bench-outside");
  write_text(out + "/tile.h", "#pragma once\nconstexpr float kTileScale = 2.0f;\n");
  ASSERT_TRUE(make_dirs(ws + "/common") && make_dirs(ws + "/sol/sub"));
  write_text(ws + "/sol/sub/inner.h", "#pragma once\nconstexpr float kInnerOffset = 0.5f;\n");
  // An absolute #include of a header outside the workspace.
  std::string body = scale_op(nonce());
  body.replace(body.find("\"../common/tile.h\""), std::string("\"../common/tile.h\"").size(), "\"" + out + "/tile.h\"");
  write_text(ws + "/sol/abs.cpp", body);
  BuildResult abs = build_cached(tc, {ws + "/sol/abs.cpp"}, KOPT_TEST_CACHE, ws);
  EXPECT_FALSE(abs.ok);
  EXPECT_NE(abs.log.find("the build read " + out + "/tile.h, outside the workspace " + ws), std::string::npos) << abs.log;
  EXPECT_NE(abs.log.find("copy it into the workspace"), std::string::npos) << abs.log;
  EXPECT_TRUE(abs.so_path.empty());
  // A symbolic link inside the workspace to that header: judged by where it leads.
  ASSERT_EQ(::symlink((out + "/tile.h").c_str(), (ws + "/common/tile.h").c_str()), 0);
  write_text(ws + "/sol/link.cpp", scale_op(nonce()));
  BuildResult link = build_cached(tc, {ws + "/sol/link.cpp"}, KOPT_TEST_CACHE, ws);
  EXPECT_FALSE(link.ok);
  EXPECT_NE(link.log.find("the build read " + out + "/tile.h, outside the workspace"), std::string::npos) << link.log;
  // The assembler's reads count too: `.incbin` of a file outside the workspace, and of the judge's key
  // in kopt-bench's own cache.
  write_text(out + "/table.bin", "0123456789");
  write_text(ws + "/sol/incbin.cpp", "#include <kopt/op.h>\nasm(\".section .rodata\\n.incbin \\\"" + out +
                                         "/table.bin\\\"\\n.previous\");\nint kopt_unused_" + nonce() + ";\n");
  BuildResult inc = build_cached(tc, {ws + "/sol/incbin.cpp"}, KOPT_TEST_CACHE, ws);
  EXPECT_FALSE(inc.ok);
  EXPECT_NE(inc.log.find("the build read " + out + "/table.bin, outside the workspace"), std::string::npos) << inc.log;
  const std::string cache = real_of(KOPT_TEST_CACHE);
  write_text(cache + "/kopt-test-secret", "not the candidate's");
  write_text(ws + "/sol/key.cpp", "#include <kopt/op.h>\nasm(\".section .rodata\\n.incbin \\\"" + cache +
                                      "/kopt-test-secret\\\"\\n.previous\");\nint kopt_unused_" + nonce() + ";\n");
  BuildResult key = build_cached(tc, {ws + "/sol/key.cpp"}, KOPT_TEST_CACHE, "/");
  EXPECT_FALSE(key.ok);
  EXPECT_NE(key.log.find("inside kopt-bench's cache"), std::string::npos) << key.log;
}

TEST(CompileCache, TheAssemblersIncbinIsAFileTheBuildRead) {
  Toolchain tc = Toolchain::from_build_config();
  if (tc.compiler_identity().find("clang") != std::string::npos) GTEST_SKIP() << "clang's integrated assembler lists no .incbin";
  const std::string ws = temp_dir("kopt-bench-ws");
  ASSERT_TRUE(make_dirs(ws + "/data"));
  write_text(ws + "/data/table.bin", "0123456789");
  const std::string src = ws + "/k.cpp";
  write_text(src, "#include <kopt/op.h>\nasm(\".section .rodata\\n.incbin \\\"" + ws +
                      "/data/table.bin\\\"\\n.previous\");\nint kopt_unused_" + nonce() + ";\n");
  BuildResult a = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_EQ(read_map(a).count(ws + "/data/table.bin"), 1u);
  write_text(ws + "/data/table.bin", "9876543210");
  BuildResult b = build_cached(tc, {src}, KOPT_TEST_CACHE, ws);
  ASSERT_TRUE(b.ok) << b.log;
  EXPECT_FALSE(b.cached) << "a library embedding the old bytes was reused";
}

TEST(CompileCache, TheWorkspaceByDefault) {
  const std::string d = temp_dir("kopt-bench-dws");
  ASSERT_TRUE(make_dirs(d + "/a/b") && make_dirs(d + "/c"));
  write_text(d + "/a/b/k.cpp", "");
  write_text(d + "/c/j.cpp", "");
  // No .git above: the deepest folder holding every source.
  EXPECT_EQ(default_workspace({d + "/a/b/k.cpp"}), d + "/a/b");
  EXPECT_EQ(default_workspace({d + "/a/b/k.cpp", d + "/c/j.cpp"}), d);
  // A git work tree: its root.
  ASSERT_TRUE(make_dirs(d + "/a/.git"));
  EXPECT_EQ(default_workspace({d + "/a/b/k.cpp"}), d + "/a");
  // The current folder when every source lies inside it (kopt-bench --serve: the session's).
  char was[PATH_MAX];
  ASSERT_NE(::getcwd(was, sizeof was), nullptr);
  ASSERT_EQ(::chdir((d + "/a/b").c_str()), 0);
  EXPECT_EQ(default_workspace({"k.cpp"}), d + "/a/b");
  ASSERT_EQ(::chdir(d.c_str()), 0);
  EXPECT_EQ(default_workspace({"a/b/k.cpp", "c/j.cpp"}), d);
  ASSERT_EQ(::chdir(was), 0);
  EXPECT_EQ(default_workspace({d + "/none.cpp"}), "");
}

TEST(CompileCache, DependencyFilesAreReadAsMakeWritesThem) {
  // gcc: escaped spaces, '#', '$', continuation lines; nvcc: "target : deps", one per line; CRLF.
  EXPECT_EQ(parse_dep_file("/o/k.o: /w/k\\ 1.cpp /usr/include/a.h \\\n /w/c\\#d.h /w/$$x.h\n"),
            (std::vector<std::string>{"/w/k 1.cpp", "/usr/include/a.h", "/w/c#d.h", "/w/$x.h"}));
  EXPECT_EQ(parse_dep_file("/o/k.o : /w/k.cu \\\n    /w/sol/../common/tile.h \\\n    /w/sub/inner.h\n"),
            (std::vector<std::string>{"/w/k.cu", "/w/sol/../common/tile.h", "/w/sub/inner.h"}));
  EXPECT_EQ(parse_dep_file("/o/k.o: a.h \\\r\n b.h\r\nc.h:\n"), (std::vector<std::string>{"a.h", "b.h"}));
  EXPECT_EQ(parse_dep_file("/o/k.o: blob.bin k.cpp\n/o/k.o: other.bin\n"),
            (std::vector<std::string>{"blob.bin", "k.cpp", "other.bin"}));
  EXPECT_EQ(parse_dep_file("/o/k.o: /w/back\\\\\\ slash.h\n"), (std::vector<std::string>{"/w/back\\ slash.h"}));
  EXPECT_TRUE(parse_dep_file("").empty());
  EXPECT_TRUE(parse_dep_file("no rule here\n").empty());
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

void boxed_nothing(const c10::OperatorHandle&, torch::jit::Stack*) {}

// The dispatcher fingerprint (guards.hpp): the same on every thread count, and it sees a kernel
// registered over an existing one (the computed table changes, the key already had a kernel), a new
// backend fallback, and both going away again.
TEST(DispatcherSnapshot, ThreadsChangeNothingAndOverridesShow) {
  const DispatcherSnapshot one = snapshot_dispatcher(1), many = snapshot_dispatcher(8);
  EXPECT_GT(one.tables.size(), 1000u);
  EXPECT_EQ(one.tables, many.tables);
  EXPECT_TRUE(one.tables.count(kBackendFallbacks));
  EXPECT_TRUE(dispatcher_changes(one, snapshot_dispatcher(), "").empty());
  {
    torch::Library lib(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    lib.impl("relu", torch::CppFunction::makeFromBoxedFunction<&boxed_nothing>());
    EXPECT_EQ(dispatcher_changes(one, snapshot_dispatcher(), ""), std::vector<std::string>{"aten::relu"});
    EXPECT_TRUE(dispatcher_changes(one, snapshot_dispatcher(), "aten::").empty());  // its own namespace
  }
  EXPECT_TRUE(dispatcher_changes(one, snapshot_dispatcher(), "").empty());
  std::optional<c10::DispatchKey> free_key;
  for (auto k : c10::DispatchKeySet(c10::DispatchKeySet::FULL))
    if (!c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(k) && k != c10::DispatchKey::Undefined) {
      free_key = k;
      break;
    }
  ASSERT_TRUE(free_key.has_value());
  {
    torch::Library lib(torch::Library::IMPL, "_", *free_key, __FILE__, __LINE__);
    lib.fallback(torch::CppFunction::makeFallthrough());
    EXPECT_EQ(dispatcher_changes(one, snapshot_dispatcher(), ""), std::vector<std::string>{kBackendFallbacks});
  }
  EXPECT_TRUE(dispatcher_changes(one, snapshot_dispatcher(), "").empty());
}
