// The panel's /control POST (spec Q-2) and the /kloop, /supervise commands: both drive the one
// LoopController of a session, so the panel and the commands never disagree.
#include <charconv>

#include "kopt/loop.hpp"

namespace kopt {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

ControlReply error_reply(int status, std::string message) {
  ControlReply r;
  r.status = status;
  r.body = json::object();
  r.body["error"] = std::move(message);
  return r;
}

std::optional<long long> parse_count(std::string_view s) {
  long long v = 0;
  if (s.empty() || s.size() > 6) return std::nullopt;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string route_text(const Route& r) {
  return r.provider + "/" + r.model + (r.reasoningEffort ? " (" + *r.reasoningEffort + ")" : "");
}

std::string supervisor_status(const LoopController& c) {
  std::string out = c.supervise() ? "supervisor on" : "supervisor off";
  if (auto r = c.effective_route()) out += ", model " + route_text(*r);
  return out;
}

// The one limit on a session route's fields (bytes), for the panel's supervise-use and /supervise use.
constexpr std::size_t kRouteFieldMax = 200, kEffortMax = 64;
bool route_too_long(std::string_view provider, std::string_view model, std::string_view effort) {
  return provider.size() > kRouteFieldMax || model.size() > kRouteFieldMax || effort.size() > kEffortMax;
}

}  // namespace

json actions_json(const Actions& actions) {
  json out = json::array();
  for (const auto& a : actions) out.push_back(a.to_json());
  return out;
}

json ControlReply::to_json() const {
  json j = json::object();
  j["status"] = status;
  j["body"] = body;
  j["actions"] = actions_json(actions);
  j["armed"] = armed;
  return j;
}

json CommandReply::to_json() const {
  json j = json::object();
  j["ok"] = ok;
  j["text"] = text;
  j["actions"] = actions_json(actions);
  j["armed"] = armed;
  return j;
}

ControlReply apply_control(LoopController& c, std::string_view body_text, const Series* s, Lang fallback_lang) {
  if (body_text.size() > 16384) return error_reply(400, "JSON body required");
  const auto parsed = parse_json(body_text);
  if (!parsed || !parsed->is_object()) return error_reply(400, "JSON body required");
  const json& body = *parsed;
  const auto str = [&](const char* key) -> std::optional<std::string> {
    auto it = body.find(key);
    if (it == body.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const std::string action = str("action").value_or("");
  ControlReply r;
  if (action == "loop-arm") {
    if (!c.settings().available) return error_reply(503, "loop machinery unavailable");
    Lang lang = fallback_lang;
    if (auto it = body.find("outputLanguage"); it != body.end()) {
      const auto l = it->is_string() ? parse_lang(it->get<std::string>()) : std::nullopt;
      if (!l) return error_reply(400, "outputLanguage must be zh or en");
      lang = *l;
    }
    std::optional<long long> budget;
    if (auto it = body.find("budget"); it != body.end()) {
      // Anything but a valid_budget means the default.
      if (auto v = as_number(*it); v && valid_budget(*v)) {
        budget = static_cast<long long>(*v);
      }
    }
    r.actions = c.arm(budget, lang);
    r.armed = true;
  } else if (action == "loop-stop") {
    r.actions = c.stop();
  } else if (action == "supervise-on" || action == "supervise-off") {
    // The panel's supervision row is locked while the loop runs; /supervise still works.
    if (c.armed()) {
      ControlReply e = error_reply(409, "supervision is locked while the loop runs; use /supervise in the session");
      e.body["control"] = c.control_json(s);
      return e;
    }
    if (auto err = c.set_supervise(action == "supervise-on")) {
      ControlReply e = error_reply(409, *err);
      e.body["control"] = c.control_json(s);
      return e;
    }
  } else if (action == "supervise-use") {
    // Each route field is a string when present (null counts as absent); one length limit each.
    for (const char* k : {"provider", "model", "reasoningEffort"})
      if (auto it = body.find(k); it != body.end() && !it->is_string() && !it->is_null())
        return error_reply(400, "provider, model and reasoningEffort must be strings");
    if (c.armed()) {
      ControlReply e = error_reply(409, "supervision is locked while the loop runs; use /supervise in the session");
      e.body["control"] = c.control_json(s);
      return e;
    }
    const std::string provider = trim(str("provider").value_or(""));
    const std::string model = trim(str("model").value_or(""));
    const std::string effort = trim(str("reasoningEffort").value_or(""));
    if (route_too_long(provider, model, effort)) return error_reply(400, "route too long");
    if (provider.empty() && model.empty()) {
      if (!effort.empty()) return error_reply(400, "reasoningEffort needs a provider and a model");
      c.set_override(std::nullopt);
    } else if (provider.empty() || model.empty()) {
      return error_reply(400, "provider and model are both required");
    } else {
      c.set_override(Route{provider, model, effort.empty() ? std::nullopt : std::optional<std::string>(effort)});
    }
  } else {
    const auto it = body.find("action");
    const std::string named = it == body.end() ? "undefined" : it->is_string() ? action : it->dump();
    return error_reply(400, "unknown action: " + named.substr(0, 80));
  }
  r.body = json::object();
  r.body["control"] = c.control_json(s);
  return r;
}

CommandReply kloop_command(LoopController& c, std::string_view raw_in, const Series* s, Lang run_lang) {
  const std::string raw = trim(raw_in);
  CommandReply r;
  if (raw == "stop") {
    const bool was = c.armed() || c.review_pending();
    r.actions = c.stop();
    r.text = was ? "Kernel loop stopped; the running turn was aborted (queued messages kept)."
                 : "Kernel loop was not armed; the running turn, if any, was aborted.";
    return r;
  }
  if (raw == "status") {
    const json ctl = c.control_json(s)["loop"];
    if (c.armed()) {
      r.text = "Kernel loop armed: round " + std::to_string(c.round()) + ", " + std::to_string(ctl["evalsDone"].get<long long>()) +
               "/" + std::to_string(c.budget()) + " evaluations used, language " +
               std::string(lang_code(c.language().value_or(Lang::en))) + ", " + supervisor_status(c) + ".";
    } else {
      r.text = "Kernel loop not armed" +
               (c.stop_reason() ? " (last stop: " + *c.stop_reason() + ")" : std::string()) + "; " +
               supervisor_status(c) + ". Usage: /kloop [budget] | stop | status";
    }
    return r;
  }
  std::optional<long long> budget;
  if (!raw.empty()) {
    budget = parse_count(raw);
    if (!budget || !valid_budget(static_cast<double>(*budget))) {
      r.ok = false;
      r.text = "Usage: /kloop [budget " + std::to_string(kBudgetMin) + "-" + std::to_string(kBudgetMax) + "] | stop | status";
      return r;
    }
  }
  if (!c.settings().available) {
    r.ok = false;
    r.text = "The kernel loop is unavailable here (the host has no agent or model service).";
    return r;
  }
  r.actions = c.arm(budget, run_lang);
  r.armed = true;
  r.text = "Kernel loop armed: budget " + std::to_string(c.budget()) + " evaluations, language " +
           std::string(lang_code(run_lang)) + ", " + supervisor_status(c) +
           ". It drives the run at every settled turn, asks for a wrap-up when the budget is spent or progress "
           "stops, and ends on a finalize; /kloop stop ends it at once.";
  return r;
}

CommandReply supervise_command(LoopController& c, std::string_view raw_in) {
  const std::string raw = trim(raw_in);
  CommandReply r;
  if (raw == "on" || raw == "off") {
    if (auto err = c.set_supervise(raw == "on")) {
      r.ok = false;
      r.text = *err;
      return r;
    }
    r.text = "Supervisor " + raw + (raw == "on" ? " (" + route_text(*c.effective_route()) + ")" : std::string()) + ".";
    return r;
  }
  if (raw.empty() || raw == "status") {
    r.text = supervisor_status(c) + ". Usage: /supervise on | off | use <provider>/<model> [effort] | use default";
    return r;
  }
  if (raw.rfind("use", 0) == 0 && (raw.size() == 3 || raw[3] == ' ')) {
    const std::string spec = trim(raw.substr(3));
    if (spec.empty() || spec == "default") {
      c.set_override(std::nullopt);
      if (auto route = c.effective_route()) {
        r.text = "Supervisor model follows the configuration again: " + route_text(*route) + ".";
      } else {
        r.text = "Supervisor override cleared; no model is configured" +
                 std::string(c.supervise() ? " — supervision is off until one is chosen." : ".");
        // Supervision without a route cannot run: switch it off rather than pretend.
        c.set_supervise(false);
      }
      return r;
    }
    const auto space = spec.find(' ');
    const std::string pm = spec.substr(0, space);
    const std::string effort = space == std::string::npos ? std::string() : trim(spec.substr(space + 1));
    // The first slash splits: provider ids carry none, model ids may.
    const auto slash = pm.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == pm.size() || effort.find(' ') != std::string::npos) {
      r.ok = false;
      r.text = "Usage: /supervise use <provider>/<model> [effort] (or `use default`)";
      return r;
    }
    if (route_too_long(pm.substr(0, slash), pm.substr(slash + 1), effort)) {
      r.ok = false;
      r.text = "The supervisor route is too long (provider and model at most 200 bytes each, effort 64).";
      return r;
    }
    c.set_override(Route{pm.substr(0, slash), pm.substr(slash + 1),
                         effort.empty() ? std::nullopt : std::optional<std::string>(effort)});
    r.text = "Supervisor model for this session: " + route_text(*c.effective_route()) +
             (c.supervise() ? "." : "; /supervise on to start reviews.");
    return r;
  }
  r.ok = false;
  r.text = "Usage: /supervise on | off | use <provider>/<model> [effort] | use default";
  return r;
}

}  // namespace kopt
