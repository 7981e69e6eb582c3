// The HTML report's record table (one row per evaluation: verdict, trust, command, changes, review)
// and its cards: environment, plans, reviews, notes.
#include <algorithm>
#include <string>

#include "kopt/chart.hpp"
#include "kopt/verdict.hpp"
#include "report_parts.hpp"

namespace kopt::report_parts {
namespace {

void command_block(std::string& o, const Iteration& it, ReportLang lang) {
  const std::string& full = !it.fullCommand.empty() ? it.fullCommand : it.command.value_or(std::string());
  if (full.empty()) return;
  constexpr std::size_t kInline = 600;
  if (full.size() <= kInline || !it.command) {
    o += "<code class=\"cmd\">" + html_escape(full) + "</code>";
    return;
  }
  o += "<code class=\"cmd\">" + html_escape(*it.command) + "</code><details><summary>" + T(lang, "cmd.full") + " (" +
       std::to_string(it.commandLength.value_or(full.size())) + " " + T(lang, "cmd.chars") + ")</summary><pre>" +
       html_escape(full) + "</pre></details>";
}

void changes_cell(std::string& o, const Iteration& it, ReportLang lang) {
  const bool extra = it.blocking || it.advisory || it.notMeasured || it.workloadSubset;
  if (it.changes.empty() && !extra) return;
  std::string summary;
  if (!it.changes.empty())
    summary = std::to_string(it.changes.size()) + " " + T(lang, it.changes.size() == 1 ? "changes.1" : "changes.n");
  else
    summary = T(lang, "details");
  o += "<details data-kopt=\"changes\"><summary>" + summary + "</summary>";
  for (const auto& ch : it.changes) {
    o += "<div class=\"chg\"><span class=\"tag\">" + std::string(T(lang, ch.kind == "write" ? "ch.write" : "ch.edit")) +
         "</span> <span class=\"path\">" + html_escape(ch.filePath) + "</span>";
    if (ch.replaceAll) o += " <span class=\"tag dim\">" + std::string(T(lang, "ch.replaceAll")) + "</span>";
    if (ch.truncated) o += "<span class=\"sub\">" + std::string(T(lang, "changes.truncated")) + "</span>";
    if (ch.content) o += "<pre class=\"new\">" + html_escape(*ch.content) + "</pre>";
    if (ch.oldText) o += "<pre class=\"old\">" + html_escape(*ch.oldText) + "</pre>";
    if (ch.newText) o += "<pre class=\"new\">" + html_escape(*ch.newText) + "</pre>";
    o += "</div>";
  }
  auto list = [&](const char* key, const std::optional<std::vector<std::string>>& v) {
    if (!v) return;
    o += "<div class=\"chg\"><span class=\"sub\">" + std::string(T(lang, key)) + "</span>";
    for (const auto& x : *v) o += "<span class=\"err\" style=\"color:var(--dim)\">• " + html_escape(x) + "</span>";
    o += "</div>";
  };
  list("detail.blocking", it.blocking);
  list("detail.advisory", it.advisory);
  list("detail.notMeasured", it.notMeasured);
  if (it.workloadSubset)
    o += "<div class=\"chg\"><span class=\"sub\">" + std::string(T(lang, "detail.workloads")) + ": " +
         html_escape(js_stringify(*it.workloadSubset)) + "</span></div>";
  o += "</details>";
}

}  // namespace

void record_table(std::string& o, const Report& r, ReportLang lang) {
  const auto& s = r.in.series;
  o += "<section class=\"card\" data-kopt=\"records\"><h2>" + std::string(T(lang, "table.title")) + " <small>" +
       std::to_string(s.iterations.size()) + "</small></h2>\n";
  if (s.iterations.empty()) {
    o += "<div class=\"note\">" + std::string(T(lang, "curve.empty")) + "</div></section>\n";
    return;
  }
  o += "<div class=\"tablewrap\"><table class=\"rec\"><thead><tr>";
  for (const char* k : {"table.n", "table.verdict", "table.latency", "table.speedup", "table.trust", "approach.inForce",
                        "table.review", "table.changes"})
    o += std::string("<th>") + T(lang, k) + "</th>";
  o += "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    const Iteration& it = s.iterations[i];
    const ReportRow& row = r.rows[i];
    const bool best = s.bestIndex == i;
    o += "<tr id=\"e" + std::to_string(i + 1) + "\" data-kopt=\"row\"" + (best ? " class=\"best\"" : "") + ">";
    // #
    o += "<td class=\"n\">#" + std::to_string(i + 1);
    if (best) o += "<span class=\"star\" title=\"" + html_escape(T(lang, "legend.best")) + "\">★</span>";
    if (it.finalized) o += "<span class=\"flagc\" title=\"" + html_escape(T(lang, "legend.final")) + "\">⚑</span>";
    o += "<span class=\"sub\">seq " + html_escape(seq_text(it.seq)) + "</span></td>";
    // verdict
    o += "<td><span class=\"tag " + std::string(verdict_tone(row.verdict)) + "\" data-kopt=\"row-verdict\">" + T(lang, ("verdict." + row.verdict).c_str()) +
         "</span>";
    if (row.phase != "optimization")
      o += " <span class=\"tag warn\">" + std::string(T(lang, ("phase." + row.phase).c_str())) + "</span>";
    if (it.error) o += "<span class=\"err\">" + html_escape(*it.error) + "</span>";
    if (it.evaluatorFailed && !it.error)
      o += "<span class=\"err\">" + std::string(T(lang, "detail.evaluatorFailed")) + "</span>";
    o += "</td>";
    // latency
    // The latency with its interval where the point carries one (latency_label, the comparison's too), and
    // how it compares with the ★ before it and with its reference, in the shared sentences (spec S).
    o += "<td class=\"num\">";
    if (it.latencyMs && it.latency_ci())
      o += "<span data-kopt=\"row-ci\">" + html_escape(row.latencyLabel) + "</span>";
    else
      o += it.latencyMs ? html_escape(row.latencyLabel) : std::string("—");
    auto versus = [&](const char* side, const std::optional<Comparison>& c) {
      if (!c) return;
      const std::string v = versus_name(c->verdict);
      o += "<span class=\"sub\" data-kopt=\"row-vs\" data-v=\"" + v + "\">" +
           html_escape(versus_text(std::string(side) + "." + v, c->effectPct, c->pmPct, lang == ReportLang::Zh)) + "</span>";
    };
    versus("best", row.vsBest);
    versus("ref", row.vsReference);
    if (!it.metrics.empty()) {
      std::string m;
      for (const auto& [k, v] : it.metrics) m += (m.empty() ? "" : " · ") + k + " " + num(v);
      o += "<span class=\"sub\" title=\"" + html_escape(T(lang, "table.metrics")) + "\">" + html_escape(m) + "</span>";
    }
    o += "</td>";
    // speedup
    o += "<td class=\"num\" data-kopt=\"row-speedup\">";
    if (it.speedup)
      o += html_escape(speedup_label(*it.speedup));
    else if (row.pooledSpeedup)
      o += "<span class=\"sub\" title=\"" + html_escape(T(lang, "table.pooled")) + "\">(" +
           html_escape(speedup_label(*row.pooledSpeedup)) + ")</span>";
    o += "</td>";
    // trust
    const char* tcls = row.trust == "tool" || row.trust == "plugin" ? "tool" : row.trust == "replay" ? "replay" : "";
    o += "<td class=\"trust\"><span class=\"tag " + std::string(tcls) + "\" data-kopt=\"trust-" + row.trust + "\">" +
         T(lang, ("trust." + row.trust).c_str()) + "</span>";
    if (it.jobId)
      o += " <span class=\"tag dim\">" + (row.trust == "job" ? std::string() : std::string(T(lang, "trust.job")) + " ") +
           html_escape(*it.jobId) + "</span>";
    if (row.trust == "tool" || row.trust == "plugin")
      o += "<span class=\"sub\">" + html_escape(it.tool) +
           (it.evaluationId ? " · " + html_escape(*it.evaluationId) : "") + "</span>";
    // DV-13: the bytes a plugin-measured point measured, by hash (the reference's too: comparable runs share it).
    if (it.sources) {
      std::string bytes;
      for (const auto& f : it.sources->solution) bytes += (bytes.empty() ? "" : ", ") + f.path + " " + f.sha256.substr(0, 12);
      if (it.sources->reference) bytes += "; ref " + it.sources->reference->path + " " + it.sources->reference->sha256.substr(0, 12);
      o += "<span class=\"sub\" data-kopt=\"sources\">sha256 " + html_escape(bytes) + "</span>";
    }
    command_block(o, it, lang);
    if (it.artifactPath) o += "<span class=\"sub\">" + html_escape(*it.artifactPath) + "</span>";
    o += "</td>";
    // approach in force
    o += "<td class=\"appr\">";
    if (row.plan) {
      const Plan& p = s.plans[*row.plan];
      o += "<span class=\"tag" + std::string(p.phase == "stuck" ? " bad" : "") + "\">" + html_escape(p.phase) +
           "</span> " + html_escape(p.approach);
      if (p.hypothesis) o += "<span class=\"sub\">" + html_escape(*p.hypothesis) + "</span>";
    }
    o += "</td>";
    // that round's supervision
    o += "<td class=\"rev\">";
    if (row.round) {
      const Round& rd = s.rounds[*row.round];
      const std::string label = html_escape(round_label(lang, rd));
      if (rd.reviewFailed) {
        o += "<span class=\"tag bad\" data-kopt=\"review-failed\">" + std::string(T(lang, "rev.failed")) +
             "</span><span class=\"sub\">" + label + "</span>";
      } else if (!rd.review) {
        o += "<span class=\"sub\">" + label + "</span>";
      } else if (*rd.review == "ok") {
        o += "<span class=\"okc\">" + std::string(T(lang, "rev.ok")) + "</span><span class=\"sub\">" + label +
             (rd.reviewNote ? " · " + html_escape(*rd.reviewNote) : "") + "</span>";
      } else {
        o += "<details><summary>" + label + " · " + T(lang, "rev.advice") + "</summary><div class=\"revtext\">" +
             html_escape(*rd.review) + "</div></details>";
      }
    }
    o += "</td>";
    // changes
    o += "<td class=\"chgs\">";
    changes_cell(o, it, lang);
    o += "</td></tr>\n";
  }
  o += "</tbody></table></div></section>\n";
}

