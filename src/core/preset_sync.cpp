// Preset sync (spec R) and the small file helpers it needs.
#include "kopt/preset_sync.hpp"

#include <unistd.h>

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

// ---- SHA-256 (FIPS 180-4), small and dependency-free ----
namespace {

constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void sha256_block(std::array<std::uint32_t, 8>& h, const unsigned char* p) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (std::uint32_t(p[4 * i]) << 24) | (std::uint32_t(p[4 * i + 1]) << 16) |
           (std::uint32_t(p[4 * i + 2]) << 8) | std::uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t n = data.size();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) sha256_block(h, p + i);
  unsigned char tail[128] = {0};
  std::size_t rest = n - i;
  std::copy(p + i, p + n, tail);
  tail[rest] = 0x80;
  std::size_t tail_len = rest + 9 <= 64 ? 64 : 128;
  std::uint64_t bits = std::uint64_t(n) * 8;
  for (int k = 0; k < 8; ++k) tail[tail_len - 1 - k] = static_cast<unsigned char>(bits >> (8 * k));
  sha256_block(h, tail);
  if (tail_len == 128) sha256_block(h, tail + 64);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::uint32_t v : h)
    for (int s = 28; s >= 0; s -= 4) out.push_back(hex[(v >> s) & 0xf]);
  return out;
}

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
  std::map<std::string, std::string> recorded;
  if (auto text = read_file(target / kPresetManifestName)) {
    json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("files") && j["files"].is_object()) {
      report.tracked = true;
      for (auto it = j["files"].begin(); it != j["files"].end(); ++it)
        if (it.value().is_string()) recorded[it.key()] = it.value().get<std::string>();
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
    if (report.tracked && current && rec != recorded.end() && rec->second == current_hash) {
      if (auto err = write_file_atomic(dest, *bundled); !err.empty()) {
        report.errors.push_back(err);
        manifest_files[rel] = rec->second;
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
