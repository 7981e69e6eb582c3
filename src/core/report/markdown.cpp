// The run's measured points as one markdown table, nvbench's style, to paste into a pull request
// (report.hpp report_markdown). The words are the shared table's (kopt/labels.hpp: md.*, versus.*,
// verdict.*, trust.*); everything from the log goes through markdown_cell.
#include <string>

#include "kopt/labels.hpp"
#include "kopt/report.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

namespace {

// "faster 3.1% ± 0.8" / "same within noise 0.4% ± 0.9" / "unsure"; `of`: the ★ it was compared with.
std::string versus_cell(const std::optional<Comparison>& c, bool zh, std::optional<std::size_t> of = std::nullopt) {
  if (!c) return {};
  std::string o = word(std::string("versus.") + versus_name(c->verdict), zh);
  if (c->verdict != Versus::unsure) o.append(" ").append(effect_label(c->effectPct, c->pmPct));
  if (of) o.append(" · #").append(std::to_string(*of + 1));
  return o;
}

}  // namespace

std::string report_markdown(const Report& r, ReportLang lang) {
  const bool zh = lang == ReportLang::Zh;
  const auto& s = r.in.series;
  auto w = [&](const char* key) { return std::string(word(key, zh)); };
  std::string o = "### ";
  o += w("md.title");
  if (!r.in.source.empty()) o.append(" · ").append(markdown_cell(r.in.source, 120));
  o += "\n\n";
  std::size_t measured = 0;
  for (const auto& it : s.iterations)
    if (it.latencyMs) ++measured;
  if (measured == 0) return o + w("md.none") + "\n";

  o += "| " + w("md.n") + " | " + w("md.approach") + " | " + w("md.latency") + " | " + w("md.interval") + " | " +
       w("md.samples") + " | " + w("md.vsBest") + " | " + w("md.vsReference") + " | " + w("md.speedup") + " | " +
       w("md.bandwidth") + " |\n";
  o += "|--:|---|--:|--:|--:|---|---|--:|--:|\n";
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    const Iteration& it = s.iterations[i];
    if (!it.latencyMs) continue;
    const ReportRow& row = r.rows[i];
    // #, with ★ (the best) and ⚑ (finalized).
    std::string n = std::to_string(i + 1);
    if (s.bestIndex == i) n += " ★";
    if (it.finalized) n += " ⚑";
    // The approach in force (the last plan before it), else the artifact; a verdict other than passed
    // and a re-measurement say so.
    std::string label;
    if (row.plan) label = markdown_cell(s.plans[*row.plan].approach, 60);
    else if (it.artifactPath) label = markdown_cell(*it.artifactPath, 60);
    auto also = [&](const char* text) { label.append(label.empty() ? "" : " · ").append(text); };
    if (row.verdict != "ok") also(word("verdict." + row.verdict, zh));
    if (row.trust == "replay") also(word("trust.replay", zh));
    const auto ci = it.latency_ci();
    const std::string interval = ci ? interval_label(*it.latencyMs, ci->lo, ci->hi) : std::string();
    const std::string samples = it.noise && it.noise->samples ? std::to_string(*it.noise->samples) : std::string();
    const std::string vs_best = versus_cell(row.vsBest, zh, row.vsBest ? std::optional<std::size_t>(it.bestBefore) : std::nullopt);
    const std::string vs_ref = versus_cell(row.vsReference, zh);
    std::string speedup;
    if (it.speedup) speedup = speedup_label(*it.speedup);
    else if (row.pooledSpeedup) speedup.append("(").append(speedup_label(*row.pooledSpeedup)).append(")");
    std::string bandwidth;
    if (row.bandwidthFraction) bandwidth = fraction_label(*row.bandwidthFraction);
    if (row.bandwidthGbps) bandwidth.append(bandwidth.empty() ? "" : " · ").append(short_number(*row.bandwidthGbps)).append(" GB/s");
    o += "| " + n + " | " + label + " | " + format_latency(*it.latencyMs) + " | " + interval + " | " + samples + " | " +
         vs_best + " | " + vs_ref + " | " + speedup + " | " + bandwidth + " |\n";
  }
  o.append("\n").append(w("md.legend")).append("\n");
  return o;
}

}  // namespace kopt