void env_card(std::string& o, const Report& r, ReportLang lang) {
  const auto& envs = r.in.series.envs;
  o += "<section class=\"card\" data-kopt=\"env\"><h2>" + std::string(T(lang, "env.title")) + "</h2>\n";
  auto kv = [&](const Env& e) {
    o += "<dl class=\"kv\">";
    auto row = [&](const char* k, const std::string& v) {
      o += std::string("<dt>") + T(lang, k) + "</dt><dd>" + html_escape(v) + "</dd>";
    };
    row("env.location", e.location);
    row("env.device", e.device);
    if (e.constraint) row("env.constraint", *e.constraint);
    if (e.versions && e.versions->is_object()) {
      std::string v;
      for (const auto& [k, val] : e.versions->items())
        v += (v.empty() ? "" : " · ") + k + " " + (val.is_string() ? val.get<std::string>() : js_stringify(val));
      row("env.versions", v);
    }
    if (e.probe)
      o += std::string("<dt>") + T(lang, "env.probe") + "</dt><dd><code class=\"cmd\">" + html_escape(*e.probe) +
           "</code></dd>";
    if (e.notes) row("env.notes", *e.notes);
    o += "</dl>";
  };
  if (envs.empty()) {
    o += "<div class=\"note\">" + std::string(T(lang, "env.none")) + "</div>";
  } else {
    kv(envs.back());
    if (envs.size() > 1) {
      o += "<details style=\"margin-top:8px\"><summary>" + std::string(T(lang, "env.earlier")) + " (" +
           std::to_string(envs.size() - 1) + ")</summary>";
      for (std::size_t i = envs.size() - 1; i-- > 0;) {
        o += "<div style=\"margin-top:8px\">";
        kv(envs[i]);
        o += "</div>";
      }
      o += "</details>";
    }
  }
  o += "</section>\n";
}

