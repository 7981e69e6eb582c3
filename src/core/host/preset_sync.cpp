// Preset sync (spec R) and the small file helpers it needs.
#include "kopt/preset_sync.hpp"
#include "kopt/sha256.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <system_error>

#include "kopt/json.hpp"

namespace fs = std::filesystem;

namespace kopt {


fs::path expand_home(std::string_view path) {
  if (path.empty() || path[0] != '~') return fs::path(std::string(path));
  if (path.size() > 1 && path[1] != '/') return fs::path(std::string(path));  // ~user: left as is
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr ? home : "";
  return fs::path(base + std::string(path.substr(1)));
}

namespace {

std::optional<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

std::string iso_now_for_name() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d-%02d-%02d-%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::string name_safe(std::string_view ts) {
  std::string s(ts);
  for (char& c : s)
    if (c == ':' || c == '.') c = '-';
  return s;
}

// Bundled files, recursive, '/'-joined relative paths, sorted. Symlinks and special files are skipped.
std::vector<std::string> list_files(const fs::path& root, std::error_code& ec) {
  std::vector<std::string> out;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto& entry = *it;
    std::error_code sec;
    if (!entry.is_regular_file(sec) || entry.is_symlink(sec)) continue;
    std::string rel = fs::relative(entry.path(), root, sec).generic_string();
    if (sec || rel.empty() || rel == kPresetManifestName) continue;
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Removes `<name>.tmp-<pid>-<n>` files left by a writer that was killed (its pid is gone); a live
// writer's file is left alone.
void sweep_temp_files(const fs::path& root) {
  std::error_code ec;
  std::vector<fs::path> stale;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (!it->is_regular_file(sec) || it->is_symlink(sec)) continue;
    const std::string name = it->path().filename().string();
    auto at = name.rfind(".tmp-");
    if (at == std::string::npos || at == 0) continue;
    std::string_view rest = std::string_view(name).substr(at + 5);
    auto dash = rest.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) continue;
    bool digits = true;
    for (std::size_t i = 0; i < rest.size(); ++i)
      if (i != dash && (rest[i] < '0' || rest[i] > '9')) digits = false;
    if (!digits || dash > 9) continue;
    const long pid = std::stol(std::string(rest.substr(0, dash)));
    if (pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(it->path());
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

}  // namespace

std::string write_file_atomic(const fs::path& path, std::string_view data) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return "cannot create " + path.parent_path().string() + ": " + ec.message();
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rng() % 1000000000ULL);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + tmp.string();
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return "cannot write " + tmp.string();
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ec2;
    fs::remove(tmp, ec2);
    return "cannot replace " + path.string() + ": " + ec.message();
  }
  return {};
}

std::vector<std::string> PresetSyncReport::log_lines() const {
  std::vector<std::string> lines;
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (skipped) {
    lines.push_back("preset sync skipped: " + skip_reason);
    return lines;
  }
  if (!seeded.empty()) lines.push_back("preset: installed " + join(seeded));
  if (!updated.empty()) lines.push_back("preset: updated " + join(updated));
  if (!backed_up.empty())
    lines.push_back("preset: updated files in a directory that predates tracking, old copies kept as " +
                    join(backups));
  if (!kept.empty())
    lines.push_back("preset: kept your edits of " + join(kept) +
                    " (delete a file to take the plugin's new version on the next start)");
  for (const auto& e : errors) lines.push_back("preset: " + e);
  return lines;
}

