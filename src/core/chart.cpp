#include "kopt/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include "kopt/derived.hpp"

namespace kopt {
namespace {

// Number#toPrecision(p) for finite v > 0 or any finite v: fixed notation unless the exponent is
// below -6 or at least p, as JavaScript does.
std::string to_precision(double v, int p) {
  if (!std::isfinite(v)) return "NaN";
  if (v == 0) {
    std::string s = "0";
    if (p > 1) s += "." + std::string(p - 1, '0');
    return s;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
  std::string s(buf);
  const auto epos = s.find('e');
  const int e = std::stoi(s.substr(epos + 1));
  std::string mant = s.substr(0, epos);
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (e < -6 || e >= p) {
    out = digits.substr(0, 1);
    if (p > 1) out += "." + digits.substr(1);
    out += e >= 0 ? "e+" + std::to_string(e) : "e-" + std::to_string(-e);
  } else if (e >= 0) {
    out = digits.substr(0, e + 1);
    if (static_cast<int>(digits.size()) > e + 1) out += "." + digits.substr(e + 1);
  } else {
    out = "0." + std::string(-e - 1, '0') + digits;
  }
  return neg ? "-" + out : out;
}

// toPrecision(3) without trailing zeros: 2.50 → 2.5, 3.00 → 3.
std::string short_number(double v) {
  std::string s = to_precision(v, 3);
  if (s.find('e') != std::string::npos || s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

double r1(double v) { return std::round(v * 10) / 10; }

bool bad_point(const Iteration& it) {
  return it.correct == std::optional<bool>(false) || it.rewardHack || it.error.has_value() ||
         it.evaluatorFailed || it.compiled == std::optional<bool>(false);
}

Seq seq_of(const json& raw) {
  Seq s;
  s.raw = raw;
  s.num = as_number(raw).value_or(std::numeric_limits<double>::quiet_NaN());
  return s;
}

std::optional<std::string> str_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it != o.end() && it->is_string()) return it->get<std::string>();
  return std::nullopt;
}
std::optional<bool> bool_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it != o.end() && it->is_boolean()) return it->get<bool>();
  return std::nullopt;
}
std::optional<double> num_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it == o.end()) return std::nullopt;
  return as_number(*it);
}

}  // namespace

ChartOptions ChartOptions::from_json(const json& j) {
  ChartOptions o;
  if (!j.is_object()) return o;
  if (auto w = num_of(j, "width"); w && std::isfinite(*w)) o.width = std::clamp(*w, 240.0, 4000.0);
  if (auto h = num_of(j, "height"); h && std::isfinite(*h)) o.height = std::clamp(*h, 160.0, 2000.0);
  if (auto b = num_of(j, "budget"); b && *b >= 1 && *b <= 1e9) o.budget = static_cast<long long>(*b);
  return o;
}

std::string format_latency(double ms) {
  if (ms < 1) return to_precision(ms * 1000, 3) + "µs";
  if (ms < 1000) return to_precision(ms, 4) + "ms";
  return to_precision(ms / 1000, 3) + "s";
}