void plans_card(std::string& o, const Report& r, ReportLang lang) {
  const auto& plans = r.in.series.plans;
  o += "<section class=\"card\" data-kopt=\"plans\"><h2>" + std::string(T(lang, "plan.title")) + " <small>" +
       std::to_string(plans.size()) + "</small></h2>\n";
  if (plans.empty()) {
    o += "<div class=\"note\">" + std::string(T(lang, "plan.none")) + "</div></section>\n";
    return;
  }
  const bool collapse = plans.size() > 6;
  if (collapse) {
    // The latest plan stays visible; the history folds.
    const Plan& p = plans.back();
    o += "<div><span class=\"tag" + std::string(p.phase == "stuck" ? " bad" : "") + "\">" + html_escape(p.phase) +
         "</span> " + html_escape(p.approach) + "</div><details style=\"margin-top:8px\"><summary>" +
         std::string(T(lang, "plan.title")) + " (" + std::to_string(plans.size()) + ")</summary>";
  }
  o += "<ol class=\"plans\">";
  for (const auto& p : plans) {
    o += "<li><span>seq " + html_escape(seq_text(p.seq)) + "</span><span><span class=\"tag" +
         std::string(p.phase == "stuck" ? " bad" : "") + "\">" + html_escape(p.phase) + "</span> " +
         html_escape(p.approach);
    if (p.hypothesis)
      o += "<span class=\"sub\">" + std::string(T(lang, "plan.hypothesis")) + ": " + html_escape(*p.hypothesis) +
           "</span>";
    if (p.next)
      o += "<span class=\"sub\">" + std::string(T(lang, "plan.next")) + ": " + html_escape(*p.next) + "</span>";
    o += "</span></li>";
  }
  o += "</ol>";
  if (collapse) o += "</details>";
  o += "</section>\n";
}

