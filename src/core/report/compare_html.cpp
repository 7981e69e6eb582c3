// The comparison page (`kopt report A B … -o compare.html`): the runs' curves overlaid, the legend,
// the rule's verdict in words and one row per run, drawn from compare_json (compare.hpp) exactly as
// the tab draws it. Self-contained and inert like the one-run report (html_page.cpp).
#include <cmath>
#include <string>

#include "kopt/chart.hpp"
#include "kopt/compare.hpp"
#include "kopt/report.hpp"
#include "report_parts.hpp"

namespace kopt {

using namespace report_parts;

namespace {

const json& at(const json& j, const char* k) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(k);
  return it == j.end() ? kNull : *it;
}

// "A · title" for a run, escaped (compare_json names each run).
std::string run_name(const json& s) { return html_escape(jstr(s, "name")); }

std::string swatch(const json& s) { return "<span class=\"sw\" style=\"background:" + html_escape(jstr(s, "color")) + "\"></span>"; }

void curves(std::string& o, const json& cmp, ReportLang lang) {
  const json& c = at(cmp, "chart");
  const json& sessions = at(cmp, "sessions");
  const double W = jnum(c, "width", 960), H = jnum(c, "height", 340);
  const json& P = at(c, "plot");
  const double left = jnum(P, "left"), right = jnum(P, "right"), top = jnum(P, "top"), bottom = jnum(P, "bottom");
  const json& F = at(c, "frame");
  const double fx0 = jnum(F, "x0"), fdx = jnum(F, "dx"), fy0 = jnum(F, "y0"), fdy = jnum(F, "dy");
  o += "<section class=\"card\" data-kopt=\"compare-curve\"><h2>" + std::string(T(lang, "cmp.curve")) + "</h2>\n";
  const bool speedup = jstr(cmp, "axis") == "speedup", log_scale = jstr(cmp, "scale") == "log";
  const json& reasons = at(cmp, "reasons");
  if (speedup) {
    o += "<div class=\"okbox\" data-kopt=\"axis-rule\" data-axis=\"speedup\">" + std::string(T(lang, "cmp.axisSpeedup")) + "</div>\n";
  } else if (reasons.is_array() && !reasons.empty()) {
    o += "<div class=\"warnbox\" data-kopt=\"axis-rule\" data-axis=\"latency\">" + std::string(T(lang, "cmp.axisLatency")) + "<ul>";
    for (const auto& why : reasons) o += "<li data-kopt=\"reason\" data-code=\"" + html_escape(jstr(why, "code")) + "\">" + html_escape(compare_reason_text(why, sessions, lang == ReportLang::Zh)) + "</li>";
    o += "</ul></div>\n";
  } else {
    o += "<div class=\"note\" data-kopt=\"axis-rule\" data-axis=\"latency\">" + std::string(T(lang, "cmp.axisLatencyPlain")) + "</div>\n";
  }
  o += "<svg class=\"curve\" data-kopt=\"compare-chart\" viewBox=\"0 0 " + num(W) + " " + num(H) + "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (const auto& t : at(c, "ticks")) {
    const std::string y = num(jnum(t, "y"));
    o += "<line class=\"grid\" x1=\"" + num(left) + "\" x2=\"" + num(right) + "\" y1=\"" + y + "\" y2=\"" + y + "\" stroke-dasharray=\"3 5\"/>";
    o += "<text class=\"axis\" x=\"" + num(left - 8) + "\" y=\"" + num(jnum(t, "y") + 4) + "\" text-anchor=\"end\">" + html_escape(jstr(t, "label")) + "</text>\n";
  }
  o += "<line class=\"frame\" x1=\"" + num(left) + "\" x2=\"" + num(right) + "\" y1=\"" + num(bottom) + "\" y2=\"" + num(bottom) + "\"/>\n";
  for (const auto& t : at(c, "xTicks"))
    o += "<text class=\"axis\" x=\"" + num(jnum(t, "x")) + "\" y=\"" + num(jnum(c, "xLabelY")) + "\" text-anchor=\"middle\">" + html_escape(jstr(t, "label")) + "</text>";
  // The log-scale note at the right end, clear of the top tick's label.
  if (jstr(cmp, "scale") == "log") o += "<text class=\"axis\" x=\"" + num(right) + "\" y=\"" + num(top - 8) + "\" text-anchor=\"end\" font-style=\"italic\">" + T(lang, "curve.log") + "</text>";
  o += "\n";
  for (const auto& sr : at(c, "series")) {
    const std::size_t i = static_cast<std::size_t>(jnum(sr, "session"));
    const json& s = i < sessions.size() ? sessions[i] : json::object();
    const std::string color = html_escape(jstr(sr, "color")), name = run_name(s);
    o += "<g data-kopt=\"compare-series\" data-session=\"" + std::to_string(i) + "\">";
    // [index, latency ms, ok, speedup?], placed by the frame as the tab places them.
    std::string dots, line;
    const double ref = jnum(sr, "reference", 0);
    for (const auto& p : at(sr, "points")) {
      if (!p.is_array() || p.size() < 3 || !p[0].is_number() || !p[1].is_number() || !(p[1].get<double>() > 0)) continue;
      const bool ok = p[2] == 1;
      const double latency = p[1].get<double>();
      const double value = speedup && ref > 0 ? ref / latency : 1.0 / latency, v = log_scale ? std::log10(value) : value;
      const std::string x = num(std::round((fx0 + fdx * p[0].get<double>()) * 10) / 10), y = num(std::round((fy0 + fdy * v) * 10) / 10);
      if (ok) line += (line.empty() ? "M" : " L") + x + " " + y;
      dots += "<circle class=\"cpt\" data-kopt=\"compare-point\" cx=\"" + x + "\" cy=\"" + y + "\" r=\"3.6\" fill=\"" +
              (ok ? color : std::string("var(--card)")) + "\" stroke=\"" + color + "\"><title>" + name + " · #" +
              std::to_string(p[0].get<long long>() + 1) + " · " +
              // The point's label as the core made it (its interval with it), as the tab's popover shows it.
              html_escape(p.size() > 4 && p[4].is_string() ? p[4].get<std::string>() : format_latency(latency)) +
              (p.size() > 3 && p[3].is_number() ? " · " + speedup_label(p[3].get<double>()) : std::string()) + "</title></circle>";
    }
    if (!line.empty()) o += "<path class=\"cline\" stroke=\"" + color + "\" d=\"" + line + "\"/>";
    o += dots;
    if (const json& b = at(sr, "best"); b.is_object())
      o += "<text x=\"" + num(jnum(b, "x")) + "\" y=\"" + num(jnum(b, "y") - 8) + "\" text-anchor=\"middle\" fill=\"" + color + "\" font-size=\"14\">★</text>";
    o += "</g>\n";
  }
  o += "</svg>\n<div class=\"legend\" data-kopt=\"compare-legend\">";
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const json& s = sessions[i];
    std::string models;
    for (const auto& m : at(s, "models")) models += (models.empty() ? "" : ", ") + html_escape(m.is_string() ? m.get<std::string>() : "");
    o += "<span>" + swatch(s) + run_name(s);
    if (!models.empty()) o += " · " + models;
    if (const json& t = at(s, "startMs"); t.is_number()) o += " · " + utc_time(t.get<double>());
    o += "</span>";
  }
  o += "</div>\n<div class=\"note\">" + std::string(T(lang, "cmp.hover")) + "</div>\n</section>\n";
}

