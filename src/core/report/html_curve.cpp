// The HTML report's curve card: the evaluation curve as inline SVG from the core's chart geometry,
// the phase chips and the finalize gap.
#include <cmath>
#include <string>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "report_parts.hpp"

namespace kopt::report_parts {
namespace {

void svg_curve(std::string& o, const Report& r, ReportLang lang) {
  const json& c = r.chart;
  const auto& its = r.in.series.iterations;
  const double W = jnum(c, "width", 1000), H = jnum(c, "height", 320);
  const json& P = c["plot"];
  const double L = jnum(P, "left"), R = jnum(P, "right"), Tp = jnum(P, "top"), B = jnum(P, "bottom");
  const json& pts = c["points"];
  const ChartFrame f = ChartFrame::of(c);
  const json& phases = c["phases"];
  const bool speedup = jstr(c, "mode") == "speedup";

  o += "<svg class=\"curve\" data-kopt=\"chart\" viewBox=\"0 0 " + num(W) + " " + num(H) +
       "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" + html_escape(T(lang, "curve.title")) +
       "\">\n";

  // Phase bands: runs of over-budget / wrap-up evaluations, edges halfway between neighbouring points.
  const std::size_t n = pts.size();
  for (std::size_t i = 0; i < n && i < phases.size();) {
    const std::string ph = phases[i].get<std::string>();
    std::size_t j = i;
    while (j + 1 < n && j + 1 < phases.size() && phases[j + 1] == ph) ++j;
    if (ph != "optimization") {
      const double x0 = i == 0 ? L : (f.x(i - 1) + f.x(i)) / 2;
      const double x1 = j + 1 >= n ? R : (f.x(j) + f.x(j + 1)) / 2;
      const bool over = ph == "over-budget";
      o += "<rect class=\"" + std::string(over ? "band-over" : "band-wrap") + "\" data-kopt=\"band-" + ph + "\" x=\"" +
           num(x0) + "\" y=\"" + num(Tp) + "\" width=\"" + num(std::max(0.0, x1 - x0)) + "\" height=\"" + num(B - Tp) +
           "\"/>";
      if (x1 - x0 > 40)
        o += "<text class=\"band-label\" x=\"" + num(x0 + 6) + "\" y=\"" + num(Tp + 13) + "\">" +
             html_escape(word_alone(lang, over ? "phase.over-budget" : "phase.wrap-up")) + "</text>";
      o += "\n";
    }
    i = j + 1;
  }

  // Frame, grid and axis labels.
  o += "<rect class=\"frame\" x=\"" + num(L) + "\" y=\"" + num(Tp) + "\" width=\"" + num(R - L) + "\" height=\"" +
       num(B - Tp) + "\"/>\n";
  for (const auto& t : c["ticks"]) {
    // chart_json can place a tick at ~0 ("1.00e-301") when a padded linear domain starts at 0.
    if (jstr(t, "label").find("e-") != std::string::npos) continue;
    const double y = jnum(t, "y");
    o += "<line class=\"grid\" x1=\"" + num(L) + "\" x2=\"" + num(R) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
         "\"/><text class=\"axis\" x=\"" + num(L - 8) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
         html_escape(jstr(t, "label")) + "</text>\n";
  }
  for (const auto& t : c["xTicks"])
    o += "<text class=\"axis\" x=\"" + num(jnum(t, "x")) + "\" y=\"" + num(jnum(c, "xLabelY")) +
         "\" text-anchor=\"middle\">" + html_escape(jstr(t, "label")) + "</text>\n";
  if (jstr(c, "scale") == "log")
    // At the right end: the best label sits at the left, near the top when the best is the highest value.
    o += "<text class=\"axis\" data-kopt=\"log-scale\" x=\"" + num(R) + "\" y=\"" + num(Tp - 8) +
         "\" text-anchor=\"end\" font-style=\"italic\">" + html_escape(T(lang, "curve.log")) + "</text>\n";
  bool any_unmeasured = false;
  for (const auto& p : pts) any_unmeasured |= jstr(p, "kind") == "unmeasured";
  const double baseY = jnum(c, "baselineY");
  if (any_unmeasured)
    o += "<line class=\"baseline\" x1=\"" + num(L) + "\" x2=\"" + num(R) + "\" y1=\"" + num(baseY) + "\" y2=\"" +
         num(baseY) + "\"/><text class=\"axis\" x=\"" + num(L - 8) + "\" y=\"" + num(baseY + 4) +
         "\" text-anchor=\"end\">" + html_escape(T(lang, "curve.unmeasured")) + "</text>\n";

  // Best line, the curve, the points.
  if (c["bestLine"].is_object()) {
    const double y = jnum(c["bestLine"], "y");
    o += "<line class=\"bestline\" x1=\"" + num(L) + "\" x2=\"" + num(R) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
         "\"/><text class=\"bestlabel\" x=\"" + num(L + 6) + "\" y=\"" + num(y - 6) + "\">" +
         html_escape(std::string(T(lang, "axis.best")) + " " + jstr(c["bestLine"], "label")) + "</text>\n";
  }
  if (const std::string line = jstr(c, "line"); !line.empty())
    // In frame units, under the frame's transform; the stroke keeps its width.
    o += "<g transform=\"matrix(" + num(f.dx) + " 0 0 " + num(f.dy) + " " + num(f.x0) + " " + num(f.y0) +
         ")\"><path class=\"line\" vector-effect=\"non-scaling-stroke\" d=\"" + html_escape(line) + "\"/></g>\n";
  {
    // Each point's interval (spec S) as a whisker: one path in frame units (`ci` is [v at the interval's low
    // latency, v at its high one]) under the line's transform, thin and faint as the tab draws it.
    std::string d;
    std::size_t with_ci = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const json& ci = pts[i].is_object() && pts[i].contains("ci") ? pts[i]["ci"] : json();
      if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) continue;
      d += "M" + std::to_string(i) + " " + num(ci[0].get<double>()) + "L" + std::to_string(i) + " " + num(ci[1].get<double>());
      ++with_ci;
    }
    if (with_ci)
      o += "<g data-kopt=\"whiskers\" data-n=\"" + std::to_string(with_ci) + "\" transform=\"matrix(" + num(f.dx) + " 0 0 " +
           num(f.dy) + " " + num(f.x0) + " " + num(f.y0) + ")\"><path class=\"whisker\" vector-effect=\"non-scaling-stroke\" d=\"" +
           d + "\"/></g>\n";
  }
  o += "<g data-kopt=\"points\" data-n=\"" + std::to_string(n) + "\">\n";
  for (std::size_t i = 0; i < n; ++i) {
    const json& p = pts[i];
    const std::string kind = jstr(p, "kind");
    std::string cls = kind;
    double rad = 4;
    if (kind == "unmeasured") {
      rad = 3.5;
      if (p.value("pending", false))
        cls = "pending";
      else if (p.value("failed", false))
        cls = "bad";
    }
    // Appended, not `"#" + to_string(…)`: GCC 12 misreports that operator+ as an overlapping memcpy (-Wrestrict).
    std::string tip(1, '#');
    tip += std::to_string(i + 1);
    if (i < r.rows.size()) tip += " · " + std::string(T(lang, ("verdict." + r.rows[i].verdict).c_str()));
    if (auto lab = jstr(p, "label"); !lab.empty()) tip += " · " + lab;
    if (auto ci = jstr(p, "ciLabel"); !ci.empty()) tip += " [" + ci + "]";
    if (i < its.size() && its[i].speedup)
      tip += " · " + speedup_label(*its[i].speedup);
    else if (auto sl = jstr(p, "speedupLabel"); speedup && !sl.empty())
      tip += " · " + sl;
    if (i < r.rows.size()) tip += " · " + std::string(T(lang, ("trust." + r.rows[i].trust).c_str()));
    o += "<a href=\"#e" + std::to_string(i + 1) + "\"><circle class=\"pt " + cls + "\" data-kopt=\"point\" cx=\"" +
         num(std::round(f.x(i) * 10) / 10) + "\" cy=\"" + num(std::round(f.y(p) * 10) / 10) + "\" r=\"" + num(rad) + "\"><title>" + html_escape(tip) +
         "</title></circle></a>\n";
  }
  o += "</g>\n";
  const json& m = c["markers"];
  if (m["best"].is_object())
    // the tab's marker: ★ just above the point
    o += "<text class=\"beststar\" data-kopt=\"best\" x=\"" + num(jnum(m["best"], "x")) + "\" y=\"" +
         num(jnum(m["best"], "y") - 9) + "\" text-anchor=\"middle\">★</text>\n";
  for (const auto& f : m["finalized"])
    o += "<text class=\"flag\" data-kopt=\"finalized\" x=\"" + num(jnum(f, "x") + 7) + "\" y=\"" +
         num(jnum(f, "y") - 7) + "\">⚑</text>\n";
  for (const auto& pr : m["profiled"])
    o += "<text class=\"prof\" data-kopt=\"profiled\" x=\"" + num(jnum(pr, "x")) + "\" y=\"" +
         num(jnum(c, "profileY") + 4) + "\" text-anchor=\"middle\">▲</text>\n";
  o += "</svg>\n";
}

