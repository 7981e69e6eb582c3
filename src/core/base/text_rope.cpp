#include "kopt/text_rope.hpp"

#include <algorithm>

namespace kopt {

void TextRope::append(std::string_view item) {
  open_snapshot_.reset();
  open_off_.push_back(open_.size());
  if (count_) open_.push_back(',');
  open_.append(item);
  ++count_;
  if (open_.size() >= kBlockBytes) seal();
}

void TextRope::seal() {
  sealed_bytes_ += open_.size();
  sealed_.push_back({std::make_shared<const std::string>(std::move(open_)), open_first_});
  open_ = std::string();
  open_off_.clear();
  open_first_ = count_;
}

std::size_t TextRope::cut(std::size_t item) {
  if (item >= count_) return count_;
  open_snapshot_.reset();
  if (item >= open_first_) {
    open_.resize(open_off_[item - open_first_]);
    open_off_.resize(item - open_first_);
    count_ = item;
    return count_;
  }
  // The first sealed block with an item at or past `item` goes, and every block after it.
  auto from = std::upper_bound(sealed_.begin(), sealed_.end(), item, [](std::size_t i, const Block& b) { return i < b.first; });
  --from;  // sealed_[0].first == 0 <= item
  for (auto it = from; it != sealed_.end(); ++it) sealed_bytes_ -= it->text->size();
  open_first_ = count_ = from->first;
  sealed_.erase(from, sealed_.end());
  open_.clear();
  open_off_.clear();
  return count_;
}

void TextRope::pieces(std::vector<TextPiece>& out) {
  for (const Block& b : sealed_) out.push_back(b.text);
  if (open_.empty()) return;
  if (!open_snapshot_) open_snapshot_ = std::make_shared<const std::string>(open_);
  out.push_back(open_snapshot_);
}

void TextRope::write_to(std::string& out) const {
  for (const Block& b : sealed_) out += *b.text;
  out += open_;
}

std::size_t TextRope::approx_bytes() const {
  std::size_t b = sizeof(TextRope) + sealed_.capacity() * sizeof(Block) + open_.capacity() + open_off_.capacity() * sizeof(std::size_t);
  for (const Block& block : sealed_) b += block.text->capacity();
  if (open_snapshot_) b += open_snapshot_->capacity();
  return b;
}

}  // namespace kopt
