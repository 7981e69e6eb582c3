// Property: across random sequences of plugin upgrades (bundled files changed, added, removed),
// user edits and deletions, lost or corrupted manifests and syncs, preset sync never loses a file
// the user edited: after every sync the user's latest content is still there, in the file itself
// or in one of its backups.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "kopt/preset_sync.hpp"

namespace fs = std::filesystem;

namespace {

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

bool survives(const fs::path& dst, const std::string& rel, const std::string& content) {
  fs::path file = dst / rel;
  if (fs::exists(file) && get(file) == content) return true;
  const std::string prefix = file.filename().string() + ".bak-";
  if (!fs::exists(file.parent_path())) return false;
  for (const auto& e : fs::directory_iterator(file.parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0 && get(e.path()) == content) return true;
  return false;
}

TEST(PresetSyncProperty, NeverLosesAUserEditedFileAcrossRandomUpgrades) {
  const std::vector<std::string> names{"agent.cordis.yml", "preset.yml", "evaluator/GUIDE.md", "notes.md", "a/b/c.txt"};
  fs::path root = fs::temp_directory_path() / ("kopt-preset-prop-" + std::to_string(::getpid()));
  int syncs = 0, edits = 0;
  for (unsigned seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    fs::remove_all(root);
    fs::path src = root / "bundle", dst = root / "user" / "kernel-opt";
    put(src / "agent.cordis.yml", "bundled agent v0\n");
    std::map<std::string, std::string> must_survive;  // rel path -> the user's latest content
    int version = 0, stamp = 0;
    for (int step = 0; step < 30; ++step) {
      const std::string& rel = names[rng() % names.size()];
      switch (rng() % 7) {
        case 0:  // the plugin ships a new version of a file (or a new file)
          put(src / rel, "bundled " + rel + " v" + std::to_string(++version) + "\n");
          break;
        case 1:  // the plugin stops shipping a file (never agent.cordis.yml)
          if (rel != "agent.cordis.yml") fs::remove(src / rel);
          break;
        case 2:  // the user edits a file in their preset
          put(dst / rel, "user edit " + std::to_string(seed) + "/" + std::to_string(step) + "\n");
          must_survive[rel] = get(dst / rel);
          ++edits;
          break;
        case 3:  // the user deletes a file: nothing of theirs to keep any more
          fs::remove(dst / rel);
          must_survive.erase(rel);
          break;
        case 4:  // the manifest is lost or damaged
          if (rng() % 2) fs::remove(dst / kopt::kPresetManifestName);
          else put(dst / kopt::kPresetManifestName, "{\"schema\":1,\"files\":");
          break;
        default: {
          auto r = kopt::sync_preset(src, dst, "T" + std::to_string(++stamp));
          ++syncs;
          ASSERT_TRUE(r.errors.empty()) << r.errors.front();
          for (const auto& [path, content] : must_survive)
            ASSERT_TRUE(survives(dst, path, content)) << "seed " << seed << " step " << step << ": lost " << path;
          // agent.cordis.yml is always shipped: after a sync it exists (bundled or the user's).
          ASSERT_TRUE(fs::exists(dst / "agent.cordis.yml"));
        }
      }
    }
  }
  fs::remove_all(root);
  RecordProperty("syncs", syncs);
  RecordProperty("user_edits", edits);
  EXPECT_GT(syncs, 1000);
}

}  // namespace
