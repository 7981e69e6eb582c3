#include "kopt/verdict.hpp"

namespace kopt {

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

}  // namespace kopt
