// Escaping for the report's formats: HTML text and attributes, CSV fields (include/kopt/report.hpp).
#include <cstdio>
#include <string>
#include <string_view>

#include "kopt/report.hpp"

namespace kopt {

namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when invalid (overlong, surrogate,
// beyond U+10FFFF, truncated).
std::size_t utf8_decode(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t len;
  char32_t min;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool is_bidi_control(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&#39;";
        ++i;
        continue;
      default:
        break;
    }
    char32_t cp = 0;
    const std::size_t len = utf8_decode(s, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F) {
      out += "\xEF\xBF\xBD";
    } else if (is_bidi_control(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "[U+%04X]", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string csv_field(std::string_view s) {
  const bool quote =
      s.find_first_of(",\"\r\n") != std::string_view::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_text(std::string_view s) {
  if (!s.empty() && (s.front() == '=' || s.front() == '+' || s.front() == '-' || s.front() == '@' ||
                     s.front() == '\t' || s.front() == '\r'))
  {
    // Appended, not `"'" + std::string(s)`: GCC 12 misreports that operator+ as an overlapping memcpy (-Wrestrict).
    std::string quoted(1, '\'');
    quoted += s;
    return csv_field(quoted);
  }
  return csv_field(s);
}

std::string markdown_cell(std::string_view s, std::size_t max_chars) {
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (chars == max_chars) {
      out += "…";
      break;
    }
    ++chars;
    char32_t cp = 0;
    const std::size_t len = utf8_decode(s, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    i += len;
    if (cp < 0x20 || cp == 0x7F) {
      out += ' ';
    } else if (is_bidi_control(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "[U+%04X]", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp < 0x80 && std::string_view("\\`*_[]<>|~!&#").find(static_cast<char>(cp)) != std::string_view::npos) {
      out += '\\';
      out += static_cast<char>(cp);
    } else {
      out.append(s.substr(i - len, len));
    }
  }
  return out;
}

}  // namespace kopt
