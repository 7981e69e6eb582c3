// The labels the user reads, made once (include/kopt/labels.hpp).
#include "kopt/labels.hpp"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>

#include "kopt/json.hpp"

namespace kopt {

// Fixed notation unless the exponent is below -6 or at least p, as JavaScript does.
std::string to_precision(double v, int p) {
  if (!std::isfinite(v)) return "NaN";
  if (v == 0) {
    std::string s = "0";
    if (p > 1) {
      s += '.';
      s.append(static_cast<std::size_t>(p - 1), '0');
    }
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
  // Built by appending: GCC 12 misreports `"lit" + std::string&&` as an overlapping memcpy (-Wrestrict).
  if (neg) out += '-';
  if (e < -6 || e >= p) {
    out += digits.substr(0, 1);
    if (p > 1) out.append(".").append(digits, 1, std::string::npos);
    out += e >= 0 ? "e+" : "e-";
    out += std::to_string(e >= 0 ? e : -e);
  } else if (e >= 0) {
    out += digits.substr(0, static_cast<std::size_t>(e) + 1);
    if (static_cast<int>(digits.size()) > e + 1) out.append(".").append(digits, static_cast<std::size_t>(e) + 1, std::string::npos);
  } else {
    out += "0.";
    out.append(static_cast<std::size_t>(-e - 1), '0');
    out += digits;
  }
  return out;
}

std::string short_number(double v) {
  std::string s = to_precision(v, 3);
  if (s.find('e') != std::string::npos || s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string format_latency(double ms) {
  if (ms < 1) return to_precision(ms * 1000, 3) + "µs";
  if (ms < 1000) return to_precision(ms, 4) + "ms";
  return to_precision(ms / 1000, 3) + "s";
}

namespace {
// One decimal, as the versus sentences write their figures.
std::string one_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::round(std::fabs(v) * 10.0) / 10.0);
  return buf;
}
}  // namespace

std::string interval_label(double ms, double lo, double hi) {
  if (!(ms > 0) || !std::isfinite(ms) || !std::isfinite(lo) || !std::isfinite(hi)) return "± ?";
  const double pm = std::max(std::fabs(hi - ms), std::fabs(ms - lo)) / ms * 100.0;
  if (pm < 0.05) return "± <0.1%";
  return "± " + one_decimal(pm) + "%";
}

std::string latency_interval_label(double ms, double lo, double hi) {
  return format_latency(ms) + " " + interval_label(ms, lo, hi);
}

std::string effect_label(double pct, double pm) { return one_decimal(pct) + "% ± " + one_decimal(pm); }

std::string fraction_label(double f) { return short_number(f * 100.0) + "%"; }

std::string speedup_label(double v) {
  std::string s = "×";
  if (!std::isfinite(v)) return s + js_number(v);
  // Number(v.toPrecision(3)): the three digits read back, then written as JavaScript writes a number.
  return s + js_number(std::strtod(to_precision(v, 3).c_str(), nullptr));
}

std::string duration_label(double ms) {
  if (!(std::fabs(ms) < 3.2e15)) return "?";
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

std::string_view verdict_tone(std::string_view v) {
  if (v == "ok") return "ok";
  if (v == "pending" || v == "unknown") return "dim";
  if (v == "evaluator") return "warn";
  return "bad";
}

const std::vector<Word>& words() {
  static const std::vector<Word> kWords = {
      {"verdict.pending", "未完成", "pending"},
      {"verdict.ok", "通过", "passed"},
      {"verdict.wrong", "结果错误", "wrong result"},
      {"verdict.hack", "作弊检出", "reward hack"},
      {"verdict.error", "失败", "failed"},
      {"verdict.compile", "编译失败", "did not compile"},
      {"verdict.evaluator", "评测器故障", "evaluator failed"},
      {"verdict.unknown", "未判定", "no verdict"},
      {"trust.plugin", "插件评测器实测", "measured by the plugin's evaluator"},
      {"trust.replay", "插件复测", "re-measured by the plugin"},
      {"trust.tool", "评测工具直接返回", "returned by the evaluator tool"},
      {"trust.self-reported", "Agent 转述的测量", "relayed by the agent"},
      {"trust.job", "后台任务输出", "background job output"},
      {"limit.bandwidth", "占内存带宽上限的 {pct}", "{pct} of memory bandwidth"},
      {"limit.compute", "占算力峰值的 {pct}", "{pct} of the compute peak"},
      {"limit.line", "内存带宽 100%", "100 % of memory bandwidth"},
      {"limit.above", "（在图的上方）", "(above the plot)"},
      {"limit.below", "（在图的下方）", "(below the plot)"},
      {"versus.faster", "更快", "faster"},
      {"versus.same", "噪声内相同", "same within noise"},
      {"versus.slower", "更慢", "slower"},
      {"versus.unsure", "无法判断", "unsure"},
      // The page words: the tab and the HTML report show these alike (Word::page). A nullptr `beside`
      // keeps the Chinese report to the Chinese (sentences, tooltips, a word standing alone).
      {"legend.ok", "通过", "passed", " ", true},
      {"legend.failed", "失败", "failed", " ", true},
      {"legend.unmeasured", "未测得", "not measured", " ", true},
      {"legend.best", "最佳", "best", " ", true},
      {"legend.profiled", "做过性能剖析", "profiled", " ", true},
      {"legend.final", "最终提交", "finalized", " ", true},
      {"axis.best", "最佳", "best", nullptr, true},
      {"phase.over-budget", "超预算", "over budget", " ", true},
      {"phase.wrap-up", "收尾", "wrap-up", " ", true},
      {"chip.opt.tip", "循环预算内的优化评测（不含收尾与复测）",
       "Optimization evaluations within the loop budget (wrap-up and replays excluded)", nullptr, true},
      {"chip.over.tip", "超出预算后仍进行的评测", "Evaluations run after the budget was used up", nullptr, true},
      {"chip.wrap.tip", "收尾阶段的验证评测与插件复测，不计入预算",
       "Validation and replays in the wrap-up phase; not counted against the budget", nullptr, true},
      {"chip.remeasured", "已复测", "re-measured", " ", true},
      {"chip.notRemeasured", "未复测", "not re-measured", " ", true},
      {"chip.gap", "自报 {self}，复测相差 {pct}", "self-reported {self}, re-measured {pct} off", " · ", true},
      {"chip.gap.plugin", "实测 {self}，复测相差 {pct}", "measured {self}, re-measured {pct} off", " · ", true},
      {"chip.final.re", "插件按记录的命令重新运行测得", "Re-measured by the plugin, re-running the recorded command",
       nullptr, true},
      {"chip.final.self", "最终数字来自 Agent 自己的测量，未经插件复测",
       "The final number is the agent's own measurement; the plugin did not re-run it", nullptr, true},
      {"curve.title", "优化曲线", "Optimization curve", " ", true},
      {"curve.axisSpeedup", "纵轴：相对参考实现的加速比，越高越快", "Y axis: speedup over the reference — higher is faster",
       nullptr, true},
      {"curve.axisLatency", "纵轴：延迟（越高越快）；本次 run 没有报告加速比",
       "Y axis: latency (higher is faster); this run reports no speedup", nullptr, true},
      {"curve.log", "对数刻度", "log scale", nullptr, true},
      {"table.n", "#", "#", nullptr, true},
      {"table.verdict", "结论", "Verdict", " ", true},
      {"table.latency", "延迟", "Latency", " ", true},
      {"table.speedup", "加速比", "Speedup", " ", true},
      {"table.review", "该轮监督", "Supervision", " ", true},
      {"table.changes", "改动", "Changes", " ", true},
      {"approach.inForce", "当时方案", "Approach in force", " ", true},
      {"ch.write", "写入", "write", " ", true},
      {"ch.edit", "编辑", "edit", " ", true},
      {"detail.blocking", "阻断项", "Blocking", " ", true},
      {"detail.advisory", "提示项", "Advisory", " ", true},
      {"detail.notMeasured", "未测得", "Not measured", " ", true},
      {"env.title", "评测环境", "Evaluation environment", " ", true},
      {"env.location", "位置", "Location", " ", true},
      {"env.device", "设备", "Device", " ", true},
      {"env.constraint", "约束", "Constraint", " ", true},
      {"env.versions", "版本", "Versions", " ", true},
      {"env.probe", "来源命令", "Probe", " ", true},
      {"env.notes", "备注", "Notes", " ", true},
      {"plan.hypothesis", "假设", "Hypothesis", " ", true},
      {"plan.next", "下一步", "Next", " ", true},
      {"rev.round", "第 {n} 轮", "Round {n}", nullptr, true},
      {"rev.wrapup", "收尾复审", "Wrap-up review", nullptr, true},
      {"rev.audit", "终审", "Final review", nullptr, true},
      {"rev.challenge", "早停质询", "Early-stop challenge", nullptr, true},
      {"rev.failed", "监督失败", "Review failed", " ", true},
      {"rev.ok", "✓ 无异议", "✓ no objection", nullptr, true},
      {"note.echoed", "有 {n} 行评测结果只是被 echo 打印出来的，不算测量。", "{n} evaluation line(s) were only echoed, not measured.",
       nullptr, true},
      {"note.uncollected", "⚠ 有 {n} 个评测结果来自不收录的通道，未计入记录。",
       "⚠ {n} evaluation result(s) came through a channel that is not collected; they are not in the record.", nullptr,
       true},
      {"md.title", "算子优化记录", "Kernel optimization run"},
      {"md.n", "#", "#"},
      {"md.approach", "方案", "approach"},
      {"md.latency", "延迟（中位数）", "latency (median)"},
      {"md.interval", "区间", "interval"},
      {"md.samples", "样本数", "samples"},
      {"md.vsBest", "对比 ★", "vs ★"},
      {"md.vsReference", "对比参考", "vs reference"},
      {"md.speedup", "加速比", "speedup"},
      {"md.bandwidth", "带宽占比", "bandwidth"},
      {"md.none", "这次运行没有测得延迟的评测。", "No evaluation of this run measured a latency."},
      {"md.legend",
       "★ 最佳 · ⚑ 最终提交 · 区间：延迟中位数的置信区间，取较宽一侧占中位数的百分比 · 对比 ★：与它得出结果时的最佳点比较（# 为那个点）；"
       "相差不到 1% 或区间重叠为噪声内相同 · 加速比在括号里时按汇总参考换算 · 带宽占比：占探测到的带宽上限的比例（GB/s 为实测带宽）· 空格 = 未知",
       "★ best · ⚑ finalized · interval: the confidence interval of the median latency, its wider side in % of the median · "
       "vs ★: against the best when the point settled (# names it); under 1 % apart or overlapping intervals is the same within "
       "noise · a speedup in parentheses is against the pooled reference · bandwidth: the fraction of the probed bandwidth "
       "limit (GB/s as measured) · empty = unknown"},
  };
  return kWords;
}

const char* word(std::string_view key, bool zh) {
  for (const auto& w : words())
    if (key == w.key) return zh ? w.zh : w.en;
  return "";
}

std::string fill_word(std::string text, std::string_view key, std::string_view value) {
  for (std::size_t p = text.find(key); p != std::string::npos; p = text.find(key, p + value.size())) text.replace(p, key.size(), value);
  return text;
}

const std::vector<const char*>& verdict_names() {
  static const std::vector<const char*> kNames = {"pending", "ok",      "wrong",    "hack",
                                                  "error",   "compile", "evaluator", "unknown"};
  return kNames;
}

namespace {
// The tab draws the verdict, provenance and limit words itself; the export words are the core's alone.
bool sent_to_tab(const Word& w) {
  const std::string_view k = w.key;
  return k.rfind("verdict.", 0) == 0 || k.rfind("trust.", 0) == 0 || k.rfind("limit.", 0) == 0;
}
bool is_page(const Word& w) { return w.page; }
// {"zh":{key:word…},"en":{…} for the words `pick` takes, appended to `o` after its opening brace.
void append_words(std::string& o, bool (*pick)(const Word&)) {
  for (const bool zh : {true, false}) {
    o += zh ? "\"zh\":{" : ",\"en\":{";
    bool first = true;
    for (const auto& w : words()) {
      if (!pick(w)) continue;
      if (!first) o += ',';
      first = false;
      js_quote_to(o, w.key);
      o += ':';
      js_quote_to(o, zh ? w.zh : w.en);
    }
    o += '}';
  }
}
}  // namespace

std::string page_words_json() {
  std::string o = "{";
  append_words(o, is_page);
  return o + "}";
}

std::string words_json() {
  std::string o = "{";
  append_words(o, sent_to_tab);
  o += ",\"tone\":{";
  bool first = true;
  for (const char* v : verdict_names()) {
    if (!first) o += ',';
    first = false;
    js_quote_to(o, v);
    o += ':';
    js_quote_to(o, verdict_tone(v));
  }
  return o + "}}";
}

}  // namespace kopt
