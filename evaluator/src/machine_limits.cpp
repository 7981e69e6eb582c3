#include "machine_limits.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "baseline.hpp"
#include "integrity.hpp"
#include "load.hpp"
#include "proc.hpp"
#include "sha256.hpp"

namespace kopt::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kFormat = "kopt-bench-machine/1";

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Four significant digits: a tiny op's fraction (1e-5) must not round to a zero that reads as "none".
double sig4(double v) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return std::strtod(b, nullptr);  // the double nearest the four digits, so it prints as them
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0)
      if (auto c = line.find(':'); c != std::string::npos) return line.substr(c + 2);
  return "unknown cpu";
}

std::string mem_total_kib() {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("MemTotal:", 0) == 0) {
      std::string digits;
      for (char c : line)
        if (c >= '0' && c <= '9') digits += c;
      return digits;
    }
  return "unknown";
}

std::string identity_sha(const MachineIdentity& id) { return sha256_hex(json(id).dump()); }

// "cpu_model: 'A' -> 'B', threads: '2' -> '4'"
std::string identity_diff(const json& stored, const MachineIdentity& id) {
  std::string out;
  auto add = [&](const std::string& k, const std::string& was, const std::string& now) {
    out += (out.empty() ? "" : ", ") + k + ": '" + was + "' -> '" + now + "'";
  };
  for (const auto& [k, v] : id) {
    auto it = stored.find(k);
    const std::string was = it != stored.end() && it->is_string() ? it->get<std::string>() : std::string("(none)");
    if (was != v) add(k, was, v);
  }
  for (auto it = stored.begin(); it != stored.end(); ++it)
    if (!id.count(it.key())) add(it.key(), it->is_string() ? it->get<std::string>() : it->dump(), "(none)");
  return out;
}

}  // namespace

