// What a session's log says about the run beyond its evaluations (run_facts.hpp).
#include "kopt/run_facts.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kopt/events.hpp"
#include "kopt/utf16.hpp"

namespace kopt {

namespace {

const std::string* str_at(const json& o, const char* k) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(k);
  return it != o.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}
const json* obj_at(const json& o, const char* k) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(k);
  return it != o.end() && it->is_object() ? &*it : nullptr;
}

// A provider/model route as one short name ("deepseek-official/deepseek-v4-flash"), capped.
std::optional<std::string> route_name(const json& o) {
  const std::string* model = str_at(o, "model");
  if (!model || model->empty()) return std::nullopt;
  std::string name;
  if (const std::string* p = str_at(o, "provider"); p && !p->empty()) name.append(*p).push_back('/');
  name += *model;
  return utf16_cap(name, RunFacts::kModelMax);
}

void add_once(std::vector<std::string>& list, std::optional<std::string> name, std::uint64_t& version) {
  if (!name || list.size() >= RunFacts::kModelsMax) return;
  if (std::find(list.begin(), list.end(), *name) != list.end()) return;
  list.push_back(std::move(*name));
  ++version;
}

}  // namespace

bool RunFacts::read_type(std::string_view type) { return run_fact_type(type); }

void RunFacts::take(const json& ev) {
  if (!ev.is_object()) return;
  const std::string* type = str_at(ev, "type");
  if (!type) return;
  const bool facts = run_fact_type(*type);
  if (!facts && !projected_type(*type)) return;
  if (auto t = ev.find("time"); t != ev.end() && t->is_number()) {
    const double v = t->get<double>();
    if (std::isfinite(v)) {
      if (!firstTime || v < *firstTime) firstTime = v, ++version;
      if (!lastTime || v > *lastTime) lastTime = v, ++version;
    }
  }
  const json* data = obj_at(ev, "data");
  if (!data) return;
  if (*type == "session/title") {
    if (const std::string* t = str_at(*data, "title"); t && !t->empty()) {
      std::string cut = utf16_cap(*t, kTitleMax);
      if (title != cut) title = std::move(cut), ++version;
    }
  } else if (*type == "request/header") {
    if (const json* h = obj_at(*data, "header"))
      if (const json* c = obj_at(*h, "config")) add_once(models, route_name(*c), version);
  } else if (*type == "user/message") {
    // The loop's messages name the supervisor that reviewed the round (lib/loop.mjs).
    const json* src = message_from(*data).source;
    if (const json* sup = src ? obj_at(*src, "supervisor") : nullptr) add_once(supervisors, route_name(*sup), version);
  }
}

std::size_t RunFacts::approx_bytes() const {
  std::size_t b = sizeof(RunFacts) + (title ? title->capacity() : 0);
  for (const auto* list : {&models, &supervisors})
    for (const auto& s : *list) b += sizeof(std::string) + s.capacity();
  return b;
}

}  // namespace kopt