PresetSyncReport sync_preset(const fs::path& source, const fs::path& target, std::string_view timestamp) {
  PresetSyncReport report;
  std::error_code ec;
  if (!fs::is_regular_file(source / "agent.cordis.yml", ec)) {
    report.skipped = true;
    report.skip_reason = "source has no agent.cordis.yml (" + source.string() + ")";
    return report;
  }
  std::vector<std::string> files = list_files(source, ec);
  if (ec) {
    report.skipped = true;
    report.skip_reason = "cannot read " + source.string() + ": " + ec.message();
    return report;
  }
  const std::string stamp = name_safe(timestamp.empty() ? iso_now_for_name() : std::string(timestamp));

  // The manifest: readable, a record, with a `files` record -> tracked.
  // A sync killed half-way leaves its intent manifest: `pending` holds the hash each planned write was
  // about to produce, so a file is ours when it has the recorded hash or the pending one; `untracked`
  // says the directory predated tracking when that sync began.
  std::map<std::string, std::string> recorded;
  std::map<std::string, std::vector<std::string>> pending;
  if (auto text = read_file(target / kPresetManifestName)) {
    json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("files") && j["files"].is_object()) {
      report.tracked = !(j.contains("untracked") && j["untracked"] == true);
      for (auto it = j["files"].begin(); it != j["files"].end(); ++it)
        if (it.value().is_string()) recorded[it.key()] = it.value().get<std::string>();
      if (j.contains("pending") && j["pending"].is_object())
        for (auto it = j["pending"].begin(); it != j["pending"].end(); ++it)
          if (it.value().is_array())
            for (const auto& h : it.value())
              if (h.is_string()) pending[it.key()].push_back(h.get<std::string>());
    }
  }
  sweep_temp_files(target);
  auto ours = [&](const std::string& rel, const std::string& hash) {
    auto r = recorded.find(rel);
    auto p = pending.find(rel);
    return (r != recorded.end() && r->second == hash) ||
           (p != pending.end() && std::find(p->second.begin(), p->second.end(), hash) != p->second.end());
  };

  // Plan first: which files this sync will write. Their new hashes go into an intent manifest (atomic)
  // before the first write, and the final manifest replaces it after the last one.
  json intent_pending = json::object();
  for (const auto& rel : files) {
    auto bundled = read_file(source / rel);
    if (!bundled) continue;
    const std::string bundled_hash = sha256_hex(*bundled);
    std::error_code sec;
    const fs::path dest = target / rel;
    auto current = fs::is_regular_file(dest, sec) ? read_file(dest) : std::nullopt;
    if (current && sha256_hex(*current) == bundled_hash) continue;
    intent_pending[rel] = json::array({bundled_hash});
  }
  if (!intent_pending.empty()) {
    json intent = json::object();
    intent["schema"] = 1;
    json kept_files = json::object();
    for (const auto& [rel, hash] : recorded) kept_files[rel] = hash;
    for (const auto& [rel, hashes] : pending)  // an earlier interrupted sync's writes may still be on disk
      for (const auto& h : hashes) {
        json& list = intent_pending[rel];
        if (!list.is_array()) list = json::array();
        if (std::find(list.begin(), list.end(), h) == list.end()) list.push_back(h);
      }
    intent["files"] = kept_files;
    intent["pending"] = intent_pending;
    if (!report.tracked) intent["untracked"] = true;
    if (auto err = write_file_atomic(target / kPresetManifestName, intent.dump(2) + "\n"); !err.empty()) {
      report.errors.push_back(err + " (nothing written)");
      return report;
    }
  }

  json manifest_files = json::object();
  for (const auto& rel : files) {
    auto bundled = read_file(source / rel);
    if (!bundled) {
      report.errors.push_back("cannot read bundled " + rel);
      continue;
    }
    const std::string bundled_hash = sha256_hex(*bundled);
    const fs::path dest = target / rel;
    std::error_code sec;
    const bool exists = fs::exists(fs::symlink_status(dest, sec));
    if (!exists) {
      if (auto err = write_file_atomic(dest, *bundled); !err.empty()) {
        report.errors.push_back(err);
        continue;
      }
      report.seeded.push_back(rel);
      manifest_files[rel] = bundled_hash;
      continue;
    }
    auto current = fs::is_regular_file(dest, sec) ? read_file(dest) : std::nullopt;
    const std::string current_hash = current ? sha256_hex(*current) : std::string();
    if (current && current_hash == bundled_hash) {
      report.unchanged.push_back(rel);
      manifest_files[rel] = bundled_hash;
      continue;
    }
    auto rec = recorded.find(rel);
    if (report.tracked && current && ours(rel, current_hash)) {
      if (auto err = write_file_atomic(dest, *bundled); !err.empty()) {
        report.errors.push_back(err);
        manifest_files[rel] = current_hash;
        continue;
      }
      report.updated.push_back(rel);
      manifest_files[rel] = bundled_hash;
      continue;
    }
    if (!report.tracked) {
      // Not sure whose file this is: keep a copy, then take the bundled one.
      fs::path backup = dest;
      backup += ".bak-" + stamp;
      fs::rename(dest, backup, sec);
      if (sec) {
        report.errors.push_back("cannot back up " + rel + ": " + sec.message());
        continue;
      }
      if (auto err = write_file_atomic(dest, *bundled); !err.empty()) {
        report.errors.push_back(err);
        continue;
      }
      report.backed_up.push_back(rel);
      report.backups.push_back(fs::path(rel + ".bak-" + stamp).generic_string());
      manifest_files[rel] = bundled_hash;
      continue;
    }
    // Tracked and changed by someone else: the user's file. Keep the old record so it stays theirs.
    report.kept.push_back(rel);
    if (rec != recorded.end()) manifest_files[rel] = rec->second;
  }

  json manifest = json::object();
  manifest["schema"] = 1;
  manifest["files"] = manifest_files;
  if (auto err = write_file_atomic(target / kPresetManifestName, manifest.dump(2) + "\n"); !err.empty())
    report.errors.push_back(err);
  return report;
}

}  // namespace kopt
