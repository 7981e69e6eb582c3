#include "kopt/finalize.hpp"

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

}  // namespace kopt