void reviews_card(std::string& o, const Report& r, ReportLang lang) {
  std::vector<const Round*> reviewed;
  for (const auto& rd : r.in.series.rounds)
    if (rd.reviewed()) reviewed.push_back(&rd);
  o += "<section class=\"card\" data-kopt=\"reviews\"><h2>" + std::string(T(lang, "rev.title")) + " <small>" +
       std::to_string(reviewed.size()) + "</small></h2>\n";
  if (reviewed.empty()) {
    o += "<div class=\"note\">" + std::string(T(lang, "rev.none")) + "</div></section>\n";
    return;
  }
  o += "<ol class=\"revs\">";
  for (const Round* rd : reviewed) {
    o += "<li data-kopt=\"review\"><span>" + html_escape(round_label(lang, *rd));
    if (rd->evalsUsed && rd->budget)
      o += "<span class=\"sub\">" +
           fill(T(lang, "rev.used"), {{"{d}", std::to_string(*rd->evalsUsed)}, {"{b}", std::to_string(*rd->budget)}}) +
           "</span>";
    o += "</span><span class=\"revtext\">";
    if (rd->reviewFailed)
      o += "<span class=\"tag bad\" data-kopt=\"review-failed\">" + std::string(T(lang, "rev.failed")) + "</span>";
    else if (*rd->review == "ok")
      o += "<span class=\"okc\">" + std::string(T(lang, "rev.ok")) + "</span>" +
           (rd->reviewNote ? " — " + html_escape(*rd->reviewNote) : "");
    else
      o += html_escape(*rd->review);
    o += "</span></li>";
  }
  o += "</ol></section>\n";
}

void notes_card(std::string& o, const Report& r, ReportLang lang) {
  std::vector<std::string> notes;
  const auto& s = r.in.series;
  if (!s.uncollectedSeqs.empty())
    notes.push_back(fill(T(lang, "note.uncollected"), {{"{n}", std::to_string(s.uncollectedSeqs.size())}}));
  if (!s.echoedSeqs.empty())
    notes.push_back(fill(T(lang, "note.echoed"), {{"{n}", std::to_string(s.echoedSeqs.size())}}));
  if (r.in.read.skipped || r.in.malformedEvents)
    notes.push_back(fill(T(lang, "note.skipped"),
                         {{"{n}", std::to_string(r.in.read.skipped)}, {"{m}", std::to_string(r.in.malformedEvents)}}));
  if (r.in.read.truncated || !r.in.read.error.empty())
    notes.push_back(fill(T(lang, "note.truncated"),
                         {{"{e}", html_escape(r.in.read.error.empty() ? "truncated" : r.in.read.error)}}));
  if (notes.empty()) return;
  o += "<section class=\"card\" data-kopt=\"notes\"><h2>" + std::string(T(lang, "note.title")) + "</h2>";
  for (const auto& n : notes) o += "<div class=\"note\" style=\"color:var(--dim)\">" + n + "</div>";
  o += "</section>\n";
}

}  // namespace kopt::report_parts