json chart_json(const Series& s, const ChartOptions& opt) {
  const double W = opt.width, H = opt.height;
  const double left = 66, right = W - 22, top = 22, bottom = H - 56;
  const double baseline = bottom + 16, profile_row = bottom + 32, xlabel_row = H - 6;
  const auto& its = s.iterations;
  const std::size_t n = its.size();

  json out = json::object();
  out["width"] = W;
  out["height"] = H;
  out["plot"] = {{"left", left}, {"top", top}, {"right", right}, {"bottom", bottom}};
  out["baselineY"] = baseline;
  out["profileY"] = profile_row;

  const std::optional<double> ref = reference_latency(s);
  const bool speedup_mode = ref.has_value() && *ref > 0;

  // Axis value of a measured point: higher is faster.
  auto value_of = [&](double lat) { return speedup_mode ? *ref / lat : 1.0 / lat; };

  double lat_min = std::numeric_limits<double>::infinity(), lat_max = 0;
  for (const auto& it : its) {
    if (it.latencyMs && *it.latencyMs > 0 && std::isfinite(*it.latencyMs)) {
      lat_min = std::min(lat_min, *it.latencyMs);
      lat_max = std::max(lat_max, *it.latencyMs);
    }
  }
  const bool any_measured = lat_max > 0;
  const bool log_scale = any_measured && lat_max / lat_min > 20;
  out["mode"] = speedup_mode ? "speedup" : "latency";
  out["scale"] = log_scale ? "log" : "linear";
  out["empty"] = n == 0;

  // Value domain, padded so no point sits on the frame.
  double vlo = 0, vhi = 1;
  if (any_measured) {
    vlo = value_of(lat_max);
    vhi = value_of(lat_min);
    if (log_scale) {
      vlo /= 1.18;
      vhi *= 1.18;
    } else {
      double span = vhi - vlo;
      if (span <= vhi * 1e-9) span = std::max(vhi * 0.2, 1e-12);
      vlo = std::max(0.0, vlo - span * 0.12);
      vhi = vhi + span * 0.12;
    }
  }
  auto tr = [&](double v) { return log_scale ? std::log10(v) : v; };
  const double tlo = tr(vlo), thi = tr(vhi);
  auto y_of_value = [&](double v) {
    const double t = (tr(v) - tlo) / (thi - tlo == 0 ? 1 : thi - tlo);
    return r1(bottom - t * (bottom - top));
  };

  const double pad = n > 1 ? 14 : 0;
  auto x_of = [&](double i) {
    if (n <= 1) return r1((left + right) / 2);
    return r1(left + pad + (right - left - 2 * pad) * i / static_cast<double>(n - 1));
  };

  // Points and the line through the successful ones.
  json points = json::array();
  std::string line;
  line.reserve(n * 14);
  char buf[64];
  for (std::size_t i = 0; i < n; ++i) {
    const auto& it = its[i];
    json p = json::object();
    p["index"] = i;
    p["seq"] = it.seq.raw;
    const double x = x_of(static_cast<double>(i));
    p["x"] = x;
    const bool measured = it.latencyMs && *it.latencyMs > 0 && std::isfinite(*it.latencyMs);
    if (measured) {
      const double v = value_of(*it.latencyMs);
      const double y = y_of_value(v);
      p["y"] = y;
      const bool ok = !bad_point(it) && it.correct == std::optional<bool>(true);
      p["kind"] = ok ? "ok" : "failed";
      p["label"] = format_latency(*it.latencyMs);
      if (speedup_mode) {
        const double sp = it.speedup && *it.speedup > 0 ? *it.speedup : v;
        p["speedupLabel"] = "×" + short_number(sp);
      }
      if (ok) {
        std::snprintf(buf, sizeof buf, "%s%s %s", line.empty() ? "M" : " L", js_number(x).c_str(), js_number(y).c_str());
        line += buf;
      }
    } else {
      p["y"] = baseline;
      p["kind"] = "unmeasured";
      if (it.pending) p["pending"] = true;
      if (bad_point(it)) p["failed"] = true;
    }
    points.push_back(std::move(p));
  }
  out["points"] = std::move(points);
  out["line"] = line;

  // Y ticks: nice values of the displayed quantity (×speedup or latency), spaced at least 30 units.
  json ticks = json::array();
  if (any_measured) {
    std::vector<double> cands;  // displayed quantity values
    double qlo, qhi;            // range of the displayed quantity
    if (speedup_mode) {
      qlo = vlo;
      qhi = vhi;
    } else {
      qlo = 1.0 / vhi;  // fastest latency
      qhi = vlo > 0 ? 1.0 / vlo : lat_max * 10;
    }
    static const double kMant[] = {1, 5, 2, 2.5, 1.5, 3, 4, 6, 8, 1.2, 1.4, 1.6, 1.8, 2.2, 2.4, 2.6, 2.8,
                                   3.5, 4.5, 7, 9, 1.1, 1.3, 1.7, 1.9};
    // Decades from a thousandth of the top (a linear domain may start at 0).
    const int k0 = static_cast<int>(std::floor(std::log10(std::max({qlo, qhi * 1e-3, 1e-300})))) - 1;
    const int k1 = static_cast<int>(std::ceil(std::log10(std::max(qhi, 1e-300)))) + 1;
    std::vector<double> chosen_y;
    std::vector<std::pair<double, double>> chosen;  // (y, quantity)
    for (double m : kMant) {
      for (int k = k0; k <= k1; ++k) {
        const double q = m * std::pow(10.0, k);
        if (q < qlo || q > qhi || q < qhi * 1e-3) continue;
        const double v = speedup_mode ? q : 1.0 / q;
        const double y = y_of_value(v);
        if (y < top - 0.5 || y > bottom + 0.5) continue;
        bool clear = true;
        for (double cy : chosen_y)
          if (std::fabs(cy - y) < 30) clear = false;
        if (!clear) continue;
        chosen_y.push_back(y);
        chosen.emplace_back(y, q);
      }
      if (chosen.size() >= 7) break;
    }
    if (speedup_mode && !log_scale) {
      // Linear speedup axis: evenly spaced round steps (×0, ×5, ×10 … or ×1.1, ×1.2 …).
      chosen.clear();
      const double raw = (qhi - qlo) / 6;
      if (raw > 0) {
        const double mag = std::pow(10.0, std::floor(std::log10(raw)));
        double step = mag * 10;
        for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
          if (m * mag >= raw) {
            step = m * mag;
            break;
          }
        for (double q = std::ceil(qlo / step) * step; q <= qhi + step * 1e-9; q += step) {
          const double qq = std::round(q / step) * step;
          const double y = y_of_value(qq);
          if (y >= top - 0.5 && y <= bottom + 0.5 && qq >= 0) chosen.emplace_back(y, qq);
        }
      }
    }
    std::sort(chosen.begin(), chosen.end(), [](auto a, auto b) { return a.first > b.first; });
    for (auto [y, q] : chosen)
      ticks.push_back({{"y", y}, {"label", speedup_mode ? "×" + short_number(q) : format_latency(q)}});
  }
  out["ticks"] = std::move(ticks);

  // X ticks: evaluation numbers (1-based), at most about ten.
  json xticks = json::array();
  if (n > 0) {
    std::size_t step = 1;
    static const std::size_t kSteps[] = {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000};
    for (std::size_t st : kSteps) {
      step = st;
      if (n / st <= 10) break;
    }
    for (std::size_t k = 1; k <= n; k += (k == 1 && step > 1 ? step - 1 : step))
      xticks.push_back({{"x", x_of(static_cast<double>(k - 1))}, {"label", "#" + std::to_string(k)}});
  }
  out["xTicks"] = std::move(xticks);

  // Markers.
  json markers = json::object();
  const auto& pts = out["points"];
  if (s.bestIndex && *s.bestIndex < n && pts[*s.bestIndex]["kind"] != "unmeasured") {
    const auto& bp = pts[*s.bestIndex];
    markers["best"] = {{"index", *s.bestIndex}, {"x", bp["x"]}, {"y", bp["y"]}};
    const auto& best = its[*s.bestIndex];
    std::string label = format_latency(*best.latencyMs);
    if (speedup_mode) label = bp["speedupLabel"].get<std::string>() + " · " + label;
    out["bestLine"] = {{"y", bp["y"]}, {"label", label}};
  } else {
    markers["best"] = nullptr;
    out["bestLine"] = nullptr;
  }
  json fin = json::array();
  for (std::size_t i = 0; i < n; ++i)
    if (its[i].finalized) fin.push_back({{"index", i}, {"x", pts[i]["x"]}, {"y", pts[i]["y"]}});
  markers["finalized"] = std::move(fin);
  json prof = json::array();
  for (const auto& ps : s.profileSeqs) {
    long long before = -1;
    for (std::size_t i = 0; i < n; ++i)
      if (its[i].seq.num < ps.num) before = static_cast<long long>(i);
    double x;
    if (n == 0) {
      x = r1((left + right) / 2);
    } else if (before < 0) {
      x = r1(std::max(left + 2, x_of(0) - (n > 1 ? pad * 0.6 : 8)));
    } else if (static_cast<std::size_t>(before) + 1 >= n) {
      x = r1(std::min(right - 2, x_of(static_cast<double>(before)) + (n > 1 ? pad * 0.6 : 8)));
    } else {
      x = r1((x_of(static_cast<double>(before)) + x_of(static_cast<double>(before + 1))) / 2);
    }
    prof.push_back({{"seq", ps.raw}, {"x", x}});
  }
  markers["profiled"] = std::move(prof);
  out["markers"] = std::move(markers);

  // Denominator note and drift (J-3, J-4).
  if (speedup_mode)
    out["reference"] = {{"latencyMs", *ref}, {"label", format_latency(*ref)}};
  else
    out["reference"] = nullptr;
  if (auto d = reference_drift(s)) {
    out["drift"] = {{"min", d->min},
                    {"max", d->max},
                    {"ratio", d->ratio},
                    {"count", d->count},
                    {"minLabel", format_latency(d->min)},
                    {"maxLabel", format_latency(d->max)}};
  } else {
    out["drift"] = nullptr;
  }
  out["xLabelY"] = xlabel_row;

  // Phases (M-5) and the counts the summary shows.
  const auto phases = opt.fixedBudget ? evaluation_phases_fixed(s, opt.budget) : evaluation_phases(s, opt.budget);
  long long c_opt = 0, c_over = 0, c_wrap = 0;
  for (std::size_t i = 0; i < phases.size() && i < n; ++i) {
    if (its[i].pending) continue;
    if (phases[i] == "wrap-up") ++c_wrap;
    else if (phases[i] == "over-budget") ++c_over;
    else ++c_opt;
  }
  out["phases"] = phases;
  // The loop message in force for each row (its supervision column), by the same rule as the report.
  json row_rounds = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = round_in_force(s, its[i].seq.num);
    row_rounds.push_back(r ? json(*r) : json(nullptr));
  }
  out["rowRounds"] = std::move(row_rounds);
  out["counts"] = {{"optimization", c_opt}, {"overBudget", c_over}, {"wrapUp", c_wrap}};

  // The final number: the plugin's replay of the finalized command when there is one.
  std::optional<std::size_t> fin_replay, fin_other;
  for (std::size_t i = 0; i < n; ++i) {
    if (!its[i].finalized || !its[i].latencyMs) continue;
    if (its[i].is_replay()) fin_replay = i;
    else fin_other = i;
  }
  if (auto f = fin_replay ? fin_replay : fin_other) {
    out["final"] = {{"index", *f},
                    {"latencyMs", *its[*f].latencyMs},
                    {"label", format_latency(*its[*f].latencyMs)},
                    {"remeasured", fin_replay.has_value()}};
  } else {
    out["final"] = nullptr;
  }
  return out;
}

