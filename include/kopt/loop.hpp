// LoopController: the /kloop state machine (spec M-7..M-9, M-14). Inputs (arm, human stop, turn
// end, settled turn, supervisor answer) go in with the current series; actions (send this text,
// ask the supervisor, abort the running turn) come out. No clock, no I/O: the host executes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/anchors.hpp"
#include "kopt/derived.hpp"
#include "kopt/json.hpp"
#include "kopt/series.hpp"
#include "kopt/supervisor.hpp"

namespace kopt {

// The strings the projection parses back out of the log live in kopt/anchors.hpp (one home).

// --- message texts (loop_text.cpp) ---------------------------------------------------------

// A review's result as it rides a message: advice, or an approval with an optional note.
struct ReviewOutcome {
  bool reviewed = false;  // an answer came back (advice or approval)
  std::optional<std::string> advice;
  std::optional<std::string> note;
  // A review was asked for and gave no usable answer: timeout | error | aborted | empty. The message
  // says so (one line), so the record never shows an older review in its place.
  std::optional<std::string> failure;
  static ReviewOutcome from(const Verdict& v);
};

struct ContinuationText {
  Lang lang = Lang::en;
  long long round = 1, evalsDone = 0, budget = 20;
  long long paceEvals = 0;   // "at most N evaluations this turn"; 0 = no pace line
  long long stagnant = 0;    // evaluations since the best (a nudge from 3)
  bool taskKnown = true, planKnown = true, envKnown = true, planStale = false;
  bool challenge = false;    // the supervisor overruled an early finalize
  std::string finalizeHint = "run_finalize / kernel_finalize";
  ReviewOutcome review;
};
std::string continuation_text(const ContinuationText& in);
std::string wrapup_text(Lang lang, long long evals_done, long long budget, std::string_view reason,
                        std::string_view finalize_hint, const ReviewOutcome& review);
std::string audit_text(Lang lang, const ReviewOutcome& review);
// The run language a loop message declares (our language line), if any.
std::optional<Lang> language_of_message(std::string_view text);

// --- the controller ----------------------------------------------------------------------

// A run's budget: a whole number of evaluations in [kBudgetMin, kBudgetMax] (the panel's arm, the
// /kloop argument, the config's defaultBudget); anything else means the default.
inline constexpr long long kBudgetMin = 1, kBudgetMax = 9999;
bool valid_budget(double v);

// The loop settings the plugin config may set: their defaults and bounds, one table. LoopSettings
// reads it, and the plugin's config validation gets it from the addon (kopt.loopRules,
// loop_rules_json) instead of stating it again.
struct LoopKnob {
  const char* name;
  long long fallback, min, max;
};
inline constexpr LoopKnob kDefaultBudget{"defaultBudget", 20, kBudgetMin, kBudgetMax};
inline constexpr LoopKnob kEvalsPerTurn{"evalsPerTurn", 3, 0, 100};
inline constexpr LoopKnob kMaxNoProgressRounds{"maxNoProgressRounds", 2, 1, 100};
// S-5: wrap up once ★ runs within this % of the machine's limit (its native_metrics' bandwidth_fraction
// or compute_fraction, the larger, at least pct / 100); 0 = off, the default.
inline constexpr LoopKnob kWrapUpAtLimitPct{"wrapUpAtLimitPct", 0, 0, 100};
inline constexpr bool kChallengeFinalize = true;
inline constexpr bool kSignificantProgress = true;  // S-4
// {"defaultBudget": {"default", "min", "max"}, "evalsPerTurn": …, "maxNoProgressRounds": …, "wrapUpAtLimitPct": …,
//  "challengeFinalize": {"default"}, "budget": {"min", "max"}}
json loop_rules_json();

struct LoopSettings {
  long long defaultBudget = kDefaultBudget.fallback;
  long long evalsPerTurn = kEvalsPerTurn.fallback;  // pace; 0 = no pace instruction
  long long maxNoProgressRounds = kMaxNoProgressRounds.fallback;
  bool challengeFinalize = kChallengeFinalize;  // an early finalize with budget left goes to the supervisor
  // S-4: where the points carry intervals, a round is progress only when the best became significantly faster.
  bool significantProgress = kSignificantProgress;
  long long wrapUpAtLimitPct = kWrapUpAtLimitPct.fallback;  // S-5: 0 = off
  std::string finalizeHint = "run_finalize / kernel_finalize";
  std::string supervisorInstructions; // appended to the rubric
  bool available = true;              // the host composed the loop (agents + llm)
  // Keys as in the plugin config: defaultBudget, evalsPerTurn, maxNoProgressRounds, wrapUpAtLimitPct (a value outside
  // its LoopKnob's bounds is left at the default), challengeFinalize, finalizeHint, instructions,
  // available. Unknown keys ignored.
  static LoopSettings from_json(const json& j);
};

struct Route {
  std::string provider, model;
  std::optional<std::string> reasoningEffort;
  json to_json() const;
  static std::optional<Route> from_json(const json& j);  // needs non-empty provider and model
};

// Host facts at the moment of an input.
struct HostFacts {
  bool agentIdle = true;
  bool humanQueued = false;  // a human message waits in the agent's inbox
  bool hasUserTask = true;   // M-16
};

// The supervisor call's outcome as the host saw it.
struct SupervisorAnswer {
  std::string text;
  std::string finish = "stop";  // stop | max-tokens | error | timeout | aborted
};

struct Action {
  enum class Type { send, review, abort_turn, disarmed };
  Type type = Type::send;
  // send: kind continuation | challenge | wrap-up | audit; the text to follow up with.
  std::string kind;
  std::string text;
  // review: a token to answer with, and the call to make.
  std::uint64_t token = 0;
  ReviewKind reviewKind = ReviewKind::progress;
  std::string system, prompt;
  Route route;
  int attempt = 1;
  // disarmed: the reason (finalized | converged | budget | at-limit | no-progress | stopped).
  std::string reason;
  json to_json() const;
};
using Actions = std::vector<Action>;

class LoopController {
 public:
  explicit LoopController(LoopSettings settings = {});

