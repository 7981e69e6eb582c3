// Preset sync (spec R): installs the bundled preset directory into the user preset root and keeps it
// in step with the plugin, tracking what we wrote in a manifest of SHA-256 hashes. Files the user
// edited are kept and named; files in a directory that predates tracking are backed up before we
// replace them. Every write is atomic (temporary file + rename); an intent manifest with the pending
// hashes goes first, so a sync killed at any point is recovered by the next one, which also removes
// temporary files left by a dead writer.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/sha256.hpp"

namespace kopt {

inline constexpr const char* kPresetManifestName = ".dsh-kernel-opt-files.json";

struct PresetSyncReport {
  bool skipped = false;            // nothing done (see skip_reason)
  std::string skip_reason;         // e.g. "source has no agent.cordis.yml"
  bool tracked = false;            // the target had a readable manifest before this sync
  std::vector<std::string> seeded;     // relPaths written because they were missing
  std::vector<std::string> updated;    // relPaths we wrote before, nobody edited, now replaced
  std::vector<std::string> backed_up;  // relPaths replaced in an untracked directory (old copy kept)
  std::vector<std::string> backups;    // the backup file names, relative to the target
  std::vector<std::string> kept;       // relPaths the user changed: left alone
  std::vector<std::string> unchanged;  // relPaths already identical to the bundle
  std::vector<std::string> errors;     // per-file failures (the sync goes on with the others)
  // Human-readable lines for the host log (one per noteworthy fact).
  std::vector<std::string> log_lines() const;
};

// Syncs `source` (the bundled preset directory) into `target` (<user root>/<id>). `timestamp`
// names backups; empty = the current UTC time in ISO form. Never throws for file-system problems:
// they land in `errors` (or `skipped` when the source cannot be read at all).
PresetSyncReport sync_preset(const std::filesystem::path& source, const std::filesystem::path& target,
                             std::string_view timestamp = {});

// `~` or `~/…` expanded with $HOME; other paths unchanged.
std::filesystem::path expand_home(std::string_view path);

// Writes `data` to `path` through a temporary file in the same directory and a rename. Creates
// parent directories. Returns an error message, empty on success.
std::string write_file_atomic(const std::filesystem::path& path, std::string_view data);

}  // namespace kopt
