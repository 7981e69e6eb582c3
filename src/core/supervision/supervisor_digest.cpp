// The run digest the supervisor reads: a summary, the tail of the evaluation table, and the real
// diffs of the latest iterations that changed code. Bounded so a long run stays one request.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "kopt/derived.hpp"
#include "kopt/labels.hpp"
#include "kopt/supervisor.hpp"
#include "kopt/utf16.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

namespace {

std::string fmt(double v) { return js_number(v); }

// Whitespace runs become one space: a heredoc must not break a table row into several lines.
std::string flatten(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Long text elided in the middle: the benchmark call of an edit-then-measure chain sits at its end.
std::string middle_cut(std::string_view s, std::size_t cap) {
  if (utf16_length(s) <= cap) return std::string(s);
  const std::size_t head = cap / 3, tail = cap - head;
  return std::string(utf16_prefix(s, head)) + " … " + std::string(utf16_suffix(s, tail));
}

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const auto nl = s.find('\n', at);
    if (nl == std::string_view::npos) {
      out.push_back(s.substr(at));
      break;
    }
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// A unified-style hunk of an edit: common leading and trailing lines become context.
void edit_diff(std::string& out, std::string_view old_text, std::string_view new_text) {
  auto a = lines_of(old_text), b = lines_of(new_text);
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  std::size_t post = 0;
  while (post < a.size() - pre && post < b.size() - pre && a[a.size() - 1 - post] == b[b.size() - 1 - post]) ++post;
  if (pre > 0) out += "  " + std::string(a[pre - 1]) + "\n";
  for (std::size_t i = pre; i < a.size() - post; ++i) out += "- " + std::string(a[i]) + "\n";
  for (std::size_t i = pre; i < b.size() - post; ++i) out += "+ " + std::string(b[i]) + "\n";
  if (post > 0) out += "  " + std::string(a[a.size() - post]) + "\n";
}

std::string status_of(const Iteration& it) {
  if (it.pending) return "pending";
  if (it.rewardHack) return "REWARD-HACK";
  if (it.error) return "error: " + middle_cut(flatten(*it.error), 120);
  if (it.correct.has_value()) return *it.correct ? "correct" : "WRONG";
  return "unjudged";
}

}  // namespace

std::string supervisor_digest(const Series& s, const DigestInputs& in) {
  std::ostringstream o;
  const long long done = completed_evals(s);
  const auto phases = evaluation_phases(s, in.budget);
  long long over = 0, wrap = 0, pending = 0;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (s.iterations[i].pending) ++pending;
    else if (phases[i] == "over-budget") ++over;
    else if (phases[i] == "wrap-up") ++wrap;
  }
  o << "## Run summary\n";
  o << "Budget: " << done << "/" << in.budget << " optimization evaluations used; loop round " << in.round << ".\n";
  if (over > 0 || wrap > 0 || pending > 0) {
    o << "Also: " << over << " over budget, " << wrap << " wrap-up/validation, " << pending << " still pending.\n";
  }
  if (in.evalsPerTurn > 0) o << "Pace asked of the agent: at most " << in.evalsPerTurn << " evaluations per turn.\n";
  if (!s.rounds.empty() && in.evalsPerTurn > 0) {
    const double last = s.rounds.back().seq.num;
    long long ran = 0;
    for (const auto& it : s.iterations) if (!it.pending && it.seq.num > last) ++ran;
    o << "Evaluations since the last loop message: " << ran << ".\n";
  }
  if (s.bestIndex && *s.bestIndex < s.iterations.size()) {
    const auto& b = s.iterations[*s.bestIndex];
    o << "Best honest row: #" << (*s.bestIndex + 1) << " " << fmt(*b.latencyMs) << " ms";
    if (b.speedup) o << ", speedup " << fmt(*b.speedup) << "x";
    if (b.artifactPath) o << ", artifact " << *b.artifactPath;
    o << ".\n";
    // S-5: how far the best is from the machine's limit, in the table's words (kopt/labels.hpp), so the
    // reviewer can tell "nothing left to win" from "a 2x over a slow reference".
    const auto bw = b.metric("bandwidth_fraction"), cf = b.metric("compute_fraction");
    if (bw || cf) {
      o << "Best row's distance to the limit:";
      if (bw) o << " " << fill_word(word("limit.bandwidth", false), "{pct}", fraction_label(*bw));
      if (bw && cf) o << ",";
      if (cf) o << " " << fill_word(word("limit.compute", false), "{pct}", fraction_label(*cf));
      o << ".\n";
    } else {
      o << "Best row's distance to the limit: unknown (no bandwidth or compute fraction measured).\n";
    }
  } else {
    o << "Best honest row: none yet.\n";
  }
  // The Final claim as the panel shows it (H-8): the latest finalize call decides; a refusal says why.
  if (const auto claim = final_claim(s.iterations, s.finalize)) {
    if (const auto f = final_number(s.iterations, claim)) {
      o << "Final: #" << (f->index + 1) << " " << fmt(f->latency) << " ms" << (f->remeasured ? ", re-measured by the plugin" : "");
      if (f->self) o << " (first measured " << fmt(*s.iterations[*f->self].latencyMs) << " ms, " << (f->gapPct > 0 ? "+" : "") << fmt(f->gapPct) << "%)";
      o << ".\n";
      // Only a strictly lower latency is faster: an equal best is not called faster than the Final (H-8).
      if (s.bestIndex && *s.bestIndex < s.iterations.size() && *s.bestIndex != f->index && f->self != s.bestIndex &&
          *s.iterations[*s.bestIndex].latencyMs < f->latency)
        o << "The best honest row #" << (*s.bestIndex + 1) << " is faster than the Final.\n";
    } else {
      o << final_refusal_words(*claim->refused).en;
      if (claim->named) o << " (the latest finalize names #" << (*claim->named + 1) << ")";
      o << ".\n";
    }
  }
  if (s.bestIndex && s.iterations[*s.bestIndex].vsBest == Versus::same)
    o << "The best row is within noise of the best before it: not a real gain.\n";
  const long long stagnant = stagnation_count(s);
  if (stagnant > 0) o << "Evaluations since the best: " << stagnant << ".\n";
  if (auto ref = reference_latency(s)) o << "Pooled reference latency: " << fmt(*ref) << " ms.\n";
  if (auto d = reference_drift(s)) {
    o << "Reference drift: implied references range " << fmt(d->min) << ".." << fmt(d->max) << " ms (x"
      << fmt(std::round(d->ratio * 100) / 100) << " over " << d->count << " rows) — speedups are not comparable.\n";
  }
  std::size_t shell = 0, plugin = 0, metric_rows = 0, finalized = 0;
  for (const auto& it : s.iterations) {
    if (it.channel && *it.channel == "shell") ++shell;
    if (it.plugin) ++plugin;
    if (it.finalized) ++finalized;
    for (const auto& m : it.metrics) {
      const auto& k = m.first;
      const bool ratio = k == "speedup" || k == "ref_runtime_ms" || (k.size() > 8 && k.ends_with(".speedup")) ||
                         k.ends_with(".ref_runtime_ms");
      if (!ratio) {
        ++metric_rows;
        break;
      }
    }
  }
  if (plugin > 0) {
    o << "Provenance: " << plugin << " of " << s.iterations.size()
      << " rows were measured by the plugin's evaluator [plugin] (kernel_evaluate: the plugin ran kopt-bench itself; "
         "the agent never relayed these figures).\n";
  }
  if (shell > 0) {
    o << "Provenance: " << shell << " of " << s.iterations.size()
      << " rows are self-reported [shell] (parsed from the agent's command output; the command is shown).\n";
  }
  if (!s.profileSeqs.empty()) {
    o << "Profiling: " << s.profileSeqs.size() << " profiler run(s); " << metric_rows
      << " row(s) carry evaluator metrics.\n";
  } else {
    o << "Profiling: no profiler run seen; " << metric_rows << " row(s) carry evaluator metrics.\n";
  }
  if (finalized > 0) o << "Finalized rows: " << finalized << ".\n";
  if (!s.echoedSeqs.empty()) o << "Echoed (not measured) contract lines: " << s.echoedSeqs.size() << ".\n";
  if (!s.envs.empty()) {
    const auto& e = s.envs.back();
    o << "Environment (agent-reported): " << e.device << " @ " << e.location;
    if (e.constraint) o << " — constraint: " << *e.constraint;
    o << ".\n";
  } else {
    o << "Environment: not reported.\n";
  }
  if (!s.plans.empty()) {
    o << "Plans (latest last):\n";
    const std::size_t from = s.plans.size() > 4 ? s.plans.size() - 4 : 0;
    for (std::size_t i = from; i < s.plans.size(); ++i) {
      const auto& p = s.plans[i];
      o << "- seq " << js_stringify(p.seq.raw) << " [" << p.phase << "] " << p.approach;
      if (p.hypothesis) o << " — because " << *p.hypothesis;
      if (p.next) o << " — next: " << *p.next;
      o << "\n";
    }
    if (plan_stale(s, in.evalsPerTurn)) o << "The last plan is older than the recent evaluations.\n";
  } else {
    o << "Plans: none reported.\n";
  }