  // Arms (M-9 resets); a budget that is not valid_budget, or none, = the default. Returns no action:
  // the host checks for a settled turn right after.
  Actions arm(std::optional<long long> budget, Lang lang);
  // Human stop (command, panel, status strip): disarm `stopped`, abort the running turn (keep
  // queued human messages), no wrap-up; a review in flight is forgotten.
  Actions stop();
  // A turn ended; reason as logged (completed, aborted, error, …). An aborted turn disarms.
  Actions turn_ended(std::string_view reason);
  // The host cancelled the agent's work (session.cancel — the composer's stop button — or any
  // other cancel), whether or not a turn was running: a human stop that the host already carries
  // out, so it disarms `stopped` and forgets a review in flight without a second abort. An idle
  // agent logs no turn end for such a cancel, so this is the only trace of it.
  Actions host_cancelled(std::string_view cause);
  // The agent's turn settled (after the host's settle delay).
  Actions settled(const Series& s, const HostFacts& facts);
  // The supervisor answered (or failed) for `token`. The series and facts are re-read now.
  Actions supervisor_answered(std::uint64_t token, const SupervisorAnswer& answer, const Series& s,
                              const HostFacts& facts);

  // Supervision (M-14). Turning on without any route is refused: returns an error message.
  std::optional<std::string> set_supervise(bool on);
  void set_config_route(std::optional<Route> route);
  void set_override(std::optional<Route> route);
  std::optional<Route> effective_route() const;

  // P-4 control object; series gives evalsDone (nullptr = zeros).
  json control_json(const Series* s) const;
  // The same with evalsDone (completed_evals) already known.
  json control_json(long long evals_done) const;
  // The state as LoopState (for decide_continuation and tests).
  LoopState loop_state() const;

  bool armed() const { return armed_; }
  bool review_pending() const { return pending_.has_value(); }
  long long round() const { return round_; }
  long long budget() const { return budget_; }
  std::optional<Lang> language() const { return lang_; }
  const std::optional<std::string>& stop_reason() const { return stopReason_; }
  bool supervise() const { return supervise_; }
  const LoopSettings& settings() const { return settings_; }
  LoopSettings& settings() { return settings_; }

 private:
  struct Pending {
    std::uint64_t token;
    std::uint64_t epoch;
    ReviewKind kind;
    long long evalsAtAsk;
    std::string decision;  // continue | wrap-up | stop
    std::string reason;
    int attempt;
    Route route;
    std::string system, prompt;
    double finalizeAtAsk = -1;  // latest finalized seq the review saw
  };
  Actions checkpoint(const Series& s, const HostFacts& facts);
  Actions commit(const Series& s, const HostFacts& facts, const std::string& decision,
                 const std::string& reason, std::optional<ReviewKind> kind, const ReviewOutcome& review);
  Action ask(ReviewKind kind, const Series& s, long long evals_done, const std::string& decision,
             const std::string& reason);
  void disarm(const std::string& reason, Actions& out);
  // The next round begins (the counters move on): its message's common part.
  ContinuationText next_round(Lang lang, long long done, std::optional<std::size_t> best, const ReviewOutcome& review);

  LoopSettings settings_;
  bool everArmed_ = false, armed_ = false;
  long long budget_ = 0, round_ = 0, lastEvalCount_ = 0, noProgressRounds_ = 0;
  std::optional<std::size_t> lastBest_;  // the best at the last round's message (S-4)
  std::optional<double> challengedFinalizeSeq_;
  std::optional<std::string> stopReason_;
  std::optional<Lang> lang_;
  bool supervise_ = false;
  std::optional<Route> configRoute_, override_;
  std::optional<std::string> lastAdvice_;
  std::optional<Pending> pending_;
  std::uint64_t epoch_ = 0, nextToken_ = 1;
};

// --- the /control route and the slash commands (loop_control.cpp) -------------------------

struct ControlReply {
  int status = 200;
  json body;        // {control} | {error} | {error, control}
  Actions actions;  // to execute (a stop's abort)
  bool armed = false;  // this request armed the loop: the host checks for a settled turn now
  json to_json() const;  // {status, body, actions, armed}
};
// Q-2, for a session the host already found. fallback_lang: the panel's interface language, used
// when the body names no outputLanguage.
ControlReply apply_control(LoopController& c, std::string_view body_text, const Series* s, Lang fallback_lang);

struct CommandReply {
  bool ok = true;
  std::string text;
  Actions actions;
  bool armed = false;
  json to_json() const;  // {ok, text, actions, armed}
};
json actions_json(const Actions& actions);
// `/kloop [n] | stop | status`; run_lang: supervisor.language, or the agent's language.
CommandReply kloop_command(LoopController& c, std::string_view raw, const Series* s, Lang run_lang);
// `/supervise on | off | use provider/model [effort] | use default | status`.
CommandReply supervise_command(LoopController& c, std::string_view raw);

}  // namespace kopt
