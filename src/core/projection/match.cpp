#include "kopt/match.hpp"

namespace kopt {

bool matches_tool(std::string_view name, std::string_view pattern) {
  if (name == pattern) return true;
  if (pattern.empty() || name.size() <= pattern.size()) return false;
  if (name.substr(name.size() - pattern.size()) != pattern) return false;
  char before = name[name.size() - pattern.size() - 1];
  return before == '_' || before == '-' || before == '.' || before == '/' || before == ':';
}

bool matches_any_tool(std::string_view name, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns)
    if (matches_tool(name, p)) return true;
  return false;
}

static bool ends_with_slash(std::string_view a, std::string_view b) {
  return a.size() > b.size() && a.substr(a.size() - b.size()) == b && a[a.size() - b.size() - 1] == '/';
}

bool same_path(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return false;
  return a == b || ends_with_slash(a, b) || ends_with_slash(b, a);
}

}  // namespace kopt
