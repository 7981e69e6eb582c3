#include "kopt/finalize.hpp"

#include "kopt/anchors.hpp"
#include "kopt/contract.hpp"
#include "kopt/match.hpp"

namespace kopt {

std::optional<ReplayPick> pick_replay_point(const Series& series, std::string_view artifact) {
  std::optional<ReplayPick> best;
  for (std::size_t i = 0; i < series.iterations.size(); ++i) {
    const Iteration& it = series.iterations[i];
    const bool shell = it.channel && *it.channel == "shell";
    if (it.pending || !(shell || it.plugin) || !it.artifactPath || !same_path(*it.artifactPath, artifact)) continue;
    if (!it.honest_measured()) continue;
    if (best && !(*it.latencyMs < best->latencyMs)) continue;  // strict: the earliest of equal latencies
    best = ReplayPick{i, *it.latencyMs, it.plugin ? std::string() : it.fullCommand, it.plugin, it.evaluationId, it.sources};
  }
  return best;
}

std::string neutralize_replay_output(std::string_view output) {
  // The anchor renamed: "-output" before its closing bracket ("[replay] " -> "[replay-output] ").
  static const std::string renamed = [] {
    std::string a(anchors::kReplayLinePrefix);
    const auto close = a.rfind(']');
    return close == std::string::npos ? "output " + a : a.insert(close, "-output");
  }();
  std::string out;
  out.reserve(output.size());
  std::size_t start = 0;
  while (start <= output.size()) {
    const std::size_t nl = output.find('\n', start);
    const std::string_view line = output.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    const std::string_view t = js_trim_start(line);
    if (t.substr(0, anchors::kReplayLinePrefix.size()) == anchors::kReplayLinePrefix) {
      out.append(line.substr(0, line.size() - t.size()));
      out.append(renamed);
      out.append(t.substr(anchors::kReplayLinePrefix.size()));
    } else {
      out.append(line);
    }
    if (nl == std::string_view::npos) break;
    out.push_back('\n');
    start = nl + 1;
  }
  return out;
}

}  // namespace kopt