  o << "\n## Evaluations";
  const std::size_t n = s.iterations.size();
  const std::size_t from = n > in.tableRows ? n - in.tableRows : 0;
  if (n == 0) o << ": none yet\n";
  else o << " #" << (from + 1) << "..#" << n << " of " << n << "\n";
  for (std::size_t i = from; i < n; ++i) {
    const auto& it = s.iterations[i];
    o << "#" << (i + 1) << " seq " << js_stringify(it.seq.raw) << " " << status_of(it) << " ";
    o << (it.latencyMs ? fmt(*it.latencyMs) + " ms" : std::string("—"));
    if (it.speedup) o << " x" << fmt(*it.speedup);
    if (const auto ci = it.latency_ci()) o << " [" << fmt(ci->lo) << ".." << fmt(ci->hi) << " ms]";
    // S-2: the reviewer is told which gains are real and which are within noise.
    if (const auto c = versus_best(s.iterations, i)) o << " (" << versus_text(std::string("best.") + versus_name(c->verdict), c->effectPct, c->pmPct, false) << ")";
    if (i < phases.size() && phases[i] != "optimization") o << " (" << phases[i] << ")";
    if (s.bestIndex && *s.bestIndex == i) o << " BEST";
    if (it.finalized) o << " FINALIZED";
    o << " [" << (it.plugin ? std::string("plugin") : it.channel ? *it.channel : std::string("tool ") + it.tool) << "]";
    if (it.artifactPath) o << " artifact " << *it.artifactPath;
    if (it.evaluationId) o << " id " << *it.evaluationId;
    std::string metrics;
    for (const auto& m : it.metrics) {
      if (!metrics.empty()) metrics += ", ";
      metrics += m.first + "=" + fmt(m.second);
    }
    if (!metrics.empty()) o << " metrics{" << metrics << "}";
    // N-2: the reviewer judges the full command, not the wire cut.
    const std::string& cmd = !it.fullCommand.empty() ? it.fullCommand : it.command.value_or(std::string());
    if (!cmd.empty()) o << "\n    cmd: " << middle_cut(flatten(cmd), in.commandChars);
    o << "\n";
  }

