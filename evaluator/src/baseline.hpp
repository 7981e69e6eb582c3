// The frozen baseline: the reference's runtime, measured once and reused while its key holds.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

// Fields, in this order, that must all match for a stored baseline to be reused.
extern const std::vector<std::string> kBaselineKeyFields;

struct BaselineRecord {
  std::map<std::string, std::string> key;
  double ref_runtime_ms = 0;
  std::string measured_at;  // ISO-8601 UTC
  size_t trials = 0;
  double rel_iqr = 0;
  // The median's distribution-free 95 % interval (stats.hpp median_ci_sorted), ms; both 0 when the
  // trials were too few to reach 95 % or the record predates it (then no reference_ci_ms).
  double ci_lo_ms = 0, ci_hi_ms = 0;
  // Other processes' CPU use while it was measured (load.hpp: Load::to_json); {} when not measured
  // (a record from an older kopt-bench). Not part of the key: a contended record is marked, not refused.
  nlohmann::json load = nlohmann::json::object();
  nlohmann::json to_json() const;
  static BaselineRecord from_json(const nlohmann::json& j);  // throws std::runtime_error
};

struct BaselineLoad {
  std::optional<BaselineRecord> record;
  std::string problem;  // non-empty when the file exists but cannot be used
};
BaselineLoad load_baseline(const std::string& path);

// Why a stored record cannot be reused for `current` (empty: reuse it). One line per moved field:
// "device_name: 'A' -> 'B'".
std::vector<std::string> invalidation_reasons(const BaselineRecord& stored,
                                              const std::map<std::string, std::string>& current);

// tmp file in the same directory + fsync + rename: readers never see a half-written file.
void write_baseline_atomic(const std::string& path, const BaselineRecord& r);

std::string utc_now_iso();

}  // namespace kopt::bench
