// LoopController: checkpoint decisions (M-7, M-8), human stop and aborts (M-9), supervision (M-14).
#include "kopt/loop.hpp"

#include <algorithm>
#include <cmath>

namespace kopt {

namespace {

Action disarmed_action(const std::string& reason) {
  Action a;
  a.type = Action::Type::disarmed;
  a.reason = reason;
  return a;
}

Action send_action(std::string kind, std::string text) {
  Action a;
  a.type = Action::Type::send;
  a.kind = std::move(kind);
  a.text = std::move(text);
  return a;
}

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; });
}

double finalize_mark(const Series& s) { return accepted_finalize_seq(s).value_or(-1); }

}  // namespace

bool valid_budget(double v) {
  return v >= static_cast<double>(kBudgetMin) && v <= static_cast<double>(kBudgetMax) && v == std::floor(v);
}

json loop_rules_json() {
  json out = json::object();
  for (const LoopKnob& k : {kDefaultBudget, kEvalsPerTurn, kMaxNoProgressRounds, kWrapUpAtLimitPct}) {
    json r = json::object();
    r["default"] = k.fallback;
    r["min"] = k.min;
    r["max"] = k.max;
    out[k.name] = r;
  }
  json c = json::object();
  c["default"] = kChallengeFinalize;
  out["challengeFinalize"] = c;
  out["significantProgress"] = json{{"default", kSignificantProgress}};
  json b = json::object();
  b["min"] = kBudgetMin;
  b["max"] = kBudgetMax;
  out["budget"] = b;
  return out;
}

LoopSettings LoopSettings::from_json(const json& j) {
  LoopSettings s;
  if (!j.is_object()) return s;
  const auto knob = [&](const LoopKnob& k, long long& out) {
    if (auto it = j.find(k.name); it != j.end()) {
      if (auto v = as_number(*it); v && *v >= static_cast<double>(k.min) && *v <= static_cast<double>(k.max) && *v == std::floor(*v)) {
        out = static_cast<long long>(*v);
      }
    }
  };
  knob(kDefaultBudget, s.defaultBudget);
  knob(kEvalsPerTurn, s.evalsPerTurn);
  knob(kMaxNoProgressRounds, s.maxNoProgressRounds);
  knob(kWrapUpAtLimitPct, s.wrapUpAtLimitPct);
  if (auto it = j.find("challengeFinalize"); it != j.end() && it->is_boolean()) s.challengeFinalize = it->get<bool>();
  if (auto it = j.find("significantProgress"); it != j.end() && it->is_boolean()) s.significantProgress = it->get<bool>();
  if (auto it = j.find("available"); it != j.end() && it->is_boolean()) s.available = it->get<bool>();
  if (auto it = j.find("finalizeHint"); it != j.end() && it->is_string() && !it->get<std::string>().empty()) {
    s.finalizeHint = it->get<std::string>();
  }
  if (auto it = j.find("instructions"); it != j.end() && it->is_string()) s.supervisorInstructions = it->get<std::string>();
  return s;
}

json Route::to_json() const {
  json j = json::object();
  j["provider"] = provider;
  j["model"] = model;
  if (reasoningEffort) j["reasoningEffort"] = *reasoningEffort;
  return j;
}

std::optional<Route> Route::from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto str = [&](const char* key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Route r{str("provider"), str("model"), std::nullopt};
  if (r.provider.empty() || r.model.empty()) return std::nullopt;
  if (auto e = str("reasoningEffort"); !e.empty()) r.reasoningEffort = e;
  return r;
}

json Action::to_json() const {
  json j = json::object();
  switch (type) {
    case Type::send:
      j["type"] = "send";
      j["kind"] = kind;
      j["text"] = text;
      break;
    case Type::review:
      j["type"] = "review";
      j["token"] = token;
      j["kind"] = std::string(review_kind_name(reviewKind));
      j["provider"] = route.provider;
      j["model"] = route.model;
      if (route.reasoningEffort) j["reasoningEffort"] = *route.reasoningEffort;
      j["attempt"] = attempt;
      j["system"] = system;
      j["prompt"] = prompt;
      break;
    case Type::abort_turn:
      j["type"] = "abort";
      break;
    case Type::disarmed:
      j["type"] = "disarmed";
      j["reason"] = reason;
      break;
  }
  return j;
}

LoopController::LoopController(LoopSettings settings) : settings_(std::move(settings)) {}

LoopState LoopController::loop_state() const {
  LoopState st;
  st.armed = armed_;
  st.budget = budget_;
  st.round = round_;
  st.lastEvalCount = lastEvalCount_;
  st.noProgressRounds = noProgressRounds_;
  st.supervise = supervise_;
  st.challengedFinalizeSeq = challengedFinalizeSeq_;
  if (lastBest_) st.lastBestIndex = static_cast<double>(*lastBest_);
  st.significantProgress = settings_.significantProgress;
  st.limitPct = settings_.wrapUpAtLimitPct;
  return st;
}

