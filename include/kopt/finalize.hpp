// kernel_finalize's choice of what to re-measure (spec H-3): among the self-reported (shell) points
// and the points the plugin's evaluator measured (DV-13) of the artifact (the same path, K-5) that are
// correct, free of reward hacks and errors, and measured, the fastest — the earliest of equal latencies.
// A shell point's replay runs its whole recorded command (not the D-7 wire form); a plugin point is
// measured again from the bytes it measured (its `sources`, kept in the plugin's store under its
// evaluation id). The tool in lib/finalize.mjs only runs what this picks.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kopt/series.hpp"

namespace kopt {

struct ReplayPick {
  std::size_t index = 0;
  double latencyMs = 0;
  std::string command;  // the whole recorded command; empty when the log did not keep one
  // A plugin point (DV-13): no command; what it measured instead.
  bool plugin = false;
  std::optional<std::string> evaluationId;
  std::optional<MeasuredSources> sources;
};

std::optional<ReplayPick> pick_replay_point(const Series& series, std::string_view artifact);

}  // namespace kopt
