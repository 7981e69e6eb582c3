// Name and path matching rules (spec C-1, K-5).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kopt {

// C-1: equal, or ends with the pattern right after one of _ - . / :
bool matches_tool(std::string_view name, std::string_view pattern);
bool matches_any_tool(std::string_view name, const std::vector<std::string>& patterns);

// K-5: false when either is empty; equal, or one ends with "/" + the other.
bool same_path(std::string_view a, std::string_view b);

}  // namespace kopt
