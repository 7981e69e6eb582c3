#include "baseline.hpp"

#include "proc.hpp"  // replace_file

#include <ctime>
#include <fstream>
#include <stdexcept>

namespace kopt::bench {

const std::vector<std::string> kBaselineKeyFields = {
    "ref_sha256", "inputs_sha256", "device_name", "device_uuid", "driver", "backend", "torch",
    "precision", "input_regime", "timer", "stopping_rule", "seed"};

nlohmann::json BaselineRecord::to_json() const {
  nlohmann::json k = nlohmann::json::object();
  for (const auto& f : kBaselineKeyFields) {
    auto it = key.find(f);
    k[f] = it == key.end() ? "" : it->second;
  }
  nlohmann::json j = {{"format", "kopt-bench-baseline/1"},
                      {"key", k},
                      {"ref_runtime_ms", ref_runtime_ms},
                      {"measured_at", measured_at},
                      {"trials", trials},
                      {"rel_iqr", rel_iqr}};
  if (load.is_object() && !load.empty()) j["load"] = load;
  if (ci_lo_ms > 0 && ci_hi_ms >= ci_lo_ms) j["ci95_ms"] = {ci_lo_ms, ci_hi_ms};
  return j;
}

BaselineRecord BaselineRecord::from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != "kopt-bench-baseline/1")
    throw std::runtime_error("not a kopt-bench baseline (format kopt-bench-baseline/1)");
  BaselineRecord r;
  if (!j.contains("key") || !j["key"].is_object()) throw std::runtime_error("missing key object");
  for (auto it = j["key"].begin(); it != j["key"].end(); ++it) {
    if (!it.value().is_string()) throw std::runtime_error("key field " + it.key() + " is not a string");
    r.key[it.key()] = it.value().get<std::string>();
  }
  if (!j.contains("ref_runtime_ms") || !j["ref_runtime_ms"].is_number())
    throw std::runtime_error("missing ref_runtime_ms");
  r.ref_runtime_ms = j["ref_runtime_ms"].get<double>();
  if (!(r.ref_runtime_ms > 0)) throw std::runtime_error("ref_runtime_ms must be > 0");
  r.measured_at = j.value("measured_at", "");
  r.trials = j.value("trials", size_t(0));
  r.rel_iqr = j.value("rel_iqr", 0.0);
  if (j.contains("load") && j["load"].is_object()) r.load = j["load"];
  if (auto c = j.find("ci95_ms"); c != j.end() && c->is_array() && c->size() == 2 && (*c)[0].is_number() &&
      (*c)[1].is_number()) {
    const double lo = (*c)[0].get<double>(), hi = (*c)[1].get<double>();
    // Kept only when it holds the record's median (an edited file loses its interval, not its figure).
    if (lo > 0 && lo <= r.ref_runtime_ms && r.ref_runtime_ms <= hi) r.ci_lo_ms = lo, r.ci_hi_ms = hi;
  }
  return r;
}

BaselineLoad load_baseline(const std::string& path) {
  BaselineLoad out;
  std::ifstream f(path);
  if (!f) return out;  // absent: nothing frozen yet
  try {
    out.record = BaselineRecord::from_json(nlohmann::json::parse(f));
  } catch (const std::exception& e) {
    out.problem = std::string("unreadable baseline file ") + path + ": " + e.what();
  }
  return out;
}

std::vector<std::string> invalidation_reasons(const BaselineRecord& stored,
                                              const std::map<std::string, std::string>& current) {
  std::vector<std::string> out;
  for (const auto& f : kBaselineKeyFields) {
    auto a = stored.key.find(f);
    auto b = current.find(f);
    std::string va = a == stored.key.end() ? "" : a->second;
    std::string vb = b == current.end() ? "" : b->second;
    if (va != vb) out.push_back(f + ": '" + va + "' -> '" + vb + "'");
  }
  return out;
}

void write_baseline_atomic(const std::string& path, const BaselineRecord& r) {
  const std::string problem = replace_file(path, r.to_json().dump(1) + "\n", 0644, /*sync=*/true);
  if (!problem.empty()) throw std::runtime_error(problem);
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return buf;
}

}  // namespace kopt::bench