void table(std::string& o, const json& cmp, ReportLang lang) {
  const json& sessions = at(cmp, "sessions");
  o += "<section class=\"card\" data-kopt=\"compare-table\"><h2>" + std::string(T(lang, "cmp.table")) + "</h2>\n<div class=\"tablewrap\"><table class=\"rec cmp\"><thead><tr>";
  for (const char* k : {"cmp.col.run", "cmp.col.model", "cmp.col.budget", "cmp.col.best", "cmp.col.final", "cmp.col.near", "cmp.col.wall", "cmp.col.ref"})
    o += "<th>" + std::string(T(lang, k)) + "</th>";
  o += "</tr></thead><tbody>\n";
  const std::string none = T(lang, "cmp.none");
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const json& s = sessions[i];
    o += "<tr data-kopt=\"compare-row\"><td class=\"who\">" + swatch(s) + run_name(s) + "<span class=\"sub\">" + html_escape(jstr(s, "id")) + "</span>";
    if (const std::string err = jstr(s, "error"); !err.empty()) {
      o += "<span class=\"err\" data-kopt=\"row-error\">" + std::string(T(lang, "cmp.unreadable")) + ": " + html_escape(err) + "</span></td>";
      for (int k = 0; k < 7; ++k) o += "<td>" + none + "</td>";
      o += "</tr>\n";
      continue;
    }
    o += "</td><td>";
    std::string models;
    for (const auto& m : at(s, "models")) models += (models.empty() ? "" : "<br>") + html_escape(m.is_string() ? m.get<std::string>() : "");
    o += models.empty() ? "<span class=\"sub\">" + std::string(T(lang, "cmp.noModel")) + "</span>" : models;
    for (const auto& m : at(s, "supervisors")) o += "<span class=\"sub\">" + std::string(T(lang, "cmp.supervisor")) + ": " + html_escape(m.is_string() ? m.get<std::string>() : "") + "</span>";
    o += "</td><td>" + (at(s, "budget").is_number() ? num(jnum(s, "budget")) : none) + " · " + num(jnum(s, "used")) + "</td><td>";
    if (const json& b = at(s, "best"); b.is_object()) {
      o += html_escape(jstr(b, "label"));
      if (!jstr(b, "speedupLabel").empty()) o += " · " + html_escape(jstr(b, "speedupLabel"));
      o += "<span class=\"sub\">" + fill(T(lang, "cmp.evalN"), {{"{n}", std::to_string(static_cast<long long>(jnum(b, "index")) + 1)}}) + "</span>";
    } else {
      o += none;
    }
    o += "</td><td>";
    if (const json& f = at(s, "final"); f.is_object()) {
      o += html_escape(jstr(f, "label")) + " · " + (at(f, "remeasured") == true ? "<span class=\"okc\">" + std::string(T(lang, "chip.remeasured")) + "</span>" : std::string(T(lang, "chip.notRemeasured")));
      if (at(f, "gapPct").is_number()) {
        const double g = jnum(f, "gapPct");
        o += "<span class=\"sub\">" + std::string(at(f, "gapFlag") == true ? "⚠ " : "") +
             fill(T(lang, at(f, "selfPlugin") == true ? "chip.gap.plugin" : "chip.gap"), {{"{self}", html_escape(jstr(f, "selfLabel"))}, {"{pct}", (g > 0 ? "+" : "") + num(g) + "%"}}) + "</span>";
      }
    } else if (const json& fr = at(s, "finalRefused"); fr.is_object()) {
      o += "<span class=\"nre\" data-kopt=\"final-refused\">⚑ " + html_escape(jstr(at(fr, "text"), lang == ReportLang::Zh ? "zh" : "en")) + "</span>";
    } else {
      o += none;
    }
    o += "</td><td>";
    if (const json& nb = at(s, "nearBest"); nb.is_object())
      o += fill(T(lang, "cmp.evalN"), {{"{n}", std::to_string(static_cast<long long>(jnum(nb, "index")) + 1)}}) + " · " + html_escape(jstr(nb, "label"));
    else
      o += none;
    o += "</td><td>" + (at(s, "wallToBestMs").is_number() ? jstr(s, "wallToBestLabel") : none) + "</td><td>";
    if (const json& r = at(s, "reference"); r.is_object()) o += html_escape(jstr(r, "label"));
    else o += "<span class=\"sub\">" + std::string(T(lang, "cmp.noRef")) + "</span>";
    if (const json& d = at(s, "drift"); d.is_object())
      o += "<span class=\"sub\" style=\"color:var(--warn)\">⚠ " + html_escape(jstr(d, "minLabel")) + " – " + html_escape(jstr(d, "maxLabel")) + "</span>";
    for (const auto& h : at(s, "referenceHashes"))
      if (h.is_string()) o += "<span class=\"sub\">" + std::string(T(lang, "cmp.hash")) + " <code>" + html_escape(h.get<std::string>().substr(0, 12)) + "…</code></span>";
    o += "</td></tr>\n";
  }
  o += "</tbody></table></div>\n</section>\n";
}

}  // namespace

std::string compare_html(const json& cmp, ReportLang lang, double generated_at_ms) {
  std::string o;
  o.reserve(64 * 1024);
  page_open(o, lang, T(lang, "cmp.doc"));
  o += "<header data-kopt=\"header\"><h1>" + std::string(T(lang, "cmp.title")) + "</h1>\n<div class=\"meta\"><span><b>" +
       std::string(T(lang, "cmp.sessions")) + "</b>" + std::to_string(at(cmp, "sessions").size()) + "</span>";
  if (generated_at_ms > 0) o += "<span><b>" + std::string(T(lang, "generated")) + "</b>" + utc_time(generated_at_ms) + "</span>";
  o += "</div></header>\n";
  curves(o, cmp, lang);
  table(o, cmp, lang);
  page_close(o, lang);
  return o;
}

}  // namespace kopt
