// The comparison as the tab and the report read it: the table's rows, the rule's verdict and the
// overlay's geometry (compare.hpp compare_json).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "kopt/chart.hpp"
#include "kopt/compare.hpp"
#include "kopt/labels.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

// Eight colours a reader tells apart on a light and a dark page (after Okabe & Ito's palette,
// darkened where a light background washed them out); each run keeps its place's colour.
const char* const kComparePalette[kCompareMax] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                                  "#7b61ff", "#b08800", "#56b4e9", "#8c564b"};

namespace {

double r1(double v) { return std::round(v * 10) / 10; }

// `label`: the point's as summarize_run made it (its interval with it), else the latency alone.
json latency_item(std::size_t index, double latency, const std::string& label) {
  return json{{"index", index}, {"latencyMs", latency}, {"label", label.empty() ? format_latency(latency) : label}};
}

json run_json(const RunSummary& r, std::size_t place) {
  json o = json::object();
  o["id"] = r.id;
  o["color"] = kComparePalette[place % kCompareMax];
  if (!r.error.empty()) o["error"] = r.error;
  if (r.loading) o["loading"] = true;
  if (r.facts.title) o["title"] = *r.facts.title;
  o["name"] = compare_run_name(r.facts.title && !r.facts.title->empty() ? *r.facts.title : r.id, place);
  o["models"] = r.facts.models;
  o["supervisors"] = r.facts.supervisors;
  if (r.facts.firstTime) o["startMs"] = *r.facts.firstTime;
  if (r.facts.lastTime) o["endMs"] = *r.facts.lastTime;
  o["evaluations"] = r.evaluations;
  o["used"] = r.used;
  if (r.budget) o["budget"] = *r.budget;
  if (r.best) {
    json b = latency_item(*r.best, r.latencies[*r.best], r.bestLabel);
    if (r.bestSpeedup) b["speedup"] = *r.bestSpeedup, b["speedupLabel"] = speedup_label(*r.bestSpeedup);
    o["best"] = std::move(b);
  }
  if (r.final) {
    json f = latency_item(r.final->index, r.final->latency, r.finalLabel);
    f["remeasured"] = r.final->remeasured;
    if (r.final->self) {
      const double self = r.latencies.size() > *r.final->self ? r.latencies[*r.final->self] : std::nan("");
      if (std::isfinite(self)) f["selfLatencyMs"] = self, f["selfLabel"] = format_latency(self);
      if (r.finalSelfPlugin) f["selfPlugin"] = true;
      f["gapPct"] = r.final->gapPct;
      f["gapFlag"] = r.final->gapFlag;
    }
    o["final"] = std::move(f);
  }
  if (r.finalClaim && r.finalClaim->refused) {
    const Words w = final_refusal_words(*r.finalClaim->refused);
    o["finalRefused"] = json{{"reason", *r.finalClaim->refused}, {"text", {{"zh", w.zh}, {"en", w.en}}}};
  }
  if (r.nearBest) o["nearBest"] = latency_item(*r.nearBest, r.latencies[*r.nearBest], r.nearBestLabel);
  if (r.wallToBestMs) o["wallToBestMs"] = *r.wallToBestMs, o["wallToBestLabel"] = duration_label(*r.wallToBestMs);
  if (r.reference) o["reference"] = json{{"latencyMs", *r.reference}, {"label", format_latency(*r.reference)}};
  if (r.drift)
    o["drift"] = json{{"ratio", r.drift->ratio}, {"count", r.drift->count}, {"minLabel", format_latency(r.drift->min)},
                      {"maxLabel", format_latency(r.drift->max)}};
  o["referenceHashes"] = r.referenceHashes;
  return o;
}

}  // namespace

