#include "kopt/utf16.hpp"

namespace kopt {

namespace {
// Length in bytes of the UTF-8 sequence starting at s[i] and its UTF-16 width (1 or 2).
// Invalid bytes count as one byte / one unit.
inline void step(std::string_view s, std::size_t i, std::size_t& bytes, std::size_t& units) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + len > s.size()) len = 1;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
      len = 1;
      break;
    }
  bytes = len;
  units = len == 4 ? 2 : 1;
}
}  // namespace

std::size_t utf16_length(std::string_view s) {
  std::size_t n = 0, b, u;
  for (std::size_t i = 0; i < s.size(); i += b) {
    step(s, i, b, u);
    n += u;
  }
  return n;
}

std::size_t utf16_offset(std::string_view s, std::size_t n) {
  std::size_t units = 0, b, u, i = 0;
  while (i < s.size()) {
    step(s, i, b, u);
    if (units + u > n) break;
    units += u;
    i += b;
  }
  return i;
}

std::string_view utf16_prefix(std::string_view s, std::size_t n) { return s.substr(0, utf16_offset(s, n)); }

std::string_view utf16_suffix(std::string_view s, std::size_t n) {
  std::size_t total = utf16_length(s);
  if (total <= n) return s;
  // Skip total-n units from the front; if that lands inside a pair, skip the whole pair.
  std::size_t skip = total - n, units = 0, b, u, i = 0;
  while (i < s.size() && units < skip) {
    step(s, i, b, u);
    units += u;
    i += b;
  }
  return s.substr(i);
}

std::string utf16_cap(std::string_view s, std::size_t cap, bool* cut) {
  std::size_t off = utf16_offset(s, cap);
  bool was_cut = off < s.size();
  if (cut) *cut = was_cut;
  std::string out(s.substr(0, off));
  if (was_cut) out += "\xE2\x80\xA6";  // …
  return out;
}

}  // namespace kopt