MachineIdentity host_identity(int threads) {
  MachineIdentity id;
  id["backend"] = "cpu";
  id["cpu_model"] = cpu_model_name();
  id["cpus"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  id["mem_total_kib"] = mem_total_kib();
  struct utsname u{};
  id["kernel"] = uname(&u) == 0 ? std::string(u.release) : "unknown";
  id["threads"] = std::to_string(threads);
  return id;
}

json Limits::to_json() const {
  json j = {{"bandwidth_gbps", bandwidth_gbps}, {"bandwidth_method", bandwidth_method}, {"probe_ms", probe_ms},
            {"measured_at", measured_at}, {"contended", contended}, {"detail", detail}};
  if (peak_bandwidth_gbps) j["peak_bandwidth_gbps"] = *peak_bandwidth_gbps;
  if (compute_gflops) {
    j["compute_gflops"] = *compute_gflops;
    j["compute_method"] = compute_method;
  }
  return j;
}

Limits Limits::from_json(const json& j) {
  Limits l;
  l.bandwidth_gbps = j.at("bandwidth_gbps").get<double>();
  if (!(l.bandwidth_gbps > 0) || !std::isfinite(l.bandwidth_gbps)) throw std::runtime_error("bandwidth_gbps is not a positive number");
  l.bandwidth_method = j.at("bandwidth_method").get<std::string>();
  l.probe_ms = j.at("probe_ms").get<double>();
  l.measured_at = j.at("measured_at").get<std::string>();
  l.contended = j.value("contended", false);
  l.detail = j.value("detail", json::object());
  if (j.contains("peak_bandwidth_gbps")) l.peak_bandwidth_gbps = j["peak_bandwidth_gbps"].get<double>();
  if (j.contains("compute_gflops")) {
    l.compute_gflops = j["compute_gflops"].get<double>();
    l.compute_method = j.value("compute_method", "");
  }
  return l;
}

std::string limits_path(const std::string& cache_dir, const MachineIdentity& id) {
  return cache_dir + "/machine/" + identity_sha(id).substr(0, 24) + ".json";
}

CachedLimits read_limits(const std::string& path, const std::string& key, const MachineIdentity& id) {
  CachedLimits out;
  const std::string text = read_file(path);
  if (text.empty()) return out;
  try {
    const json j = json::parse(text);
    const json& record = j.at("record");
    if (key.empty() || j.at("mac").get<std::string>() != hmac_sha256_hex(key, record.dump())) {
      out.refused = "its MAC does not verify (edited, or written under another cache's key)";
      return out;
    }
    if (record.value("format", "") != kFormat) {
      out.refused = "format '" + record.value("format", "") + "', not " + kFormat;
      return out;
    }
    const std::string diff = identity_diff(record.at("identity"), id);
    if (!diff.empty()) {
      out.refused = "it was measured on another machine (" + diff + ")";
      return out;
    }
    out.limits = Limits::from_json(record.at("limits"));
  } catch (const std::exception& e) {
    out.limits.reset();
    out.refused = std::string("it cannot be read (") + e.what() + ")";
  }
  return out;
}

bool write_limits(const std::string& path, const std::string& key, const MachineIdentity& id, const Limits& l) {
  if (key.empty()) return false;
  const json record = {{"format", kFormat}, {"identity", id}, {"limits", l.to_json()}};
  const json file = {{"record", record}, {"mac", hmac_sha256_hex(key, record.dump())}};
  return replace_file(path, file.dump(1) + "\n", 0644).empty();
}

MachineLimits machine_limits(const std::string& cache_dir, const std::string& key, const MachineIdentity& id,
                             const std::function<Limits()>& probe) {
  const auto t0 = Clock::now();
  MachineLimits ml;
  ml.identity_sha = identity_sha(id).substr(0, 24);
  const std::string path = limits_path(cache_dir, id);
  ::mkdir((cache_dir + "/machine").c_str(), 0700);
  CachedLimits c = read_limits(path, key, id);
  if (c.limits) {
    ml.limits = std::move(c.limits);
    ml.cached = true;
    ml.this_ms = ms_since(t0);
    return ml;
  }
  // One probe per machine: a judge that finds another probing waits for it and reads its record.
  const UniqueFd lock(::open((path + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600));  // released when closed
  if (lock) ::flock(lock.get(), LOCK_EX);
  if (CachedLimits again = read_limits(path, key, id); again.limits) {
    ml.limits = std::move(again.limits);
    ml.cached = true;
  } else {
    try {
      const CpuSample before = cpu_sample(getpid());
      const auto tp = Clock::now();
      Limits l = probe();
      l.probe_ms = std::round(ms_since(tp) * 10) / 10;
      const Load load = load_between(before, cpu_sample(getpid()));
      l.contended = load.contended();
      l.detail["load"] = load.to_json();
      if (l.measured_at.empty()) l.measured_at = utc_now_iso();
      if (!(l.bandwidth_gbps > 0)) throw std::runtime_error("the probe measured no bandwidth");
      if (!write_limits(path, key, id, l)) ml.note = "the probe could not be stored in " + path + ": it runs again next time";
      ml.limits = std::move(l);
    } catch (const std::exception& e) {
      ml.note = std::string("the machine's limits could not be probed: ") + e.what();
    }
    if (!c.refused.empty()) ml.note = "the cached probe " + path + " was refused: " + c.refused + "; probed again" +
                                      (ml.note.empty() ? "" : "; " + ml.note);
  }
  ml.this_ms = ms_since(t0);
  return ml;
}

void add_limit_metrics(json& metrics, const MachineLimits& ml, uint64_t bytes, bool bytes_declared,
                       std::optional<double> flops, double median_ms) {
  if (bytes_declared) metrics["bytes_declared"] = true;
  if (!ml.limits) {
    if (!ml.note.empty()) metrics["machine_limits"] = {{"unavailable", ml.note}};
    return;
  }
  const Limits& l = *ml.limits;
  char src[200];
  if (ml.cached) std::snprintf(src, sizeof src, "cached (probed %s in %.0f ms; read in %.1f ms)", l.measured_at.c_str(), l.probe_ms, ml.this_ms);
  else std::snprintf(src, sizeof src, "probed now (%.0f ms)", l.probe_ms);
  json m = {{"bandwidth_gbps", sig4(l.bandwidth_gbps)}, {"bandwidth_method", l.bandwidth_method}, {"source", src},
            {"identity", ml.identity_sha}};
  if (l.peak_bandwidth_gbps) m["peak_bandwidth_gbps"] = sig4(*l.peak_bandwidth_gbps);
  if (l.compute_gflops) {
    m["compute_gflops"] = sig4(*l.compute_gflops);
    m["compute_method"] = l.compute_method;
  }
  if (l.contended) m["contended"] = true;
  if (!ml.note.empty()) m["note"] = ml.note;
  metrics["machine_limits"] = m;
  if (!(median_ms > 0) || !std::isfinite(median_ms)) return;
  const double seconds = median_ms * 1e-3;
  if (bytes > 0) metrics["bandwidth_fraction"] = sig4(double(bytes) / seconds / 1e9 / l.bandwidth_gbps);
  if (flops && *flops > 0) {
    const double gflops = *flops / seconds / 1e9;
    metrics["gflops"] = sig4(gflops);
    if (l.compute_gflops && *l.compute_gflops > 0) metrics["compute_fraction"] = sig4(gflops / *l.compute_gflops);
  }
}

ClockSample cpu_clock_sample(const std::string& root) {
  ClockSample s;
  s.source = "cpufreq scaling_cur_freq";
  DIR* d = ::opendir(root.c_str());
  if (!d) {
    s.why = "not readable: no " + root;
    return s;
  }
  double sum = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() < 4 || n.compare(0, 3, "cpu") != 0 || n.find_first_not_of("0123456789", 3) != std::string::npos) continue;
    const std::string text = read_file(root + "/" + n + "/cpufreq/scaling_cur_freq");
    char* end = nullptr;
    const double khz = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !(khz > 0)) continue;
    const double mhz = khz / 1000;
    s.min_mhz = s.units ? std::min(s.min_mhz, mhz) : mhz;
    s.max_mhz = s.units ? std::max(s.max_mhz, mhz) : mhz;
    sum += mhz;
    ++s.units;
  }
  ::closedir(d);
  if (s.units == 0) {
    s.why = "not readable: no " + root + "/cpu*/cpufreq/scaling_cur_freq (the kernel exposes no CPU frequency here, as in many VMs)";
    return s;
  }
  s.readable = true;
  s.mean_mhz = sum / s.units;
  return s;
}