  // Diffs of the latest iterations that changed code, newest last, capped as a whole.
  std::vector<std::size_t> with_changes;
  for (std::size_t i = n; i-- > 0 && with_changes.size() < in.diffIterations;) {
    if (!s.iterations[i].changes.empty()) with_changes.push_back(i);
  }
  std::reverse(with_changes.begin(), with_changes.end());
  if (!with_changes.empty()) {
    std::string diffs;
    for (std::size_t i : with_changes) {
      for (const auto& c : s.iterations[i].changes) {
        diffs += "--- before #" + std::to_string(i + 1) + ": " + c.kind + " " + c.filePath;
        if (c.replaceAll) diffs += " (replace all)";
        if (c.truncated) diffs += " (text cut by the projection)";
        diffs += "\n";
        if (c.kind == "write") {
          const std::string content = c.content.value_or(std::string());
          for (auto line : lines_of(content)) diffs += "+ " + std::string(line) + "\n";
        } else {
          edit_diff(diffs, c.oldText.value_or(std::string()), c.newText.value_or(std::string()));
        }
      }
    }
    o << "\n## Code changes behind the latest evaluations that changed code (what was really edited)\n";
    if (utf16_length(diffs) > in.diffChars) {
      // Keep the newest changes: they are what the next step builds on.
      o << "… (older diff lines left out)\n" << utf16_suffix(diffs, in.diffChars);
    } else {
      o << diffs;
    }
  } else {
    o << "\n## Code changes: none captured for the evaluations.\n";
  }
  return o.str();
}

}  // namespace kopt
