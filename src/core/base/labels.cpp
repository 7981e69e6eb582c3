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
  };
  return kWords;
}

const char* word(std::string_view key, bool zh) {
  for (const auto& w : words())
    if (key == w.key) return zh ? w.zh : w.en;
  return "";
}

const std::vector<const char*>& verdict_names() {
  static const std::vector<const char*> kNames = {"pending", "ok",      "wrong",    "hack",
                                                  "error",   "compile", "evaluator", "unknown"};
  return kNames;
}

std::string words_json() {
  std::string o = "{";
  for (const bool zh : {true, false}) {
    o += zh ? "\"zh\":{" : ",\"en\":{";
    bool first = true;
    for (const auto& w : words()) {
      if (!first) o += ',';
      first = false;
      js_quote_to(o, w.key);
      o += ':';
      js_quote_to(o, zh ? w.zh : w.en);
    }
    o += '}';
  }
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
