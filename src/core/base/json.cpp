#include "kopt/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace kopt {

std::string js_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";  // also -0, as JavaScript writes it
  char buf[64];
  // Shortest round-trip digits in scientific form: d[.ddd]e±X
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string out;
  std::size_t pos = 0;
  if (sci[0] == '-') {
    out.push_back('-');
    pos = 1;
  }
  std::size_t e = sci.find('e', pos);
  std::string digits;
  for (std::size_t i = pos; i < e; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  int exp10 = std::atoi(sci.c_str() + e + 1);
  int k = static_cast<int>(digits.size());
  int n = exp10 + 1;  // value = 0.digits * 10^n
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n));
    out.push_back('.');
    out += digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out += digits.substr(1);
    }
    out.push_back('e');
    out.push_back(n - 1 >= 0 ? '+' : '-');
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

// Length of a valid UTF-8 sequence at s[i] (non-ASCII lead), or 0 when invalid.
static std::size_t utf8_valid_len(std::string_view s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || c == 0xC0 || c == 0xC1 || c > 0xF4 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  unsigned char d = static_cast<unsigned char>(s[i + 1]);
  if (c == 0xE0 && d < 0xA0) return 0;                  // overlong
  if (c == 0xED && d >= 0xA0) return 0;                 // surrogate
  if (c == 0xF0 && d < 0x90) return 0;                  // overlong
  if (c == 0xF4 && d >= 0x90) return 0;                 // beyond U+10FFFF
  return len;
}

void js_quote_to(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    // The run of characters that need no escaping goes in with one append.
    std::size_t j = i;
    while (j < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[j]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++j;
    }
    out.append(s.data() + i, j - i);
    if (j == s.size()) break;
    i = j;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else if (std::size_t len = utf8_valid_len(s, i)) {
          out.append(s.substr(i, len));
          i += len - 1;
        } else {
          out += "\xEF\xBF\xBD";  // U+FFFD: the output is always valid UTF-8
        }
    }
    ++i;
  }
  out.push_back('"');
}

void js_stringify_to(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded: out += "null"; return;
    case json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case json::value_t::number_integer: out += js_number(static_cast<double>(v.get<std::int64_t>())); return;
    case json::value_t::number_unsigned: out += js_number(static_cast<double>(v.get<std::uint64_t>())); return;
    case json::value_t::number_float: out += js_number(v.get<double>()); return;
    case json::value_t::string: js_quote_to(out, v.get_ref<const std::string&>()); return;
    case json::value_t::binary: out += "null"; return;
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& x : v) {
        if (!first) out.push_back(',');
        first = false;
        js_stringify_to(out, x);
      }
      out.push_back(']');
      return;
    }
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        js_quote_to(out, it.key());
        out.push_back(':');
        js_stringify_to(out, it.value());
      }
      out.push_back('}');
      return;
    }
  }
}

std::string js_stringify(const json& v) {
  std::string out;
  js_stringify_to(out, v);
  return out;
}

// Deepest bracket nesting of JSON text, ignoring brackets inside strings. Stops early past limit.
static std::size_t nesting_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::optional<json> parse_json(std::string_view text, std::size_t max_depth) {
  if (nesting_depth(text, max_depth) > max_depth) return std::nullopt;
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::optional<double> as_number(const json& v) {
  switch (v.type()) {
    case json::value_t::number_integer: return static_cast<double>(v.get<std::int64_t>());
    case json::value_t::number_unsigned: return static_cast<double>(v.get<std::uint64_t>());
    case json::value_t::number_float: return v.get<double>();
    default: return std::nullopt;
  }
}

}  // namespace kopt
