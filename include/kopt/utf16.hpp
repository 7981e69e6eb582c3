// Lengths and cuts in UTF-16 code units over UTF-8 text, as the spec's caps are defined.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kopt {

// Number of UTF-16 code units the UTF-8 text would take (an invalid byte counts as one unit).
std::size_t utf16_length(std::string_view s);
// The longest prefix of at most n UTF-16 units (a surrogate pair is never split: it is left out whole).
std::string_view utf16_prefix(std::string_view s, std::size_t n);
// The longest suffix of at most n UTF-16 units (never splitting a pair).
std::string_view utf16_suffix(std::string_view s, std::size_t n);
// Byte offset at which the first n UTF-16 units end (clamped to s.size()).
std::size_t utf16_offset(std::string_view s, std::size_t n);
// s cut to `cap` units with "…" appended when longer; `cut` says whether it was.
std::string utf16_cap(std::string_view s, std::size_t cap, bool* cut = nullptr);

}  // namespace kopt
