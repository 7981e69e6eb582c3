#include "kopt/config.hpp"

namespace kopt {

std::string ProjectionConfig::apply_json(const json& overrides) {
  if (overrides.is_null()) return {};
  if (!overrides.is_object()) return "projection config must be a JSON object";
  struct Key {
    const char* name;
    std::vector<std::string>* list;
  } keys[] = {{"benchTools", &benchTools},       {"profileTools", &profileTools}, {"profileCommands", &profileCommands},
              {"finalizeTools", &finalizeTools}, {"changeTools", &changeTools},   {"shellTools", &shellTools},
              {"jobTools", &jobTools}};
  for (const auto& k : keys) {
    auto it = overrides.find(k.name);
    if (it == overrides.end()) continue;
    if (!it->is_array()) return std::string(k.name) + " must be an array of strings";
    std::vector<std::string> v;
    for (const auto& s : *it) {
      if (!s.is_string()) return std::string(k.name) + " must be an array of strings";
      v.push_back(s.get<std::string>());
    }
    *k.list = std::move(v);
  }
  return {};
}

json ProjectionConfig::to_json() const {
  return json{{"benchTools", benchTools},       {"profileTools", profileTools}, {"profileCommands", profileCommands},
              {"finalizeTools", finalizeTools}, {"changeTools", changeTools},   {"shellTools", shellTools},
              {"jobTools", jobTools},           {"planTool", kPlanTool},        {"envTool", kEnvTool}};
}

}  // namespace kopt