Actions LoopController::arm(std::optional<long long> budget, Lang lang) {
  everArmed_ = armed_ = true;
  budget_ = budget && valid_budget(static_cast<double>(*budget)) ? *budget : settings_.defaultBudget;
  round_ = lastEvalCount_ = noProgressRounds_ = 0;
  lastBest_.reset();
  stopReason_.reset();
  challengedFinalizeSeq_.reset();
  lang_ = lang;
  pending_.reset();
  ++epoch_;  // a review asked for an earlier run must not speak into this one
  return {};
}

void LoopController::disarm(const std::string& reason, Actions& out) {
  armed_ = false;
  stopReason_ = reason;
  pending_.reset();
  ++epoch_;
  out.push_back(disarmed_action(reason));
}

Actions LoopController::stop() {
  Actions out;
  Action abort;
  abort.type = Action::Type::abort_turn;
  out.push_back(abort);  // at once, before anything else: the human wins
  if (armed_ || pending_) disarm("stopped", out);
  return out;
}

Actions LoopController::turn_ended(std::string_view reason) {
  Actions out;
  if (reason == "aborted" && (armed_ || pending_)) disarm("stopped", out);
  return out;
}

Actions LoopController::host_cancelled(std::string_view /*cause*/) {
  // Every cause counts (user, parent, hook, disposed): whoever cancels the agent's work, the loop
  // must not start it again by itself.
  Actions out;
  if (armed_ || pending_) disarm("stopped", out);
  return out;
}

Actions LoopController::settled(const Series& s, const HostFacts& facts) {
  // One checkpoint at a time: a settle during a review is covered when the review answers.
  if (!armed_ || pending_ || !facts.agentIdle || facts.humanQueued) return {};
  return checkpoint(s, facts);
}

Action LoopController::ask(ReviewKind kind, const Series& s, long long evals_done, const std::string& decision,
                           const std::string& reason) {
  DigestInputs in;
  in.budget = budget_;
  in.round = round_;
  in.evalsPerTurn = settings_.evalsPerTurn;
  const Lang lang = lang_.value_or(Lang::en);
  Pending p{nextToken_++, epoch_, kind, evals_done, decision, reason, 1, *effective_route(),
            supervisor_system(kind, lang, settings_.supervisorInstructions),
            supervisor_prompt(kind, supervisor_digest(s, in))};
  // The finalize mark is part of what the review saw: remember it with the evaluation count.
  p.finalizeAtAsk = finalize_mark(s);
  pending_ = p;
  Action a;
  a.type = Action::Type::review;
  a.token = p.token;
  a.reviewKind = kind;
  a.route = p.route;
  a.attempt = 1;
  a.system = p.system;
  a.prompt = p.prompt;
  return a;
}

Actions LoopController::checkpoint(const Series& s, const HostFacts& facts) {
  const Decision d = decide_continuation(s, loop_state(), settings_.maxNoProgressRounds);
  const bool can_review = supervise_ && effective_route().has_value();
  if (d.action == "stop") {
    // M-8: an early finalize with budget left goes to the supervisor first.
    if (settings_.challengeFinalize && can_review && d.evalsDone < budget_) {
      return {ask(ReviewKind::headroom, s, d.evalsDone, "stop", "finalized")};
    }
    if (can_review && unreviewed_evals(s)) return {ask(ReviewKind::audit, s, d.evalsDone, "stop", "finalized")};
    Actions out;
    disarm("finalized", out);
    return out;
  }
  const std::string reason = d.reason.value_or("");
  if (can_review && reviewable(s)) return {ask(ReviewKind::progress, s, d.evalsDone, d.action, reason)};
  return commit(s, facts, d.action, reason, std::nullopt, ReviewOutcome{});
}

Actions LoopController::commit(const Series& s, const HostFacts& facts, const std::string& decision,
                               const std::string& reason, std::optional<ReviewKind> kind,
                               const ReviewOutcome& review) {
  Actions out;
  const long long done = completed_evals(s);
  const Lang lang = lang_.value_or(Lang::en);
  if (review.advice) lastAdvice_ = review.advice;
  if (decision == "stop") {
    const bool challenge = kind == ReviewKind::headroom;
    if (challenge && review.advice) {
      // The supervisor overruled the finalize: it is spent, the run goes on (M-8).
      challengedFinalizeSeq_ = accepted_finalize_seq(s);
      noProgressRounds_ = 0;
      ContinuationText t = next_round(lang, done, s.bestIndex, review);
      t.challenge = true;
      out.push_back(send_action("challenge", continuation_text(t)));
      return out;
    }
    disarm(challenge && review.reviewed ? "converged" : "finalized", out);
    if (review.reviewed) out.insert(out.begin(), send_action("audit", audit_text(lang, review)));
    return out;
  }
  if (decision == "wrap-up") {
    out.push_back(send_action("wrap-up", wrapup_text(lang, done, budget_, reason, settings_.finalizeHint, review)));
    disarm(reason, out);
    return out;
  }
  noProgressRounds_ = round_ > 0 && !round_progressed(s, loop_state()) ? noProgressRounds_ + 1 : 0;
  ContinuationText t = next_round(lang, done, s.bestIndex, review);
  // The pace never asks for more than the budget has left: the drive itself stays within it.
  t.paceEvals = settings_.evalsPerTurn > 0 ? std::min(settings_.evalsPerTurn, budget_ - done) : 0;
  t.stagnant = stagnation_count(s);
  t.taskKnown = facts.hasUserTask || !s.iterations.empty() || !s.plans.empty();
  t.planKnown = !s.plans.empty();
  t.envKnown = !s.envs.empty();
  t.planStale = plan_stale(s, settings_.evalsPerTurn);
  out.push_back(send_action("continuation", continuation_text(t)));
  return out;
}