json chart_json_from_wire(const json& series, const ChartOptions& opt) {
  Series s;
  ChartOptions o = opt;
  if (series.is_object()) {
    if (auto it = series.find("iterations"); it != series.end() && it->is_array()) {
      for (const auto& w : *it) {
        if (!w.is_object()) continue;
        Iteration p;
        p.seq = seq_of(w.contains("seq") ? w["seq"] : json());
        p.tool = str_of(w, "tool").value_or("");
        p.channel = str_of(w, "channel");
        p.compiled = bool_of(w, "compiled");
        p.correct = bool_of(w, "correct");
        p.latencyMs = num_of(w, "latencyMs");
        p.speedup = num_of(w, "speedup");
        p.error = str_of(w, "error");
        p.rewardHack = bool_of(w, "rewardHack").value_or(false);
        p.pending = bool_of(w, "pending").value_or(false);
        p.finalized = bool_of(w, "finalized").value_or(false);
        p.evaluatorFailed = bool_of(w, "evaluatorFailed").value_or(false);
        s.iterations.push_back(std::move(p));
      }
    }
    if (auto it = series.find("profileSeqs"); it != series.end() && it->is_array())
      for (const auto& v : *it) s.profileSeqs.push_back(seq_of(v));
    if (auto it = series.find("rounds"); it != series.end() && it->is_array()) {
      for (const auto& w : *it) {
        if (!w.is_object()) continue;
        Round r;
        r.seq = seq_of(w.contains("seq") ? w["seq"] : json());
        if (auto v = num_of(w, "round")) r.round = static_cast<long long>(*v);
        r.wrapUp = bool_of(w, "wrapUp").value_or(false);
        r.audit = bool_of(w, "audit").value_or(false);
        if (auto v = num_of(w, "budget"); v && *v >= 1 && *v <= 1e9) r.budget = static_cast<long long>(*v);
        s.rounds.push_back(std::move(r));
      }
    }
    if (auto b = num_of(series, "bestIndex"); b && *b >= 0 && *b < static_cast<double>(s.iterations.size()))
      s.bestIndex = static_cast<std::size_t>(*b);
  }
  return chart_json(s, o);
}

}  // namespace kopt