std::string compare_text(const std::vector<const RunSummary*>& runs, const CompareOptions& opt) {
  const double W = opt.width, H = opt.height;
  const double left = 66, right = W - 22, top = 22, bottom = H - 40, xlabel_row = H - 12;
  auto drawn = [](const RunSummary& r) { return r.error.empty() && !r.loading && !r.points.empty(); };
  // The runs drawn: read ones with measured points. On a speedup axis every one has a reference.
  std::size_t n = 0;
  bool any_reference = false;
  for (const RunSummary* r : runs) {
    if (!r->error.empty() || r->loading) continue;
    n = std::max(n, r->evaluations);
    any_reference = any_reference || (r->reference && !r->points.empty());
  }
  const Comparability rule = comparability(runs);
  const bool speedup = rule.speedup && any_reference;
  // A point's axis value, higher is faster: ×speedup against its run's own pooled reference, or
  // 1/latency; the extremes come from each run's fastest and slowest point (O(runs)).
  auto value_of = [&](const RunSummary& r, double latency) { return speedup ? *r.reference / latency : 1.0 / latency; };
  double vmin = std::numeric_limits<double>::infinity(), vmax = 0;
  for (const RunSummary* r : runs) {
    if (!drawn(*r)) continue;
    vmin = std::min(vmin, value_of(*r, r->slowest)), vmax = std::max(vmax, value_of(*r, r->fastest));
  }
  const bool any = vmax > 0;
  const bool log_scale = any && vmax / vmin > 20;
  // The value domain, padded so no point sits on the frame (log: eighths of a decade).
  double lo = 0, hi = 1;
  if (any && log_scale) {
    lo = std::floor(std::log10(vmin / 1.18) * 8) / 8;
    hi = std::ceil(std::log10(vmax * 1.18) * 8) / 8;
  } else if (any) {
    double span = vmax - vmin;
    if (span <= vmax * 1e-3) span = vmax * 0.2;
    lo = std::max(0.0, vmin - span * 0.12);
    hi = vmax + span * 0.12;
  }
  // The frame: a point of axis value v (the value, or its log10 on a log axis) at y0 + dy·v; index i at x0 + dx·i.
  const double dy = -(bottom - top) / (hi - lo), y0 = bottom - lo * dy;
  const double pad = n > 1 ? 14 : 0;
  const double dx = n > 1 ? (right - left - 2 * pad) / static_cast<double>(n - 1) : 0;
  const double x0 = n > 1 ? left + pad : (left + right) / 2;
  auto y_of = [&](double v) { return r1(y0 + dy * (log_scale ? std::log10(v) : v)); };
  auto x_of = [&](std::size_t i) { return r1(x0 + dx * static_cast<double>(i)); };

  // The short parts as small trees; the points (O(points)) as each run's text, written with its row.
  json sessions = json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) sessions.push_back(run_json(*runs[i], i));
  // Each reason with its words in both languages: the tab shows them as the comparison page does.
  json reasons = json::array();
  for (const auto& why : rule.reasons) {
    json j = {{"code", why.code}, {"sessions", why.sessions}};
    if (why.ratio > 0) j["ratio"] = why.ratio;
    j["text"] = {{"zh", compare_reason_text(j, sessions, true)}, {"en", compare_reason_text(j, sessions, false)}};
    reasons.push_back(std::move(j));
  }
  json xticks = json::array();
  if (n > 0)
    for (std::size_t k : evaluation_ticks(n)) {
      std::string label(1, '#');  // appended: GCC 12 misreports `"#" + to_string(k)` (-Wrestrict)
      label += std::to_string(k);
      xticks.push_back({{"x", x_of(k - 1)}, {"label", label}});
    }
  json ticks = json::array();
  if (any) {
    // The displayed quantity: ×speedup, or the latency (1/value) from the fastest at the top.
    const double vlo = log_scale ? std::pow(10.0, lo) : lo, vhi = log_scale ? std::pow(10.0, hi) : hi;
    const double qlo = speedup ? vlo : 1.0 / vhi, qhi = speedup ? vhi : (vlo > 0 ? 1.0 / vlo : 10.0 / vmin);
    for (auto [y, q] : quantity_ticks(qlo, qhi, speedup, log_scale, [&](double q) { return y_of(speedup ? q : 1.0 / q); }, top, bottom))
      ticks.push_back({{"y", y}, {"label", speedup ? "×" + short_number(q) : format_latency(q)}});
  }
  json head = json::object();
  head["width"] = W;
  head["height"] = H;
  head["plot"] = {{"left", left}, {"top", top}, {"right", right}, {"bottom", bottom}};
  head["xLabelY"] = xlabel_row;
  head["empty"] = !any;
  head["xTicks"] = std::move(xticks);
  head["ticks"] = std::move(ticks);
  head["frame"] = {{"x0", x0}, {"dx", dx}, {"y0", y0}, {"dy", dy}};

  std::string o;
  o += "{\"kind\":\"kopt-compare\",\"max\":" + std::to_string(kCompareMax) + ",\"axis\":\"";
  o += speedup ? "speedup" : "latency";
  o += "\",\"scale\":\"";
  o += log_scale ? "log" : "linear";
  o += "\",\"reasons\":";
  js_stringify_to(o, reasons);
  o += ",\"sessions\":";
  js_stringify_to(o, sessions);
  o += ",\"chart\":";
  js_stringify_to(o, head);
  o.pop_back();  // head's closing brace: the series follow
  o += ",\"series\":[";
  bool first_series = true;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunSummary& r = *runs[i];
    if (!drawn(r)) continue;
    if (!first_series) o += ',';
    first_series = false;
    o += "{\"session\":" + std::to_string(i) + ",\"color\":\"" + kComparePalette[i % kCompareMax] + "\"";
    if (speedup) o += ",\"reference\":" + js_number(*r.reference);
    o += ",\"points\":[";
    o += r.pointsText;
    o += ']';
    if (r.best) o += ",\"best\":{\"index\":" + std::to_string(*r.best) + ",\"x\":" + js_number(x_of(*r.best)) + ",\"y\":" + js_number(y_of(value_of(r, r.latencies[*r.best]))) + "}";
    o += '}';
  }
  o += "]}}";
  return o;
}

