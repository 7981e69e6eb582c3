#include "kopt/verdict.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

#include "kopt/labels.hpp"

namespace kopt {

std::string latency_label(const Iteration& it) {
  if (!it.latencyMs) return {};
  if (const auto ci = it.latency_ci()) return latency_interval_label(*it.latencyMs, ci->lo, ci->hi);
  return format_latency(*it.latencyMs);
}

std::string verdict_of(const Iteration& it) {
  if (it.pending) return "pending";
  if (it.rewardHack) return "hack";
  if (it.evaluatorFailed) return "evaluator";
  if (it.compiled == std::optional<bool>(false)) return "compile";
  if (it.error) return "error";
  if (it.correct == std::optional<bool>(true)) return "ok";
  if (it.correct == std::optional<bool>(false)) return "wrong";
  return "unknown";
}

std::string trust_of(const Iteration& it) {
  if (it.plugin) return "plugin";
  if (it.is_replay()) return "replay";
  if (it.channel) return it.jobId ? "job" : "self-reported";
  return "tool";
}

std::optional<std::vector<std::string>> trust_lowered(const Iteration& it) {
  if (!it.advisory) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& a : *it.advisory)
    if (a.rfind("agent-chosen ", 0) == 0 || a.rfind("agent-pinned ", 0) == 0 || a.rfind("weaker isolation", 0) == 0)
      out.push_back(a);
  if (out.empty()) return std::nullopt;
  return out;
}

const std::vector<VersusWord>& versus_words() {
  static const std::vector<VersusWord> kWords = {
      {"best.faster", "比此前的最佳 ★ 快 {pct}% ± {pm}", "faster than the ★ before it by {pct}% ± {pm}"},
      {"best.same", "与此前的最佳 ★ 相同（差异在噪声内，{pct}% ± {pm}）", "same as the ★ before it within noise ({pct}% ± {pm})"},
      {"best.slower", "比此前的最佳 ★ 慢 {pct}% ± {pm}", "slower than the ★ before it by {pct}% ± {pm}"},
      {"best.unsure", "无法与此前的最佳 ★ 比较（它没有置信区间）", "unsure against the ★ before it (it has no interval)"},
      {"ref.faster", "比参考实现快 {pct}% ± {pm}", "faster than the reference by {pct}% ± {pm}"},
      {"ref.same", "与参考实现相同（差异在噪声内）", "same as the reference within noise"},
      {"ref.slower", "比参考实现慢 {pct}% ± {pm}", "slower than the reference by {pct}% ± {pm}"},
      {"ref.unsure", "无法判断是否快于参考实现（参考没有置信区间）", "unsure against the reference (it has no interval)"},
      {"gap.faster", "复测更快 {pct}% ± {pm}，超出噪声", "re-measured {pct}% ± {pm} faster, beyond the noise"},
      {"gap.same", "复测与实测相同（在噪声内，± {pm}）", "re-measured the same within noise (± {pm})"},
      {"gap.slower", "复测更慢 {pct}% ± {pm}，超出噪声", "re-measured {pct}% ± {pm} slower, beyond the noise"},
  };
  return kWords;
}

std::string versus_text(std::string_view key, double pct, double pm, bool zh) {
  auto one = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", std::round(std::fabs(v) * 10.0) / 10.0);
    return std::string(buf);
  };
  for (const auto& w : versus_words()) {
    if (w.key != key) continue;
    std::string s = zh ? w.zh : w.en;
    for (const auto& [k, v] : {std::pair<std::string_view, std::string>{"{pct}", one(pct)}, {"{pm}", one(pm)}})
      for (std::size_t at = s.find(k); at != std::string::npos; at = s.find(k, at + v.size())) s.replace(at, k.size(), v);
    return s;
  }
  return {};
}

Words final_refusal_words(std::string_view reason) {
  // What the named evaluation was; a "remeasure-" reason is the plugin's re-measurement of it.
  static const struct {
    std::string_view code;
    const char *zh, *en;
  } kWhy[] = {
      {"not-found", "找不到它指定的评测", "the evaluation it names is not in the log"},
      {"replay", "它指定的是一次复测，不是评测", "it names a re-measurement, not an evaluation"},
      {"pending", "它指定的评测还没有结果", "the evaluation it names has no result yet"},
      {"hack", "它指定的评测被判为作弊", "the evaluation it names was flagged as a reward hack"},
      {"evaluator", "它指定的评测评测器出错", "the evaluator failed on the evaluation it names"},
      {"compile", "它指定的评测编译失败", "the evaluation it names did not compile"},
      {"error", "它指定的评测出错", "the evaluation it names ended in an error"},
      {"wrong", "它指定的评测结果错误", "the evaluation it names gave a wrong result"},
      {"unknown", "它指定的评测没有正确性结论", "the evaluation it names has no correctness verdict"},
      {"no-latency", "它指定的评测没有延迟", "the evaluation it names has no latency"},
      {"bad-latency", "它指定的评测延迟不是正数", "the evaluation it names has a latency that is not positive"},
  };
  Words w{"最终结果被拒绝：", "Final refused: "};
  if (reason.rfind("remeasure-", 0) == 0) {
    const std::string v(reason.substr(10));
    w.zh += "插件复测未通过（" + v + "）", w.en += "the plugin's re-measurement did not pass (" + v + ")";
    return w;
  }
  const std::string_view code = reason;
  for (const auto& k : kWhy)
    if (k.code == code) {
      w.zh += k.zh, w.en += k.en;
      return w;
    }
  w.zh += std::string(code), w.en += std::string(code);
  return w;
}

}  // namespace kopt
