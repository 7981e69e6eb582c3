// Verdict and trust of one measured point: decided once, here. The /series body carries them per row
// (fields `verdict`, `trust`, `trustLowered`; docs/protocol.md), and the tab and the report only read them.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "kopt/series.hpp"

namespace kopt {

// pending | hack | evaluator | compile | error | ok | wrong | unknown (first match wins, in that order).
std::string verdict_of(const Iteration& it);

// Where the figure comes from: "plugin" (measured by the plugin's evaluator: kernel_evaluate, DV-13), "replay"
// (re-measured by the plugin), "job" (a background job's output relayed
// by the agent), "self-reported" (the agent relayed a command's output), "tool" (returned by the evaluator tool).
std::string trust_of(const Iteration& it);

// Why the trust is lowered, as the evaluator's own advisories said it: an agent-chosen non-default kopt-bench
// option (`agent-chosen …`, `agent-pinned …`) or weaker isolation (`weaker isolation: …`). Absent when none.
std::optional<std::vector<std::string>> trust_lowered(const Iteration& it);

// A measured point's latency as the user reads it, made once for the comparison (the tab's and the page's),
// the report's record table and the exports: "1.234ms ± 0.8%" where the point carries an interval
// (latency_interval_label, kopt/labels.hpp), else "1.234ms"; "" without a latency.
std::string latency_label(const Iteration& it);

// Why a finalize is not the Final (FinalClaim::refused, derived.hpp), in words: {zh, en}, each a whole
// sentence the tab and the report show after "⚑". The one home of these words.
struct Words {
  std::string zh, en;
};
Words final_refusal_words(std::string_view reason);

// Spec S: how a point compares, in words, for `best.<v>` (against the best before it, ★), `ref.<v>`
// (against its reference) and `gap.<v>` (the finalize re-measurement against the first measurement),
// v one of faster / same / slower / unsure. Templates with {pct} and {pm} (percent, one decimal); the
// chart carries the table (`versusWords`) and the tab, the report and the digest fill it. The one home.
struct VersusWord {
  std::string_view key;
  const char *zh, *en;
};
const std::vector<VersusWord>& versus_words();
// The filled sentence for key ("best.faster" …), or "" for an unknown key.
std::string versus_text(std::string_view key, double pct, double pm, bool zh);

}  // namespace kopt