std::string clocks_evidence(json& metrics, const ClockSample& before, const ClockSample& after) {
  auto one = [](const ClockSample& s) {
    if (!s.readable) return json{{"readable", false}, {"why", s.why}};
    json j = {{"mhz", std::round(s.mean_mhz)}, {"units", s.units}};
    if (s.units > 1) {
      j["min_mhz"] = std::round(s.min_mhz);
      j["max_mhz"] = std::round(s.max_mhz);
    }
    if (s.max_clock_mhz) j["max_clock_mhz"] = std::round(*s.max_clock_mhz);
    if (s.max_clock_mhz || s.throttle_reasons) j["throttle_reasons"] = s.throttle_reasons;
    if (!s.throttle_words.empty()) j["throttle"] = s.throttle_words;
    return j;
  };
  json c;
  if (!before.readable && !after.readable) {
    c = {{"readable", false}, {"why", before.why.empty() ? after.why : before.why}};
  } else {
    c = {{"source", before.readable ? before.source : after.source}, {"before", one(before)}, {"after", one(after)}};
  }
  // A GPU that slowed itself (NVML's reasons, or its SM clock under 3/4 of its maximum, as nvbench
  // flags it) while the point was timed: the point is marked, never dropped.
  std::string why;
  for (const ClockSample* s : {&before, &after}) {
    if (!s->readable) continue;
    if (!s->throttle_words.empty()) why = s->throttle_words;
    else if (s->max_clock_mhz && *s->max_clock_mhz > 0 && s->mean_mhz < 0.75 * *s->max_clock_mhz) {
      char b[160];
      std::snprintf(b, sizeof b, "SM clock %.0f MHz, under 3/4 of its %.0f MHz maximum", s->mean_mhz, *s->max_clock_mhz);
      why = b;
    }
  }
  metrics["clocks"] = c;
  if (why.empty()) return "";
  metrics["clocks"]["throttled"] = true;
  return "timed while the GPU was throttled (" + why +
         "): the latency may be slower than this kernel on a cool, unthrottled device; rerun when the GPU is idle";
}

}  // namespace kopt::bench