ContinuationText LoopController::next_round(Lang lang, long long done, std::optional<std::size_t> best, const ReviewOutcome& review) {
  ++round_;
  lastEvalCount_ = done;
  lastBest_ = best;
  ContinuationText t;
  t.lang = lang;
  t.round = round_;
  t.evalsDone = done;
  t.budget = budget_;
  t.finalizeHint = settings_.finalizeHint;
  t.review = review;
  return t;
}

Actions LoopController::supervisor_answered(std::uint64_t token, const SupervisorAnswer& answer, const Series& s,
                                            const HostFacts& facts) {
  if (!pending_ || pending_->token != token || pending_->epoch != epoch_) return {};
  // N-2: out of tokens with nothing said while reasoning → once more with reasoning off.
  if (blank(answer.text) && answer.finish == "max-tokens" && pending_->attempt == 1) {
    pending_->attempt = 2;
    pending_->route.reasoningEffort = "off";
    Action a;
    a.type = Action::Type::review;
    a.token = token;
    a.reviewKind = pending_->kind;
    a.route = pending_->route;
    a.attempt = 2;
    a.system = pending_->system;
    a.prompt = pending_->prompt;
    return {a};
  }
  const Pending p = *pending_;
  pending_.reset();
  // Failure, timeout or silence: no record, never approval; the loop goes on without it.
  const bool usable = answer.finish == "stop" || answer.finish == "max-tokens";
  ReviewOutcome review = usable ? ReviewOutcome::from(advice_from_reply(answer.text)) : ReviewOutcome{};
  if (!review.reviewed) review.failure = usable ? "empty" : answer.finish == "timeout" || answer.finish == "aborted" ? answer.finish : "error";
  // Re-check after the answer: the human may have taken the session meanwhile.
  if (!armed_ || !facts.agentIdle || facts.humanQueued) return {};
  // The run moved while we asked: decide afresh on what is there now.
  if (completed_evals(s) != p.evalsAtAsk || finalize_mark(s) != p.finalizeAtAsk) return checkpoint(s, facts);
  return commit(s, facts, p.decision, p.reason, p.kind, review);
}

std::optional<std::string> LoopController::set_supervise(bool on) {
  if (on && !effective_route()) {
    return std::string("no supervisor model: configure supervisor.provider and supervisor.model, or run "
                       "/supervise use <provider>/<model>");
  }
  supervise_ = on;
  return std::nullopt;
}

void LoopController::set_config_route(std::optional<Route> route) { configRoute_ = std::move(route); }
void LoopController::set_override(std::optional<Route> route) { override_ = std::move(route); }

std::optional<Route> LoopController::effective_route() const { return override_ ? override_ : configRoute_; }

json LoopController::control_json(const Series* s) const { return control_json(s ? completed_evals(*s) : 0); }

json LoopController::control_json(long long done) const {
  json loop = json::object();
  loop["armed"] = armed_;
  loop["budget"] = everArmed_ ? budget_ : 0;
  loop["round"] = everArmed_ ? round_ : 0;
  loop["evalsDone"] = done;
  loop["evalsOverBudget"] = everArmed_ && budget_ > 0 ? std::max(0LL, done - budget_) : 0;
  loop["available"] = settings_.available;
  loop["defaultBudget"] = settings_.defaultBudget;
  if (lang_) loop["outputLanguage"] = std::string(lang_code(*lang_));
  if (stopReason_) loop["stopReason"] = *stopReason_;
  json sup = json::object();
  sup["enabled"] = supervise_;
  sup["configured"] = configRoute_.has_value();
  if (configRoute_) sup["configRoute"] = configRoute_->to_json();
  if (auto r = effective_route()) {
    json e = r->to_json();
    e["source"] = override_ ? "session" : "config";
    sup["effective"] = e;
  }
  if (lastAdvice_) sup["lastAdvice"] = *lastAdvice_;
  json out = json::object();
  out["loop"] = loop;
  out["supervisor"] = sup;
  return out;
}

}  // namespace kopt
