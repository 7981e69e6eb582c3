// The HTML report's words (Chinese with English beside, or English) and its small formatters.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "report_parts.hpp"

namespace kopt::report_parts {
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
    {"curve.unmeasured", "未测得", "n/a"},
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
    {"cmd.full", "完整命令 Full command", "Full command"},
    {"cmd.chars", "字符", "characters"},
    {"table.title", "评测记录 Record", "Record"},
    {"table.trust", "可信度 Trust", "Trust"},
    {"table.pooled", "按汇总参考换算", "against the pooled reference"},
    {"table.metrics", "指标", "metrics"},
    {"changes.n", "处改动 changes", "changes"},
    {"changes.1", "处改动 change", "change"},
    {"details", "详情 details", "details"},
    {"changes.truncated", "（已截断 truncated）", " (truncated)"},
    {"ch.replaceAll", "全部替换 replace all", "replace all"},
    {"detail.evaluatorFailed", "评测器故障", "evaluator failed"},
    {"detail.workloads", "工作负载子集 Workloads", "Workloads"},
    {"env.none", "Agent 没有汇报评测在哪里运行。", "The agent did not report where evaluations ran."},
    {"env.earlier", "此前的环境汇报 Earlier reports", "Earlier reports"},
    {"plan.title", "方案记录 Plans", "Plans"},
    {"plan.none", "Agent 没有汇报方案。", "The agent reported no approach."},
    {"rev.title", "监督记录 Supervision", "Supervision records"},
    {"rev.none", "没有监督记录。", "No supervision records."},
    {"rev.advice", "建议 advice", "advice"},
    {"rev.used", "已用 {d}/{b} 次评测", "{d}/{b} evaluations used"},
    {"note.title", "说明 Notes", "Notes"},
    {"note.skipped", "⚠ 读取日志时跳过了 {n} 行无法解析的内容、{m} 个格式错误的事件。",
     "⚠ Reading the log skipped {n} unreadable line(s) and {m} malformed event(s)."},
    {"note.truncated", "⚠ 日志不完整：{e}。报告只包含读到的部分。",
     "⚠ The log is incomplete: {e}. The report covers what could be read."},
    // The comparison page (kopt report A B …, compare_html.cpp).
    {"cmp.title", "运行对比 <span class=\"en\">Compare runs</span>", "Compare runs"},
    {"cmp.doc", "运行对比", "Compare runs"},
    {"cmp.sessions", "会话 Sessions", "Sessions"},
    {"cmp.curve", "曲线叠加 Curves", "Curves"},
    {"cmp.table", "逐次运行 Runs", "Runs"},
    {"cmp.axisSpeedup", "纵轴：相对参考的加速比（越高越快）。各次运行测量所对的参考一致，加速比可以放在一根轴上。",
     "Y axis: speedup over the reference (higher is faster). The runs measured against the same reference, so their speedups share one axis."},
    {"cmp.axisLatency", "纵轴：延迟（越高越快）。加速比不能放在一根轴上，按延迟比较：",
     "Y axis: latency (higher is faster). The speedups cannot share one axis, so the runs are compared by latency:"},
    {"cmp.axisLatencyPlain", "纵轴：延迟（越高越快）。", "Y axis: latency (higher is faster)."},
    {"cmp.col.run", "运行 Run", "Run"},
    {"cmp.col.model", "模型 Model", "Model"},
    {"cmp.col.budget", "预算 · 已用 Budget · used", "Budget · used"},
    {"cmp.col.best", "最佳 Best", "Best"},
    {"cmp.col.final", "最终 Final", "Final"},
    {"cmp.col.near", "达到最佳 90% Evals to 90 %", "Evaluations to 90 %"},
    {"cmp.col.wall", "到最佳用时 Time to best", "Time to best"},
    {"cmp.col.ref", "参考 Reference", "Reference"},
    {"cmp.supervisor", "监督 supervisor", "supervisor"},
    {"cmp.noModel", "日志里没有记录", "not in the log"},
    {"cmp.unreadable", "读不出来 unreadable", "unreadable"},
    {"cmp.none", "—", "—"},
    {"cmp.evalN", "第 {n} 次 #{n}", "#{n}"},
    {"cmp.noRef", "没有加速比 no speedup", "no speedup"},
    {"cmp.hash", "参考文件 reference file", "reference file"},
    {"cmp.hover", "悬停一个点看它属于哪次运行；表中「已复测」是插件按记录的命令重新测得的最终数字。",
     "Hover a point to see which run it belongs to; “re-measured” in the table is the final number the plugin measured again by re-running the recorded command."},
    {"footer",
     "由 <code>kopt report</code> 从会话日志离线生成；单个文件，不含脚本与外部资源。日志中的文字均按原样转义显示。",
     "Generated offline from the session log by <code>kopt report</code>; one file, no scripts, no external resources. "
     "Text from the log is shown escaped, as logged."},
};

}  // namespace

// The report's own words first; then the shared table (kopt/labels.hpp), where the Chinese report puts the
// English beside a word by the word's own `beside`.
const char* T(ReportLang lang, std::string_view key) {
  for (const auto& t : kTexts)
    if (key == t.key) return lang == ReportLang::Zh ? t.zh : t.en;
  if (lang == ReportLang::En) return word(key, false);
  static const std::vector<std::string> kBoth = [] {
    std::vector<std::string> v;
    for (const auto& w : words()) v.push_back(w.beside ? std::string(w.zh) + w.beside + w.en : std::string(w.zh));
    return v;
  }();
  for (std::size_t i = 0; i < words().size(); ++i)
    if (key == words()[i].key) return kBoth[i].c_str();
  return "";
}

const char* word_alone(ReportLang lang, std::string_view key) { return word(key, lang == ReportLang::Zh); }

std::string fill(std::string s, std::initializer_list<std::pair<const char*, std::string>> subs) {
  for (const auto& [k, v] : subs) s = fill_word(std::move(s), k, v);
  return s;
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

std::string seq_text(const Seq& s) {
  return s.raw.is_string() ? s.raw.get<std::string>() : js_stringify(s.raw);
}

std::string round_label(ReportLang lang, const Round& r) {
  return fill(T(lang, r.label_key()), {{"{n}", r.round_text()}});
}

double jnum(const json& j, const char* k, double dflt) {
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

}  // namespace kopt::report_parts
