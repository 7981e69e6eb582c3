// The vectors' comparison rule (vectors/INDEX.md): key sets equal, arrays element-wise,
// numbers within a relative 1e-12, strings and booleans exact.
#pragma once
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "kopt/json.hpp"

namespace kopt::test {

inline std::string first_difference(const json& want, const json& got, const std::string& path = "$") {
  if (want.is_number() && got.is_number()) {
    double a = want.get<double>(), b = got.get<double>();
    if (a == b || std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b))) return {};
    return path + ": want " + want.dump() + " got " + got.dump();
  }
  if (want.type() != got.type()) return path + ": want " + want.dump().substr(0, 200) + " got " + got.dump().substr(0, 200);
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it)
      if (!got.contains(it.key())) return path + "." + it.key() + ": missing";
    for (auto it = got.begin(); it != got.end(); ++it)
      if (!want.contains(it.key())) return path + "." + it.key() + ": unexpected " + it.value().dump().substr(0, 200);
    for (auto it = want.begin(); it != want.end(); ++it)
      if (auto d = first_difference(it.value(), got.at(it.key()), path + "." + it.key()); !d.empty()) return d;
    return {};
  }
  if (want.is_array()) {
    if (want.size() != got.size())
      return path + ": length want " + std::to_string(want.size()) + " got " + std::to_string(got.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      if (auto d = first_difference(want[i], got[i], path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
    return {};
  }
  if (want != got) return path + ": want " + want.dump().substr(0, 300) + " got " + got.dump().substr(0, 300);
  return {};
}

inline json load_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = parse_json(ss.str(), 100000);
  return j ? *j : json();
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace kopt::test
