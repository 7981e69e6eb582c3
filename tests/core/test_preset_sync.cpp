// Preset sync (spec R): seed, update untouched files, keep user edits, back up in untracked dirs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "kopt/json.hpp"
#include "kopt/preset_sync.hpp"

namespace fs = std::filesystem;
using kopt::json;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::mt19937_64 rng{std::random_device{}()};
    path = fs::temp_directory_path() / ("kopt-preset-" + std::to_string(::getpid()) + "-" + std::to_string(rng()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}
std::string get(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
json manifest(const fs::path& target) {
  return json::parse(get(target / kopt::kPresetManifestName));
}

struct PresetSyncTest : ::testing::Test {
  TempDir tmp;
  fs::path src, dst;
  void SetUp() override {
    src = tmp.path / "bundle";
    dst = tmp.path / "root" / "kernel-opt";
    put(src / "agent.cordis.yml", "- id: persona\n");
    put(src / "preset.yml", "name: 算子优化模式\n");
    put(src / "evaluator" / "GUIDE.md", "guide v1\n");
  }
};

}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(kopt::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(kopt::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(kopt::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(kopt::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_F(PresetSyncTest, R1SkipsWithoutAgentCordis) {
  fs::remove(src / "agent.cordis.yml");
  auto r = kopt::sync_preset(src, dst);
  EXPECT_TRUE(r.skipped);
  EXPECT_FALSE(fs::exists(dst));
}

TEST_F(PresetSyncTest, R3SeedsMissingFilesAndWritesManifest) {
  auto r = kopt::sync_preset(src, dst);
  ASSERT_FALSE(r.skipped);
  EXPECT_EQ(r.seeded, (std::vector<std::string>{"agent.cordis.yml", "evaluator/GUIDE.md", "preset.yml"}));
  EXPECT_EQ(get(dst / "evaluator" / "GUIDE.md"), "guide v1\n");
  json m = manifest(dst);
  EXPECT_EQ(m["schema"], 1);
  EXPECT_EQ(m["files"]["evaluator/GUIDE.md"], kopt::sha256_hex("guide v1\n"));
  // 2-space pretty print plus a trailing newline
  std::string text = get(dst / kopt::kPresetManifestName);
  EXPECT_EQ(text.rfind("{\n  \"schema\": 1,\n  \"files\": {\n    \"", 0), 0u);
  EXPECT_EQ(text.back(), '\n');
}

TEST_F(PresetSyncTest, R3UpdatesFilesNobodyEdited) {
  kopt::sync_preset(src, dst);
  put(src / "evaluator" / "GUIDE.md", "guide v2\n");
  auto r = kopt::sync_preset(src, dst);
  EXPECT_EQ(r.updated, (std::vector<std::string>{"evaluator/GUIDE.md"}));
  EXPECT_EQ(get(dst / "evaluator" / "GUIDE.md"), "guide v2\n");
  EXPECT_EQ(manifest(dst)["files"]["evaluator/GUIDE.md"], kopt::sha256_hex("guide v2\n"));
  EXPECT_EQ(r.unchanged.size(), 2u);
}

TEST_F(PresetSyncTest, R3KeepsUserEditsAndTheirOldRecord) {
  kopt::sync_preset(src, dst);
  put(dst / "preset.yml", "name: mine\n");
  put(src / "preset.yml", "name: 算子优化模式 v2\n");
  auto r = kopt::sync_preset(src, dst);
  EXPECT_EQ(r.kept, (std::vector<std::string>{"preset.yml"}));
  EXPECT_EQ(get(dst / "preset.yml"), "name: mine\n");
  EXPECT_EQ(manifest(dst)["files"]["preset.yml"], kopt::sha256_hex("name: 算子优化模式\n"));
  bool named = false;
  for (const auto& line : r.log_lines()) named = named || line.find("preset.yml") != std::string::npos;
  EXPECT_TRUE(named);
  // A second sync still keeps it (the record stays the old bundled hash).
  auto r2 = kopt::sync_preset(src, dst);
  EXPECT_EQ(r2.kept, (std::vector<std::string>{"preset.yml"}));
  EXPECT_EQ(get(dst / "preset.yml"), "name: mine\n");
}

TEST_F(PresetSyncTest, R3BacksUpInUntrackedDirectory) {
  put(dst / "preset.yml", "name: from an older plugin\n");
  put(dst / "agent.cordis.yml", "- id: persona\n");  // identical: recorded, not backed up
  auto r = kopt::sync_preset(src, dst, "2026-12-02T10:11:12.345Z");
  EXPECT_FALSE(r.tracked);
  EXPECT_EQ(r.backed_up, (std::vector<std::string>{"preset.yml"}));
  EXPECT_EQ(r.unchanged, (std::vector<std::string>{"agent.cordis.yml"}));
  EXPECT_EQ(get(dst / "preset.yml.bak-2026-12-02T10-11-12-345Z"), "name: from an older plugin\n");
  EXPECT_EQ(get(dst / "preset.yml"), "name: 算子优化模式\n");
  EXPECT_EQ(manifest(dst)["files"].size(), 3u);
}

TEST_F(PresetSyncTest, R3TrackedFileWithoutEntryIsKeptUnrecorded) {
  kopt::sync_preset(src, dst);
  put(src / "extra.md", "new bundled\n");
  put(dst / "extra.md", "user made this\n");
  auto r = kopt::sync_preset(src, dst);
  EXPECT_EQ(r.kept, (std::vector<std::string>{"extra.md"}));
  EXPECT_FALSE(manifest(dst)["files"].contains("extra.md"));
  EXPECT_EQ(get(dst / "extra.md"), "user made this\n");
}

TEST_F(PresetSyncTest, R4RemovedBundleFilesDropOutOfManifest) {
  kopt::sync_preset(src, dst);
  fs::remove(src / "evaluator" / "GUIDE.md");
  kopt::sync_preset(src, dst);
  json m = manifest(dst);
  EXPECT_FALSE(m["files"].contains("evaluator/GUIDE.md"));
  EXPECT_TRUE(fs::exists(dst / "evaluator" / "GUIDE.md"));  // never deleted
}

TEST_F(PresetSyncTest, UnreadableManifestMeansUntracked) {
  kopt::sync_preset(src, dst);
  put(dst / kopt::kPresetManifestName, "{not json");
  put(dst / "preset.yml", "edited\n");
  auto r = kopt::sync_preset(src, dst, "T");
  EXPECT_FALSE(r.tracked);
  EXPECT_EQ(r.backed_up, (std::vector<std::string>{"preset.yml"}));
  EXPECT_TRUE(fs::exists(dst / "preset.yml.bak-T"));
}

TEST(PresetSyncHelpers, ExpandHome) {
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(kopt::expand_home("~/.dsh/.agent-presets").string(), "/home/u/.dsh/.agent-presets");
  EXPECT_EQ(kopt::expand_home("~").string(), "/home/u");
  EXPECT_EQ(kopt::expand_home("/abs/x").string(), "/abs/x");
}

TEST(PresetSyncHelpers, AtomicWriteLeavesNoTemporaries) {
  TempDir tmp;
  auto p = tmp.path / "a" / "b.txt";
  EXPECT_EQ(kopt::write_file_atomic(p, "one"), "");
  EXPECT_EQ(kopt::write_file_atomic(p, "two"), "");
  EXPECT_EQ(get(p), "two");
  int n = 0;
  for (auto& e : fs::directory_iterator(p.parent_path())) { (void)e; ++n; }
  EXPECT_EQ(n, 1);
}
