// JSON type used across kopt_core (insertion-ordered, as JavaScript objects are) and
// serialisation that matches JavaScript's JSON.stringify byte for byte.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kopt {

using json = nlohmann::ordered_json;

// Number as JavaScript's Number#toString writes it (shortest round trip; exponent form outside
// 1e-7 .. 1e21). Non-finite values give "null", as JSON.stringify does.
std::string js_number(double v);

// Compact JSON exactly as JSON.stringify(value) would write it after JSON.parse (keys in their
// order, numbers via js_number, the same string escapes). Invalid UTF-8 is replaced by U+FFFD.
std::string js_stringify(const json& v);
void js_stringify_to(std::string& out, const json& v);
void js_quote_to(std::string& out, std::string_view s);

// Parses JSON text; nullopt on any syntax error, invalid UTF-8, a number that overflows a double
// (JavaScript would read Infinity; we reject the text, see docs/limits.md) or nesting deeper than
// max_depth. Never throws.
std::optional<json> parse_json(std::string_view text, std::size_t max_depth = 2048);

// The value as a JavaScript number would see it (integers become doubles); nullopt when not a number.
std::optional<double> as_number(const json& v);

}  // namespace kopt
