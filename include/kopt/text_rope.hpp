// A list of items joined by a separator (a comma for JSON items) kept as shared, immutable blocks of
// text: a reader (a body being written to a socket) holds the blocks it was handed while the list
// goes on, so a body is handed out without copying it, and a change near the end rewrites only the
// last block.
#pragma once
#include <cstddef>
#include <utility>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kopt {

using TextPiece = std::shared_ptr<const std::string>;

class TextRope {
 public:
  explicit TextRope(std::string separator = ",") : sep_(std::move(separator)) {}

  // A block is sealed once it holds this many bytes (a few hundred points at 1M events).
  static constexpr std::size_t kBlockBytes = 256 * 1024;

  std::size_t items() const { return count_; }
  std::size_t text_bytes() const { return sealed_bytes_ + open_.size(); }

  // Appends one item (the separator before it, but for the first).
  void append(std::string_view item);
  // Drops the items from `item` on, and possibly some before it (down to the start of the sealed
  // block that holds it: a block handed out is never written again); returns how many items are
  // left, to be appended again from there by the caller.
  std::size_t cut(std::size_t item);
  // What cut(item) would leave.
  std::size_t kept_by_cut(std::size_t item) const;
  // The text as pieces to write in order (none when empty). The open block is handed out as a
  // snapshot, taken once per change of it.
  void pieces(std::vector<TextPiece>& out);
  void write_to(std::string& out) const;
  // Item i (< items()), valid until the next append or cut.
  std::string_view item(std::size_t i) const;
  // Items from i on, joined, without a separator before the first (nothing when i >= items()).
  void write_from(std::string& out, std::size_t i) const;
  // Bytes held: the text, its snapshot and the offsets.
  std::size_t approx_bytes() const;

 private:
  void seal();
  std::size_t block_of(std::size_t i) const;  // the sealed block holding item i, or sealed_.size() (open)
  std::string_view block_text(std::size_t b) const;
  std::size_t item_start(std::size_t i) const;  // where item i's own text starts in its block

  std::string sep_;
  struct Block {
    TextPiece text;
    std::size_t first;  // its first item
  };
  std::vector<Block> sealed_;
  std::size_t sealed_bytes_ = 0;
  std::string open_;                // items open_first_ .. count_ - 1
  std::vector<std::size_t> off_;  // each item: where it starts in its block, its separator included
  std::size_t open_first_ = 0, count_ = 0;
  TextPiece open_snapshot_;  // open_ as last handed out; null once open_ changed
};

}  // namespace kopt
