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

// The replay's output as it may go into the tool result (H-5 integrity): every line that the
// projection would read as the replay anchor (anchors::kReplayLinePrefix after leading whitespace,
// as Projector reads it) has the anchor renamed ("[replay] " → "[replay-output] "), so nothing the
// run printed can open a replay block. Lines are split on '\n', as the projection splits them.
std::string neutralize_replay_output(std::string_view output);

}  // namespace kopt