json compare_json(const std::vector<RunSummary>& runs, const CompareOptions& opt) {
  std::vector<const RunSummary*> at;
  for (const auto& r : runs) at.push_back(&r);
  auto j = parse_json(compare_text(at, opt));
  return j ? std::move(*j) : json();
}

namespace {

const Word kWhy[] = {
    {"no-reference", "{a} 没有报告加速比，没有可比的参考", "{a} reports no speedup: no reference to compare against"},
    {"drift", "{a} 自己的隐含参考耗时相差 {pct}%（漂移，J-4）", "{a}'s own implied references drift by {pct}% (J-4)"},
    {"hash-mixed", "{a} 测量时用过不止一个参考文件", "{a} measured against more than one reference file"},
    {"hash-differs", "{a} 与 {b} 的参考文件不同（SHA-256）", "{a} and {b} measured against different reference files (SHA-256)"},
    {"references-differ", "{a} 与 {b} 的参考耗时相差 {pct}%（{ra} 对 {rb}）",
     "the references of {a} and {b} differ by {pct}% ({ra} vs {rb})"},
};

const json& member(const json& o, const char* k) {
  static const json kNull;
  if (!o.is_object()) return kNull;
  auto it = o.find(k);
  return it == o.end() ? kNull : *it;
}
std::string text_at(const json& o, const char* k) {
  const json& v = member(o, k);
  return v.is_string() ? v.get<std::string>() : std::string();
}

}  // namespace

std::string compare_run_name(const std::string& title_or_id, std::size_t place) {
  std::string name(1, static_cast<char>('A' + (place % 26)));  // A, B, C … as in the legend
  name += " · ";
  name += title_or_id;
  return name;
}

std::string compare_reason_text(const json& why, const json& sessions, bool zh) {
  const json& which = member(why, "sessions");
  auto run = [&](std::size_t k) -> const json* {
    if (!which.is_array() || k >= which.size() || !which[k].is_number_unsigned()) return nullptr;
    const std::size_t i = which[k].get<std::size_t>();
    return sessions.is_array() && i < sessions.size() ? &sessions[i] : nullptr;
  };
  auto name = [&](std::size_t k) { return run(k) ? text_at(*run(k), "name") : std::string("?"); };
  auto ref = [&](std::size_t k) { return run(k) ? text_at(member(*run(k), "reference"), "label") : std::string("?"); };
  const json& ratio = member(why, "ratio");
  const double r = ratio.is_number() ? ratio.get<double>() : 1;
  const std::string pct = std::to_string(static_cast<long long>(std::llround((r - 1) * 100)));
  const std::string code = text_at(why, "code");
  std::string s;
  for (const auto& w : kWhy)
    if (code == w.key) s = zh ? w.zh : w.en;
  for (const auto& [k, v] : {std::pair<std::string_view, std::string>{"{a}", name(0)}, {"{b}", name(1)}, {"{pct}", pct},
                             {"{ra}", ref(0)}, {"{rb}", ref(1)}})
    for (std::size_t p = s.find(k); p != std::string::npos; p = s.find(k, p + v.size())) s.replace(p, k.size(), v);
  return s;
}

}  // namespace kopt
