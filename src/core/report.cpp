#include "kopt/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include "kopt/chart.hpp"
#include "kopt/derived.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

// ───────────────────────────── escaping ─────────────────────────────

namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when invalid (overlong, surrogate,
// beyond U+10FFFF, truncated).
std::size_t utf8_decode(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t len;
  char32_t min;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool is_bidi_control(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&#39;";
        ++i;
        continue;
      default:
        break;
    }
    char32_t cp = 0;
    const std::size_t len = utf8_decode(s, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F) {
      out += "\xEF\xBF\xBD";
    } else if (is_bidi_control(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "[U+%04X]", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string csv_field(std::string_view s) {
  const bool quote =
      s.find_first_of(",\"\r\n") != std::string_view::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_text(std::string_view s) {
  if (!s.empty() && (s.front() == '=' || s.front() == '+' || s.front() == '-' || s.front() == '@' ||
                     s.front() == '\t' || s.front() == '\r'))
    return csv_field("'" + std::string(s));
  return csv_field(s);
}

// ───────────────────────────── loading ─────────────────────────────

namespace {

// Cut at most `max` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

constexpr std::size_t kTaskCap = 4000;

}  // namespace

bool load_report_input(const std::string& path, const ProjectionConfig& config, ReportInput& out, std::string& error) {
  Projector projector(config);
  bool ok = read_log_file(
      path,
      [&](const json& ev) {
        projector.feed_event(ev);
        if (!ev.is_object()) return;
        if (auto t = ev.find("time"); t != ev.end())
          if (auto v = as_number(*t); v && std::isfinite(*v)) {
            if (!out.firstTimeMs || *v < *out.firstTimeMs) out.firstTimeMs = *v;
            if (!out.lastTimeMs || *v > *out.lastTimeMs) out.lastTimeMs = *v;
          }
        if (out.task) return;
        auto ty = ev.find("type");
        if (ty == ev.end() || !ty->is_string() || *ty != "user/message") return;
        auto d = ev.find("data");
        if (d == ev.end() || !d->is_object()) return;
        const json* msg = &*d;
        if (auto m = d->find("message"); m != d->end() && m->is_object()) msg = &*m;
        auto src = msg->find("source");
        if (src == msg->end() || !src->is_object()) return;
        auto kind = src->find("kind");
        if (kind == src->end() || !kind->is_string() || *kind != "user") return;
        std::string text = result_text(*msg);
        if (!text.empty()) out.task = cut_utf8(text, kTaskCap);
      },
      out.read);
  if (!ok) {
    error = path + ": " + out.read.error;
    return false;
  }
  out.series = projector.series();
  out.malformedEvents = projector.stats().skipped;
  out.source = path.substr(path.find_last_of('/') + 1);
  return true;
}

// ───────────────────────────── the rows ─────────────────────────────

namespace {

template <class T>
std::optional<std::size_t> last_before(const std::vector<T>& list, double seq) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].seq.num < seq) found = i;
  return found;
}

}  // namespace

Report build_report(ReportInput in) {
  Report r;
  r.in = std::move(in);
  const Series& s = r.in.series;
  r.budget = r.in.budget;
  if (r.budget <= 0)
    for (const auto& rd : s.rounds)
      if (rd.budget && *rd.budget > 0) r.budget = *rd.budget;
  ChartOptions opt;
  opt.width = 1000;
  opt.height = 320;
  opt.budget = r.budget;
  opt.fixedBudget = r.in.budget > 0;  // --budget N: a what-if over the whole log
  r.chart = chart_json(s, opt);
  const auto& phases = r.chart["phases"];
  const std::optional<double> ref = reference_latency(s);
  r.rows.reserve(s.iterations.size());
  const auto row_rounds = rounds_in_force(s);
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    const Iteration& it = s.iterations[i];
    ReportRow row;
    row.phase = i < phases.size() ? phases[i].get<std::string>() : "optimization";
    row.verdict = verdict_of(it);
    row.trust = trust_of(it);
    row.plan = last_before(s.plans, it.seq.num);
    row.round = row_rounds[i];
    if (ref && *ref > 0 && it.latencyMs && *it.latencyMs > 0) row.pooledSpeedup = *ref / *it.latencyMs;
    r.rows.push_back(std::move(row));
  }
  return r;
}

// ───────────────────────────── text ─────────────────────────────

namespace {

struct Text {
  const char* key;
  const char* zh;  // 中文, English beside the labels
  const char* en;
};

const Text kTexts[] = {
    {"title", "算子优化报告 <span class=\"en\">Kernel optimization report</span>", "Kernel optimization report"},
    {"doc.title", "算子优化报告", "Kernel optimization report"},
    {"log", "日志 Log", "Log"},
    {"span", "会话时间 Session", "Session"},
    {"generated", "生成于 Generated", "Generated"},
    {"events", "评测 Evaluations", "Evaluations"},
    {"task", "任务 Task", "Task"},
    {"chip.opt", "优化评测 Optimization", "optimization evaluations"},
    {"chip.over", "超预算 Over budget", "over budget"},
    {"chip.wrap", "收尾验证 Wrap-up", "wrap-up validations"},
    {"chip.budget", "预算 Budget", "budget"},
    {"chip.best", "最佳 Best", "Best"},
    {"chip.final", "最终 Final", "Final"},
    {"chip.noFinal", "未提交最终结果 No final result", "No final result"},
    {"chip.noBest", "没有可信的最佳结果 No honest best", "No honest best"},
    {"chip.opt.tip", "循环预算内的优化评测（不含收尾与复测）",
     "Optimization evaluations within the loop budget (wrap-up and replays excluded)"},
    {"chip.over.tip", "超出预算后仍进行的评测", "Evaluations run after the budget was used up"},
    {"chip.wrap.tip", "收尾阶段的验证评测与插件复测，不计入预算",
     "Validation and replays in the wrap-up phase; not counted against the budget"},
    {"remeasured", "已复测 re-measured", "re-measured"},
    {"final.gap", "自报 {self}，复测相差 {pct} · self-reported {self}, re-measured {pct} off",
     "self-reported {self}, re-measured {pct} off"},
    {"notRemeasured", "未复测 not re-measured", "not re-measured"},
    {"final.re", "插件按记录的命令重新运行测得", "Re-measured by the plugin, re-running the recorded command"},
    {"final.self", "最终数字来自 Agent 自己的测量，未经插件复测",
     "The final number is the agent's own measurement; the plugin did not re-run it"},
    {"curve.title", "优化曲线 Curve", "Optimization curve"},
    {"curve.axisSpeedup", "纵轴：相对参考实现的加速比，越高越快",
     "Y axis: speedup over the reference — higher is faster"},
    {"curve.axisLatency", "纵轴：延迟（越高越快）；本次 run 没有报告加速比",
     "Y axis: latency (higher is faster); this run reports no speedup"},
    {"curve.log", "对数刻度", "log scale"},
    {"curve.unmeasured", "未测得", "n/a"},
    {"curve.budgetBand", "超预算", "over budget"},
    {"curve.wrapBand", "收尾", "wrap-up"},
    {"curve.note",
     "分母说明：加速比按汇总的参考耗时 {ref} 换算（{n} "
     "次评测隐含参考耗时的中位数），因此曲线严格随延迟单调；每次评测自报的倍数见记录表。",
     "Denominator: speedups use the pooled reference latency {ref} (the median of what {n} evaluations imply), so the "
     "curve is strictly monotone in latency; each evaluation's own reported multiple is in the table."},
    {"curve.drift",
     "⚠ 参考耗时不一致：{n} 次评测隐含的参考耗时在 {min} – {max} 之间（相差 "
     "{pct}%）。逐次自报的加速比彼此不可直接比较。",
     "⚠ The denominator moved: {n} evaluations imply reference latencies from {min} to {max} ({pct}% apart). Per-row "
     "reported speedups are not comparable with each other."},
    {"curve.empty", "这个会话没有评测。", "This session has no evaluations."},
    {"curve.hint", "点击曲线上的点跳到记录表中的那一行。", "Click a point to jump to its row in the table."},
    {"legend.ok", "通过 passed", "passed"},
    {"legend.failed", "失败 failed", "failed"},
    {"legend.unmeasured", "未测得 not measured", "not measured"},
    {"legend.best", "最佳 best", "best"},
    {"legend.profiled", "做过性能剖析 profiled", "profiled"},
    {"legend.final", "最终提交 finalized", "finalized"},
    {"axis.best", "最佳", "best"},
    {"verdict.pending", "未完成 pending", "pending"},
    {"verdict.ok", "通过 passed", "passed"},
    {"verdict.wrong", "结果错误 wrong", "wrong result"},
    {"verdict.hack", "作弊检出 reward hack", "reward hack"},
    {"verdict.error", "失败 failed", "failed"},
    {"verdict.compile", "编译失败 no compile", "did not compile"},
    {"verdict.evaluator", "评测器故障 evaluator", "evaluator failed"},
    {"verdict.unknown", "未判定 no verdict", "no verdict"},
    {"phase.over-budget", "超预算 over budget", "over budget"},
    {"phase.wrap-up", "收尾 wrap-up", "wrap-up"},
    {"trust.tool", "评测工具 tool", "evaluator tool"},
    {"trust.self-reported", "自报 self-reported", "self-reported"},
    {"trust.replay", "插件复测 re-measured (replay)", "re-measured by the plugin (replay)"},
    {"trust.job", "后台任务", "background job"},
    {"cmd.full", "完整命令 Full command", "Full command"},
    {"cmd.chars", "字符", "characters"},
    {"table.title", "评测记录 Record", "Record"},
    {"table.n", "#", "#"},
    {"table.verdict", "结论 Verdict", "Verdict"},
    {"table.latency", "延迟 Latency", "Latency"},
    {"table.speedup", "加速比 Speedup", "Speedup"},
    {"table.trust", "可信度 Trust", "Trust"},
    {"table.approach", "当时方案 Approach", "Approach in force"},
    {"table.review", "该轮监督 Supervision", "Supervision"},
    {"table.changes", "改动 Changes", "Changes"},
    {"table.pooled", "按汇总参考换算", "against the pooled reference"},
    {"table.metrics", "指标", "metrics"},
    {"changes.n", "处改动 changes", "changes"},
    {"changes.1", "处改动 change", "change"},
    {"details", "详情 details", "details"},
    {"changes.truncated", "（已截断 truncated）", " (truncated)"},
    {"ch.write", "写入 write", "write"},
    {"ch.edit", "编辑 edit", "edit"},
    {"ch.replaceAll", "全部替换 replace all", "replace all"},
    {"detail.blocking", "阻断项 Blocking", "Blocking"},
    {"detail.advisory", "提示项 Advisory", "Advisory"},
    {"detail.notMeasured", "未测得 Not measured", "Not measured"},
    {"detail.evaluatorFailed", "评测器故障", "evaluator failed"},
    {"detail.workloads", "工作负载子集 Workloads", "Workloads"},
    {"env.title", "评测环境 Environment", "Environment"},
    {"env.none", "Agent 没有汇报评测在哪里运行。", "The agent did not report where evaluations ran."},
    {"env.location", "位置 Location", "Location"},
    {"env.device", "设备 Device", "Device"},
    {"env.constraint", "约束 Constraint", "Constraint"},
    {"env.versions", "版本 Versions", "Versions"},
    {"env.probe", "来源命令 Probe", "Probe"},
    {"env.notes", "备注 Notes", "Notes"},
    {"env.earlier", "此前的环境汇报 Earlier reports", "Earlier reports"},
    {"plan.title", "方案记录 Plans", "Plans"},
    {"plan.none", "Agent 没有汇报方案。", "The agent reported no approach."},
    {"plan.hypothesis", "假设 Hypothesis", "Hypothesis"},
    {"plan.next", "下一步 Next", "Next"},
    {"rev.title", "监督记录 Supervision", "Supervision records"},
    {"rev.none", "没有监督记录。", "No supervision records."},
    {"rev.round", "第 {n} 轮", "Round {n}"},
    {"rev.wrapup", "收尾复审", "Wrap-up review"},
    {"rev.audit", "终审", "Final review"},
    {"rev.failed", "监督失败 Review failed", "Review failed"},
    {"rev.challenge", "早停质询", "Challenge"},
    {"rev.ok", "✓ 无异议 OK", "✓ OK"},
    {"rev.advice", "建议 advice", "advice"},
    {"rev.used", "已用 {d}/{b} 次评测", "{d}/{b} evaluations used"},
    {"note.title", "说明 Notes", "Notes"},
    {"note.uncollected", "⚠ 有 {n} 个评测结果来自报告不收录的通道，未计入记录。",
     "⚠ {n} evaluation results came through a channel this report does not collect; they are not in the record."},
    {"note.echoed", "有 {n} 行评测结果只是被 echo 打印出来的，不算测量。",
     "{n} result lines were only echoed, not measured."},
    {"note.skipped", "⚠ 读取日志时跳过了 {n} 行无法解析的内容、{m} 个格式错误的事件。",
     "⚠ Reading the log skipped {n} unreadable line(s) and {m} malformed event(s)."},
    {"note.truncated", "⚠ 日志不完整：{e}。报告只包含读到的部分。",
     "⚠ The log is incomplete: {e}. The report covers what could be read."},
    {"footer",
     "由 <code>kopt report</code> 从会话日志离线生成；单个文件，不含脚本与外部资源。日志中的文字均按原样转义显示。",
     "Generated offline from the session log by <code>kopt report</code>; one file, no scripts, no external resources. "
     "Text from the log is shown escaped, as logged."},
};

const char* T(ReportLang lang, std::string_view key) {
  for (const auto& t : kTexts)
    if (key == t.key) return lang == ReportLang::Zh ? t.zh : t.en;
  return "";
}

std::string fill(std::string s, std::initializer_list<std::pair<const char*, std::string>> subs) {
  for (const auto& [k, v] : subs) {
    const std::string key = k;
    for (std::size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + v.size()))
      s.replace(p, key.size(), v);
  }
  return s;
}

std::string times(double v) {
  char buf[48];
  if (v >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return std::string("×") + buf;
}

std::string num(double v) {
  return js_number(v);
}

// Times come from the log: anything outside ±100 000 years is shown as "?".
constexpr double kMaxTimeMs = 3.2e15;

std::string utc_time(double ms) {
  if (!(std::fabs(ms) < kMaxTimeMs)) return "?";
  const std::time_t t = static_cast<std::time_t>(std::floor(ms / 1000));
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return "?";
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string duration_text(double ms) {
  if (!(std::fabs(ms) < kMaxTimeMs)) return "?";
  const long long sec = static_cast<long long>(std::llround(std::max(0.0, ms) / 1000));
  char buf[48];
  if (sec < 60)
    std::snprintf(buf, sizeof buf, "%llds", sec);
  else if (sec < 3600)
    std::snprintf(buf, sizeof buf, "%lld min", sec / 60);
  else
    std::snprintf(buf, sizeof buf, "%lld h %lld min", sec / 3600, (sec % 3600) / 60);
  return buf;
}

std::string seq_text(const Seq& s) {
  return s.raw.is_string() ? s.raw.get<std::string>() : js_stringify(s.raw);
}

std::string round_label(ReportLang lang, const Round& r) {
  if (r.audit) return T(lang, "rev.audit");
  if (r.challenge) return T(lang, "rev.challenge");
  if (r.wrapUp) return T(lang, "rev.wrapup");
  return fill(T(lang, "rev.round"), {{"{n}", r.round ? std::to_string(*r.round) : std::string("—")}});
}

std::string verdict_tone(const std::string& v) {
  if (v == "ok") return "ok";
  if (v == "pending" || v == "unknown") return "dim";
  if (v == "evaluator") return "warn";
  return "bad";
}

const char* kCss = R"CSS(
:root{--text:#1f2329;--dim:#4e5969;--faint:#7b8391;--border:rgba(120,128,140,.24);--card:#fff;--bg:#f6f7f9;
--accent:#4d6bfe;--ok:#1f8f5f;--bad:#d64545;--warn:#b87200;--final:#8a5cf6;--prof:#c27c0e;--band:rgba(194,124,14,.07);--band2:rgba(138,92,246,.07);
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono CJK SC","DejaVu Sans Mono",monospace}
@media (prefers-color-scheme:dark){:root{--text:#e6e8eb;--dim:#b4bac4;--faint:#8a919c;--border:rgba(160,168,180,.22);--card:#1c1e22;--bg:#141518;
--accent:#7c93ff;--ok:#3fbf86;--bad:#f06a6a;--warn:#e0a03a;--final:#a989ff;--prof:#e0a03a}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:14px/1.6 system-ui,-apple-system,"Segoe UI","PingFang SC","Hiragino Sans GB","Noto Sans CJK SC","Source Han Sans SC","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif}
main{max-width:1240px;margin:0 auto;padding:28px 24px 48px;display:flex;flex-direction:column;gap:16px}
header h1{margin:0;font-size:22px;font-weight:600;letter-spacing:.2px}
header h1 .en{color:var(--faint);font-weight:400;font-size:17px;margin-left:4px}
.meta{display:flex;flex-wrap:wrap;gap:4px 18px;margin-top:6px;color:var(--dim);font-size:13px}
.meta b{font-weight:500;color:var(--faint);margin-right:6px}
.card{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:16px 20px}
.card h2{margin:0 0 10px;font-size:15px;font-weight:600;display:flex;align-items:baseline;gap:10px;flex-wrap:wrap}
.card h2 small{font-weight:400;color:var(--faint);font-size:12.5px}
.chips{display:flex;flex-wrap:wrap;gap:8px}
.chip{display:inline-flex;align-items:baseline;gap:6px;padding:5px 12px;border-radius:999px;border:1px solid var(--border);background:var(--card);font-size:13px;color:var(--dim)}
.chip b{font-size:15px;color:var(--text);font-weight:600;font-variant-numeric:tabular-nums}
.chip.ok{border-color:rgba(31,143,95,.4)}.chip.ok b{color:var(--ok)}
.chip.warn{border-color:rgba(184,114,0,.45)}.chip.warn b{color:var(--warn)}
.chip.final{border-color:rgba(138,92,246,.45)}.chip.final b{color:var(--final)}
.chip .re{color:var(--ok)}.chip .nre{color:var(--warn)}
.task{white-space:pre-wrap;word-break:break-word;color:var(--dim);max-height:9.6em;overflow:auto;margin:0;font-size:13.5px}
svg.curve{display:block;width:100%;height:auto;font:11.5px system-ui,-apple-system,"Segoe UI","PingFang SC","Noto Sans CJK SC",sans-serif}
svg.curve .grid{stroke:var(--border);stroke-width:1}
svg.curve .axis{fill:var(--faint)}
svg.curve .frame{stroke:var(--border);fill:none}
svg.curve .band-over{fill:var(--band)}svg.curve .band-wrap{fill:var(--band2)}
svg.curve .band-label{fill:var(--faint);font-size:11px}
svg.curve .line{fill:none;stroke:var(--accent);stroke-width:1.8;stroke-linejoin:round;opacity:.9}
svg.curve .bestline{stroke:var(--ok);stroke-width:1.2;stroke-dasharray:6 5;opacity:.8}
svg.curve .bestlabel{fill:var(--ok);font-size:12px}
svg.curve .baseline{stroke:var(--border);stroke-dasharray:2 4}
svg.curve .pt.ok{fill:var(--accent);stroke:var(--card);stroke-width:1}
svg.curve .pt.failed{fill:var(--card);stroke:var(--bad);stroke-width:1.8}
svg.curve .pt.unmeasured{fill:none;stroke:var(--faint);stroke-width:1.5}
svg.curve .pt.bad{fill:none;stroke:var(--bad);stroke-width:1.5}
svg.curve .pt.pending{fill:none;stroke:var(--faint);stroke-width:1.5;stroke-dasharray:2 2}
svg.curve .pt{pointer-events:all}
svg.curve a:hover .pt{stroke:var(--text);stroke-width:2}
svg.curve .beststar{fill:var(--ok);font-size:15px;pointer-events:none}
svg.curve .flag{fill:var(--final);font-size:13px}
svg.curve .prof{fill:var(--prof);font-size:11px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--dim);margin-top:6px}
.legend i{font-style:normal;margin-right:4px}
.note{font-size:12.5px;color:var(--faint);margin-top:6px}
.warnbox{margin-top:8px;padding:8px 12px;border-radius:8px;border:1px solid rgba(184,114,0,.4);background:rgba(194,124,14,.07);color:var(--text);font-size:13px}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:16px}
.grid2>*{min-width:0}
dl.kv{display:grid;grid-template-columns:auto 1fr;gap:4px 14px;margin:0;font-size:13px}
dl.kv dt{color:var(--faint)}dl.kv dd{margin:0;word-break:break-word}
.tag{display:inline-block;padding:0 7px;border-radius:6px;font-size:12px;line-height:20px;border:1px solid var(--border);color:var(--dim);white-space:nowrap}
.tag.ok{color:var(--ok);border-color:rgba(31,143,95,.4)}.tag.bad{color:var(--bad);border-color:rgba(214,69,69,.4)}
.tag.warn{color:var(--warn);border-color:rgba(184,114,0,.45)}.tag.dim{color:var(--faint)}
.tag.tool{color:var(--accent);border-color:rgba(77,107,254,.4)}.tag.replay{color:var(--final);border-color:rgba(138,92,246,.45)}
.tablewrap{overflow-x:auto;border:1px solid var(--border);border-radius:8px}
table.rec{width:100%;border-collapse:collapse;font-size:13px}
table.rec th{text-align:left;font-weight:500;color:var(--faint);font-size:12px;padding:7px 8px;border-bottom:1px solid var(--border);background:var(--bg);white-space:nowrap}
table.rec td{padding:7px 8px;border-bottom:1px solid var(--border);vertical-align:top;font-variant-numeric:tabular-nums}
table.rec tr:last-child td{border-bottom:0}
table.rec tr.best td{background:rgba(31,143,95,.05)}
table.rec tr:target td{background:rgba(77,107,254,.10)}
table.rec td.n{white-space:nowrap;color:var(--dim)}
table.rec td.num{white-space:nowrap}
table.rec td.num .sub{white-space:normal;min-width:12em;max-width:22em}
.star{color:var(--ok);margin-left:3px}.flagc{color:var(--final);margin-left:3px}
.sub{display:block;font-size:12px;color:var(--faint);margin-top:2px;word-break:break-word}
.err{display:block;font-size:12px;color:var(--bad);margin-top:3px;word-break:break-word;white-space:pre-wrap}
.cmd{display:block;font:12px/1.45 var(--mono);color:var(--dim);word-break:break-all;white-space:pre-wrap;margin-top:3px;max-height:7.5em;overflow:auto;unicode-bidi:isolate}
pre{font:12px/1.45 var(--mono);margin:4px 0;padding:6px 8px;white-space:pre-wrap;word-break:break-word;background:rgba(127,127,127,.08);border-radius:6px;max-height:240px;overflow:auto}
pre.old{border-left:3px solid rgba(214,69,69,.6)}pre.new{border-left:3px solid rgba(31,143,95,.6)}
details summary{cursor:pointer;color:var(--accent);font-size:12.5px;white-space:nowrap}
details[open] summary{margin-bottom:4px}
.chg{margin-top:6px}.chg .path{font:12px var(--mono);color:var(--text);word-break:break-all}
td.trust{max-width:300px}td.appr{min-width:120px;max-width:220px}td.rev{min-width:110px;max-width:220px}td.chgs{min-width:80px;max-width:360px}
td.rev summary,td.chgs summary{white-space:normal}
.revtext{white-space:pre-wrap;word-break:break-word}
.okc{color:var(--ok)}
ol.plans,ol.revs{margin:0;padding-left:0;list-style:none;display:flex;flex-direction:column;gap:8px;font-size:13px}
ol.plans li,ol.revs li{display:flex;gap:10px}
ol.plans li>span:first-child,ol.revs li>span:first-child{flex:none;min-width:86px;color:var(--faint)}
ol.plans li>:last-child,ol.revs li>:last-child{min-width:0;overflow-wrap:anywhere}
ol.plans .tag,td.appr .tag{white-space:normal;overflow-wrap:anywhere}
td.appr,td.rev{overflow-wrap:anywhere}
footer{color:var(--faint);font-size:12px;text-align:center;margin-top:4px}
code{font-family:var(--mono);font-size:.95em}
@media print{body{background:#fff}.card{break-inside:avoid-page}main{max-width:none}}
)CSS";

// ───────────────────────────── the curve ─────────────────────────────

double jnum(const json& j, const char* k, double dflt = 0) {
  if (!j.is_object()) return dflt;
  auto it = j.find(k);
  if (it == j.end() || !it->is_number()) return dflt;
  return it->get<double>();
}
std::string jstr(const json& j, const char* k) {
  if (!j.is_object()) return {};
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void svg_curve(std::string& o, const Report& r, ReportLang lang) {
  const json& c = r.chart;
  const auto& its = r.in.series.iterations;
  const double W = jnum(c, "width", 1000), H = jnum(c, "height", 320);
  const json& P = c["plot"];
  const double L = jnum(P, "left"), R = jnum(P, "right"), Tp = jnum(P, "top"), B = jnum(P, "bottom");
  const json& pts = c["points"];
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
      const double x0 = i == 0 ? L : (jnum(pts[i - 1], "x") + jnum(pts[i], "x")) / 2;
      const double x1 = j + 1 >= n ? R : (jnum(pts[j], "x") + jnum(pts[j + 1], "x")) / 2;
      const bool over = ph == "over-budget";
      o += "<rect class=\"" + std::string(over ? "band-over" : "band-wrap") + "\" data-kopt=\"band-" + ph + "\" x=\"" +
           num(x0) + "\" y=\"" + num(Tp) + "\" width=\"" + num(std::max(0.0, x1 - x0)) + "\" height=\"" + num(B - Tp) +
           "\"/>";
      if (x1 - x0 > 40)
        o += "<text class=\"band-label\" x=\"" + num(x0 + 6) + "\" y=\"" + num(Tp + 13) + "\">" +
             html_escape(T(lang, over ? "curve.budgetBand" : "curve.wrapBand")) + "</text>";
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
    o += "<path class=\"line\" d=\"" + html_escape(line) + "\"/>\n";
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
    std::string tip = "#" + std::to_string(i + 1);
    if (i < r.rows.size()) tip += " · " + std::string(T(lang, ("verdict." + r.rows[i].verdict).c_str()));
    if (auto lab = jstr(p, "label"); !lab.empty()) tip += " · " + lab;
    if (i < its.size() && its[i].speedup)
      tip += " · " + times(*its[i].speedup);
    else if (auto sl = jstr(p, "speedupLabel"); speedup && !sl.empty())
      tip += " · " + sl;
    if (i < r.rows.size()) tip += " · " + std::string(T(lang, ("trust." + r.rows[i].trust).c_str()));
    o += "<a href=\"#e" + std::to_string(i + 1) + "\"><circle class=\"pt " + cls + "\" data-kopt=\"point\" cx=\"" +
         num(jnum(p, "x")) + "\" cy=\"" + num(jnum(p, "y")) + "\" r=\"" + num(rad) + "\"><title>" + html_escape(tip) +
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
std::string final_gap(const json& fin, ReportLang lang) {
  if (!fin.contains("selfReported") || !fin["selfReported"].is_object()) return "";
  const bool flag = fin.value("gapFlag", false);
  const double pct = jnum(fin, "gapPct");
  std::string p = (pct > 0 ? "+" : "") + num(pct) + "%";
  return std::string(" · <span data-kopt=\"final-gap\" data-flag=\"") + (flag ? "1\" class=\"nre\">⚠ " : "0\">") +
         fill(T(lang, "final.gap"), {{"{self}", html_escape(jstr(fin["selfReported"], "label"))}, {"{pct}", p}}) +
         "</span>";
}

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
      value += " · " + times(*best.speedup);
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
         std::string(T(lang, "chip.final")) + " · #" + std::to_string(idx + 1), T(lang, re ? "final.re" : "final.self"),
         std::string(" · <span class=\"") + (re ? "re" : "nre") + "\" data-kopt=\"" +
             (re ? "remeasured" : "not-remeasured") + "\">" + T(lang, re ? "remeasured" : "notRemeasured") + "</span>" +
             final_gap(fin, lang));
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

void record_table(std::string& o, const Report& r, ReportLang lang) {
  const auto& s = r.in.series;
  o += "<section class=\"card\" data-kopt=\"records\"><h2>" + std::string(T(lang, "table.title")) + " <small>" +
       std::to_string(s.iterations.size()) + "</small></h2>\n";
  if (s.iterations.empty()) {
    o += "<div class=\"note\">" + std::string(T(lang, "curve.empty")) + "</div></section>\n";
    return;
  }
  o += "<div class=\"tablewrap\"><table class=\"rec\"><thead><tr>";
  for (const char* k : {"table.n", "table.verdict", "table.latency", "table.speedup", "table.trust", "table.approach",
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
    o += "<td><span class=\"tag " + verdict_tone(row.verdict) + "\">" + T(lang, ("verdict." + row.verdict).c_str()) +
         "</span>";
    if (row.phase != "optimization")
      o += " <span class=\"tag warn\">" + std::string(T(lang, ("phase." + row.phase).c_str())) + "</span>";
    if (it.error) o += "<span class=\"err\">" + html_escape(*it.error) + "</span>";
    if (it.evaluatorFailed && !it.error)
      o += "<span class=\"err\">" + std::string(T(lang, "detail.evaluatorFailed")) + "</span>";
    o += "</td>";
    // latency
    o += "<td class=\"num\">" + (it.latencyMs ? html_escape(format_latency(*it.latencyMs)) : std::string("—"));
    if (!it.metrics.empty()) {
      std::string m;
      for (const auto& [k, v] : it.metrics) m += (m.empty() ? "" : " · ") + k + " " + num(v);
      o += "<span class=\"sub\" title=\"" + html_escape(T(lang, "table.metrics")) + "\">" + html_escape(m) + "</span>";
    }
    o += "</td>";
    // speedup
    o += "<td class=\"num\">";
    if (it.speedup)
      o += html_escape(times(*it.speedup));
    else if (row.pooledSpeedup)
      o += "<span class=\"sub\" title=\"" + html_escape(T(lang, "table.pooled")) + "\">(" +
           html_escape(times(*row.pooledSpeedup)) + ")</span>";
    o += "</td>";
    // trust
    const char* tcls = row.trust == "tool" ? "tool" : row.trust == "replay" ? "replay" : "";
    o += "<td class=\"trust\"><span class=\"tag " + std::string(tcls) + "\" data-kopt=\"trust-" + row.trust + "\">" +
         T(lang, ("trust." + row.trust).c_str()) + "</span>";
    if (it.jobId)
      o += " <span class=\"tag dim\">" + (row.trust == "job" ? std::string() : std::string(T(lang, "trust.job")) + " ") +
           html_escape(*it.jobId) + "</span>";
    if (row.trust == "tool")
      o += "<span class=\"sub\">" + html_escape(it.tool) +
           (it.evaluationId ? " · " + html_escape(*it.evaluationId) : "") + "</span>";
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
    if (rd.review) reviewed.push_back(&rd);
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
    if (*rd->review == "ok")
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

}  // namespace

std::string report_html(const Report& r, ReportLang lang) {
  std::string o;
  o.reserve(64 * 1024 + r.in.series.iterations.size() * 2048);
  o += "<!doctype html>\n<html lang=\"";
  o += lang == ReportLang::Zh ? "zh-CN" : "en";
  o += "\">\n<head>\n<meta charset=\"utf-8\">\n"
       // No script, no fetch: the page is inert even if a string slipped through.
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src "
       "data:\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<meta name=\"generator\" content=\"kopt report\">\n<title>";
  o += html_escape(std::string(T(lang, "doc.title")) + " · " + r.in.source);
  o += "</title>\n<style>";
  o += kCss;
  o += "</style>\n</head>\n<body>\n<main>\n<header data-kopt=\"header\"><h1>";
  o += T(lang, "title");
  o += "</h1>\n<div class=\"meta\"><span><b>" + std::string(T(lang, "log")) + "</b>" + html_escape(r.in.source) +
       "</span>";
  if (r.in.firstTimeMs && r.in.lastTimeMs)
    o += "<span><b>" + std::string(T(lang, "span")) + "</b>" + utc_time(*r.in.firstTimeMs) + " · " +
         duration_text(*r.in.lastTimeMs - *r.in.firstTimeMs) + "</span>";
  o +=
      "<span><b>" + std::string(T(lang, "events")) + "</b>" + std::to_string(r.in.series.iterations.size()) + "</span>";
  if (r.in.generatedAtMs > 0)
    o += "<span><b>" + std::string(T(lang, "generated")) + "</b>" + utc_time(r.in.generatedAtMs) + "</span>";
  o += "</div></header>\n";
  if (r.in.task)
    o += "<section class=\"card\" data-kopt=\"task\"><h2>" + std::string(T(lang, "task")) +
         "</h2><pre class=\"task\">" + html_escape(*r.in.task) + "</pre></section>\n";
  chips(o, r, lang);
  curve_card(o, r, lang);
  o += "<div class=\"grid2\">\n";
  env_card(o, r, lang);
  plans_card(o, r, lang);
  o += "</div>\n";
  record_table(o, r, lang);
  reviews_card(o, r, lang);
  notes_card(o, r, lang);
  o += "<footer>" + std::string(T(lang, "footer")) + "</footer>\n</main>\n</body>\n</html>\n";
  return o;
}

// ───────────────────────────── CSV and JSON ─────────────────────────────

std::string report_csv(const Report& r) {
  const auto& s = r.in.series;
  static const char* kCols[] = {"index",         "seq",     "tool",          "phase",        "verdict",       "trust",
                                "compiled",      "correct", "latencyMs",     "speedup",      "pooledSpeedup", "best",
                                "finalized",     "channel", "jobId",         "evaluationId", "artifactPath",  "command",
                                "commandLength", "error",   "approachPhase", "approach",     "round",         "review",
                                "changes",       "metrics"};
  std::string o;
  for (std::size_t k = 0; k < std::size(kCols); ++k) {
    if (k) o += ',';
    o += kCols[k];
  }
  o += "\r\n";
  auto b = [](const std::optional<bool>& v) { return v ? std::string(*v ? "true" : "false") : std::string(); };
  auto d = [](const std::optional<double>& v) { return v ? js_number(*v) : std::string(); };
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    const Iteration& it = s.iterations[i];
    const ReportRow& row = r.rows[i];
    std::vector<std::string> f;
    f.push_back(std::to_string(i + 1));
    f.push_back(csv_text(seq_text(it.seq)));
    f.push_back(csv_text(it.tool));
    f.push_back(row.phase);
    f.push_back(row.verdict);
    f.push_back(row.trust);
    f.push_back(b(it.compiled));
    f.push_back(b(it.correct));
    f.push_back(d(it.latencyMs));
    f.push_back(d(it.speedup));
    f.push_back(d(row.pooledSpeedup));
    f.push_back(s.bestIndex == i ? "true" : "");
    f.push_back(it.finalized ? "true" : "");
    f.push_back(it.channel ? csv_text(*it.channel) : "tool");
    f.push_back(it.jobId ? csv_text(*it.jobId) : "");
    f.push_back(it.evaluationId ? csv_text(*it.evaluationId) : "");
    f.push_back(it.artifactPath ? csv_text(*it.artifactPath) : "");
    f.push_back(csv_text(!it.fullCommand.empty() ? it.fullCommand : it.command.value_or("")));
    f.push_back(it.commandLength ? std::to_string(*it.commandLength) : "");
    f.push_back(it.error ? csv_text(*it.error) : "");
    f.push_back(row.plan ? csv_text(s.plans[*row.plan].phase) : "");
    f.push_back(row.plan ? csv_text(s.plans[*row.plan].approach) : "");
    f.push_back(row.round && s.rounds[*row.round].round ? std::to_string(*s.rounds[*row.round].round) : "");
    f.push_back(row.round && s.rounds[*row.round].review ? csv_text(*s.rounds[*row.round].review) : "");
    f.push_back(std::to_string(it.changes.size()));
    if (it.metrics.empty()) {
      f.push_back("");
    } else {
      json m = json::object();
      for (const auto& [k, v] : it.metrics) m[k] = v;
      f.push_back(csv_field(js_stringify(m)));
    }
    for (std::size_t k = 0; k < f.size(); ++k) {
      if (k) o += ',';
      o += f[k];
    }
    o += "\r\n";
  }
  return o;
}

json report_json(const Report& r) {
  const auto& s = r.in.series;
  json o = json::object();
  o["kind"] = "kopt-report";
  o["version"] = 1;
  json src = json::object();
  src["log"] = r.in.source;
  src["lines"] = r.in.read.lines;
  src["events"] = r.in.read.events;
  src["skippedLines"] = r.in.read.skipped;
  src["malformedEvents"] = r.in.malformedEvents;
  src["truncated"] = r.in.read.truncated;
  if (!r.in.read.error.empty()) src["error"] = r.in.read.error;
  if (r.in.firstTimeMs) src["firstTimeMs"] = *r.in.firstTimeMs;
  if (r.in.lastTimeMs) src["lastTimeMs"] = *r.in.lastTimeMs;
  if (r.in.task) src["task"] = *r.in.task;
  o["source"] = std::move(src);
  o["budget"] = r.budget;
  json sum = json::object();
  sum["evaluations"] = s.iterations.size();
  sum["counts"] = r.chart["counts"];
  if (s.bestIndex && *s.bestIndex < s.iterations.size()) {
    const auto& best = s.iterations[*s.bestIndex];
    json bj = {{"index", *s.bestIndex}};
    if (best.latencyMs) bj["latencyMs"] = *best.latencyMs, bj["label"] = format_latency(*best.latencyMs);
    if (best.speedup) bj["speedup"] = *best.speedup;
    if (*s.bestIndex < r.rows.size() && r.rows[*s.bestIndex].pooledSpeedup)
      bj["pooledSpeedup"] = *r.rows[*s.bestIndex].pooledSpeedup;
    sum["best"] = std::move(bj);
  } else {
    sum["best"] = nullptr;
  }
  sum["final"] = r.chart["final"];
  sum["reference"] = r.chart["reference"];
  sum["drift"] = r.chart["drift"];
  sum["uncollected"] = s.uncollectedSeqs.size();
  sum["echoed"] = s.echoedSeqs.size();
  o["summary"] = std::move(sum);
  o["series"] = to_json(s, r.in.source, r.in.generatedAtMs);
  o["chart"] = r.chart;
  json rows = json::array();
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const ReportRow& row = r.rows[i];
    json j = {{"index", i}, {"phase", row.phase}, {"verdict", row.verdict}, {"trust", row.trust}};
    if (!s.iterations[i].fullCommand.empty()) j["command"] = s.iterations[i].fullCommand;
    if (row.plan) j["plan"] = *row.plan;
    if (row.round) j["round"] = *row.round;
    if (row.pooledSpeedup) j["pooledSpeedup"] = *row.pooledSpeedup;
    rows.push_back(std::move(j));
  }
  o["rows"] = std::move(rows);
  return o;
}

// ───────────────────────────── the command ─────────────────────────────

namespace {

int report_usage() {
  std::fputs(
      "usage: kopt report LOG [-o OUT.html] [--csv OUT.csv] [--json OUT.json] [--lang zh|en] [--budget N]\n"
      "                       [--config CONFIG.json]\n"
      "  LOG: a JSON array of events, session.jsonl or session.jsonl.zstd. Without -o/--csv/--json the\n"
      "  HTML goes to stdout. --budget: the loop budget for the phase split (default: from the log).\n",
      stderr);
  return 2;
}

bool write_out(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return false;
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(f.flush());
}

double now_ms() {
  return static_cast<double>(std::time(nullptr)) * 1000;
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  std::string log, html_out, csv_out, json_out, config_path;
  ReportLang lang = ReportLang::Zh;
  long long budget = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if ((a == "-o" || a == "--output") && has_value)
      html_out = args[++i];
    else if (a == "--csv" && has_value)
      csv_out = args[++i];
    else if (a == "--json" && has_value)
      json_out = args[++i];
    else if (a == "--config" && has_value)
      config_path = args[++i];
    else if (a == "--lang" && has_value) {
      const std::string& v = args[++i];
      if (v == "zh")
        lang = ReportLang::Zh;
      else if (v == "en")
        lang = ReportLang::En;
      else
        return report_usage();
    } else if (a == "--budget" && has_value) {
      try {
        budget = std::stoll(args[++i]);
      } catch (const std::exception&) {
        return report_usage();
      }
      if (budget < 1) return report_usage();
    } else if (log.empty() && a.rfind("-", 0) != 0) {
      log = a;
    } else {
      return report_usage();
    }
  }
  if (log.empty()) return report_usage();
  if (html_out.empty() && csv_out.empty() && json_out.empty()) html_out = "-";

  ProjectionConfig cfg;
  std::string err;
  if (!config_path.empty()) {
    std::ifstream f(config_path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto c = f ? parse_json(text) : std::nullopt;
    if (!c) {
      std::fprintf(stderr, "kopt: %s: cannot read or not valid JSON\n", config_path.c_str());
      return 1;
    }
    if (std::string e = cfg.apply_json(*c); !e.empty()) {
      std::fprintf(stderr, "kopt: %s: %s\n", config_path.c_str(), e.c_str());
      return 1;
    }
  }
  ReportInput in;
  if (!load_report_input(log, cfg, in, err)) {
    std::fprintf(stderr, "kopt: %s\n", err.c_str());
    return 1;
  }
  if (!in.read.error.empty()) std::fprintf(stderr, "kopt: warning: %s\n", in.read.error.c_str());
  in.budget = budget;
  in.generatedAtMs = now_ms();
  const Report r = build_report(std::move(in));
  struct Out {
    const std::string& path;
    std::string (*make)(const Report&, ReportLang);
  };
  const Out outs[] = {
      {html_out, [](const Report& x, ReportLang l) { return report_html(x, l); }},
      {csv_out, [](const Report& x, ReportLang) { return report_csv(x); }},
      {json_out, [](const Report& x, ReportLang) { return js_stringify(report_json(x)) + "\n"; }},
  };
  for (const auto& o : outs) {
    if (o.path.empty()) continue;
    if (!write_out(o.path, o.make(r, lang))) {
      std::fprintf(stderr, "kopt: cannot write %s\n", o.path.c_str());
      return 1;
    }
    if (o.path != "-") std::fprintf(stderr, "kopt: wrote %s\n", o.path.c_str());
  }
  return 0;
}

}  // namespace kopt
