// TextRope (include/kopt/text_rope.hpp): items joined by commas, handed out as shared blocks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kopt/text_rope.hpp"

using namespace kopt;

namespace {
std::string joined(TextRope& r) {
  std::vector<TextPiece> pieces;
  r.pieces(pieces);
  std::string out;
  for (const TextPiece& p : pieces) out += *p;
  return out;
}
std::string list(const std::vector<std::string>& items, std::size_t from = 0, const std::string& sep = ",") {
  std::string out;
  for (std::size_t i = from; i < items.size(); ++i) out += (i > from ? sep : "") + items[i];
  return out;
}
}  // namespace

TEST(TextRope, EmptyHasNoPieces) {
  TextRope r;
  std::vector<TextPiece> pieces;
  r.pieces(pieces);
  EXPECT_TRUE(pieces.empty());
  EXPECT_EQ(r.text_bytes(), 0u);
}

// Random appends and cuts against a plain list: the pieces always join to the list's text, every
// piece handed out keeps its bytes, and a cut says how many items are left to append again.
TEST(TextRope, CutsAndAppendsMatchAPlainList) {
  std::mt19937 rng(11);
  TextRope r;
  std::vector<std::string> items;
  std::vector<std::pair<TextPiece, std::string>> handed;
  for (int step = 0; step < 4000; ++step) {
    const unsigned op = rng() % 10;
    if (op < 7) {
      std::string item(1 + rng() % 3000, static_cast<char>('a' + rng() % 26));
      items.push_back(item);
      r.append(item);
    } else if (op < 9 && !items.empty()) {
      const std::size_t to = rng() % items.size();
      const std::size_t left = r.cut(to);
      ASSERT_LE(left, to);
      items.resize(to);
      for (std::size_t i = left; i < to; ++i) r.append(items[i]);
    } else {
      std::vector<TextPiece> pieces;
      r.pieces(pieces);
      for (const TextPiece& p : pieces) handed.emplace_back(p, *p);
    }
    ASSERT_EQ(r.items(), items.size());
    ASSERT_EQ(r.text_bytes(), list(items).size());
  }
  EXPECT_EQ(joined(r), list(items));
  std::string written;
  r.write_to(written);
  EXPECT_EQ(written, list(items));
  for (const auto& [piece, text] : handed) ASSERT_EQ(*piece, text);
}

// Any separator; every item and every suffix of the list can be read back, across sealed blocks.
TEST(TextRope, ItemsAndSuffixesReadBack) {
  std::mt19937 rng(5);
  for (const std::string sep : {",", " L", ""}) {
    TextRope r(sep);
    std::vector<std::string> items;
    for (int step = 0; step < 3000; ++step) {
      if (rng() % 8 == 0 && !items.empty()) {
        const std::size_t to = rng() % items.size();
        items.resize(to);
        for (std::size_t i = r.cut(to); i < to; ++i) r.append(items[i]);
      }
      items.push_back(std::string(1 + rng() % 900, static_cast<char>('a' + rng() % 26)));
      r.append(items.back());
    }
    ASSERT_EQ(r.text_bytes(), list(items, 0, sep).size());
    for (std::size_t i = 0; i < items.size(); ++i) ASSERT_EQ(r.item(i), items[i]) << sep << " " << i;
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, items.size() / 3, items.size() - 1, items.size(), items.size() + 4}) {
      std::string out = "<";
      r.write_from(out, i);
      ASSERT_EQ(out, "<" + list(items, i, sep)) << sep << " " << i;
    }
  }
}

// A cut inside the open block keeps the sealed blocks: the same pieces are handed out again.
TEST(TextRope, SealedBlocksAreSharedNotCopied) {
  TextRope r;
  const std::string item(1000, 'x');
  for (int i = 0; i < 600; ++i) r.append(item);
  std::vector<TextPiece> a, b;
  r.pieces(a);
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(r.cut(599), 599u);
  r.append("y");
  r.pieces(b);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i + 1 < a.size(); ++i) EXPECT_EQ(a[i].get(), b[i].get());
  EXPECT_NE(a.back().get(), b.back().get());
  // The open block's snapshot is taken once per change.
  std::vector<TextPiece> c;
  r.pieces(c);
  EXPECT_EQ(c.back().get(), b.back().get());
}

// A sealed block holds its text and no more: the open block grew by doubling, and a block kept at
// that capacity would cost up to twice its text for as long as the session lives (issue 42).
TEST(TextRope, SealedBlocksHoldNoSpareRoom) {
  TextRope r;
  const std::string item(100, 'x');
  for (int i = 0; i < 20000; ++i) r.append(item);
  std::vector<TextPiece> pieces;
  r.pieces(pieces);
  ASSERT_GE(pieces.size(), 7u);
  for (std::size_t i = 0; i + 1 < pieces.size(); ++i) EXPECT_EQ(pieces[i]->capacity(), pieces[i]->size()) << "block " << i;
}