// ───────────────────────────── the page ─────────────────────────────

// The core's finalize gap (chart.final.selfReported / gapPct / gapFlag), as the tab shows it.
std::string final_gap(const json& fin, const Series& s, ReportLang lang) {
  if (!fin.contains("selfReported") || !fin["selfReported"].is_object()) return "";
  // The first figure of a plugin-measured point is the plugin's own, not the agent's (DV-13).
  const std::size_t first = static_cast<std::size_t>(jnum(fin["selfReported"], "index"));
  const bool plugin = first < s.iterations.size() && s.iterations[first].plugin;
  const bool flag = fin.value("gapFlag", false);
  const double pct = jnum(fin, "gapPct");
  std::string p = (pct > 0 ? "+" : "") + num(pct) + "%";
  return std::string(" · <span data-kopt=\"final-gap\" data-flag=\"") + (flag ? "1\" class=\"nre\">⚠ " : "0\">") +
         fill(T(lang, plugin ? "chip.gap.plugin" : "chip.gap"), {{"{self}", html_escape(jstr(fin["selfReported"], "label"))}, {"{pct}", p}}) +
         "</span>";
}

}  // namespace

void chips(std::string& o, const Report& r, ReportLang lang) {
  const json& c = r.chart;
  const auto& s = r.in.series;
  const json& counts = c["counts"];
  auto chip = [&](const std::string& cls, const std::string& kopt, const std::string& value, const std::string& label,
                  const std::string& tip, const std::string& extra = {}) {
    o += "<span class=\"chip" + (cls.empty() ? "" : " " + cls) + "\" data-kopt=\"" + kopt + "\"" +
         (tip.empty() ? "" : " title=\"" + html_escape(tip) + "\"") + "><b>" + value + "</b>" + label + extra +
         "</span>\n";
  };
  o += "<section class=\"chips\" data-kopt=\"chips\">\n";
  chip("", "chip-opt", num(jnum(counts, "optimization")), T(lang, "chip.opt"), T(lang, "chip.opt.tip"));
  chip(jnum(counts, "overBudget") > 0 ? "warn" : "", "chip-over", num(jnum(counts, "overBudget")), T(lang, "chip.over"),
       T(lang, "chip.over.tip"));
  chip("", "chip-wrap", num(jnum(counts, "wrapUp")), T(lang, "chip.wrap"), T(lang, "chip.wrap.tip"));
  if (r.budget > 0) chip("", "chip-budget", std::to_string(r.budget), T(lang, "chip.budget"), {});
  if (s.bestIndex && *s.bestIndex < s.iterations.size() && s.iterations[*s.bestIndex].latencyMs) {
    const auto& best = s.iterations[*s.bestIndex];
    std::string value = "★ " + format_latency(*best.latencyMs);
    const json& bp = c["points"][*s.bestIndex];
    if (auto sl = jstr(bp, "speedupLabel"); !sl.empty())
      value += " · " + sl;
    else if (best.speedup)
      value += " · " + speedup_label(*best.speedup);
    chip("ok", "chip-best", html_escape(value),
         std::string(T(lang, "chip.best")) + " · #" + std::to_string(*s.bestIndex + 1), {});
  } else {
    chip("", "chip-best", "—", T(lang, "chip.noBest"), {});
  }
  const json& fin = c["final"];
  if (fin.is_object()) {
    const bool re = fin.value("remeasured", false);
    const std::size_t idx = static_cast<std::size_t>(jnum(fin, "index"));
    chip("final", "chip-final", "⚑ " + html_escape(jstr(fin, "label")),
         std::string(T(lang, "chip.final")) + " · #" + std::to_string(idx + 1), T(lang, re ? "chip.final.re" : "chip.final.self"),
         std::string(" · <span class=\"") + (re ? "re" : "nre") + "\" data-kopt=\"" +
             (re ? "remeasured" : "not-remeasured") + "\">" + T(lang, re ? "chip.remeasured" : "chip.notRemeasured") + "</span>" +
             final_gap(fin, s, lang));
  } else if (const json& claim = c["finalClaim"]; claim.is_object() && claim["refusedText"].is_object()) {
    // A finalize the Final rule refused (H-8): the agent asked, and why the headline is not its number.
    const json& words = claim["refusedText"];
    std::string why = lang == ReportLang::Zh ? jstr(words, "zh") + " · " + jstr(words, "en") : jstr(words, "en");
    if (claim["named"].is_number()) why += " · #" + std::to_string(static_cast<long long>(jnum(claim, "named")) + 1);
    chip("warn", "chip-final", "⚑ —", "<span data-kopt=\"final-refused\">" + html_escape(why) + "</span>", {});
  } else {
    chip("", "chip-final", "—", T(lang, "chip.noFinal"), {});
  }
  o += "</section>\n";
}

void curve_card(std::string& o, const Report& r, ReportLang lang) {
  const json& c = r.chart;
  o += "<section class=\"card\" data-kopt=\"curve\"><h2>" + std::string(T(lang, "curve.title")) + " <small>" +
       T(lang, jstr(c, "mode") == "speedup" ? "curve.axisSpeedup" : "curve.axisLatency") + "</small></h2>\n";
  if (r.in.series.iterations.empty()) {
    o += "<div class=\"note\">" + std::string(T(lang, "curve.empty")) + "</div></section>\n";
    return;
  }
  svg_curve(o, r, lang);
  o += "<div class=\"legend\"><span><i style=\"color:var(--accent)\">●</i>" + std::string(T(lang, "legend.ok")) +
       "</span><span><i style=\"color:var(--bad)\">○</i>" + T(lang, "legend.failed") +
       "</span><span><i style=\"color:var(--faint)\">◌</i>" + T(lang, "legend.unmeasured") +
       "</span><span><i style=\"color:var(--ok)\">★</i>" + T(lang, "legend.best") +
       "</span><span><i style=\"color:var(--prof)\">▲</i>" + T(lang, "legend.profiled") +
       "</span><span><i style=\"color:var(--final)\">⚑</i>" + T(lang, "legend.final") + "</span><span>" +
       T(lang, "curve.hint") + "</span></div>\n";
  if (c["reference"].is_object())
    o += "<div class=\"note\" data-kopt=\"denominator\">" +
         fill(T(lang, "curve.note"), {{"{ref}", html_escape(jstr(c["reference"], "label"))},
                                      {"{n}", std::to_string(implied_references(r.in.series).size())}}) +
         "</div>\n";
  if (c["drift"].is_object()) {
    const json& d = c["drift"];
    o += "<div class=\"warnbox\" data-kopt=\"drift\">" +
         fill(T(lang, "curve.drift"), {{"{n}", num(jnum(d, "count"))},
                                       {"{min}", html_escape(jstr(d, "minLabel"))},
                                       {"{max}", html_escape(jstr(d, "maxLabel"))},
                                       {"{pct}", num(std::round((jnum(d, "ratio") - 1) * 100))}}) +
         "</div>\n";
  }
  o += "</section>\n";
}

}  // namespace kopt::report_parts
