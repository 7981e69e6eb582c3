#include "kopt/text_rope.hpp"

#include <algorithm>

namespace kopt {

void TextRope::append(std::string_view item) {
  open_snapshot_.reset();
  off_.push_back(open_.size());
  if (count_) open_ += sep_;
  open_.append(item);
  ++count_;
  if (open_.size() >= kBlockBytes) seal();
}

void TextRope::seal() {
  sealed_bytes_ += open_.size();
  // open_ grew by doubling: a block kept as it is would hold up to twice its text for its life.
  open_.shrink_to_fit();
  sealed_.push_back({std::make_shared<const std::string>(std::move(open_)), open_first_});
  open_ = std::string();
  open_first_ = count_;
}

std::size_t TextRope::cut(std::size_t item) {
  if (item >= count_) return count_;
  open_snapshot_.reset();
  if (item >= open_first_) {
    open_.resize(off_[item]);
    off_.resize(item);
    count_ = item;
    return count_;
  }
  // The first sealed block with an item at or past `item` goes, and every block after it.
  const std::size_t from = block_of(item);
  for (std::size_t b = from; b < sealed_.size(); ++b) sealed_bytes_ -= sealed_[b].text->size();
  open_first_ = count_ = sealed_[from].first;
  sealed_.erase(sealed_.begin() + static_cast<std::ptrdiff_t>(from), sealed_.end());
  off_.resize(count_);
  open_.clear();
  return count_;
}

std::size_t TextRope::kept_by_cut(std::size_t item) const {
  if (item >= count_) return count_;
  return item >= open_first_ ? item : sealed_[block_of(item)].first;
}

std::size_t TextRope::block_of(std::size_t i) const {
  if (i >= open_first_) return sealed_.size();
  auto it = std::upper_bound(sealed_.begin(), sealed_.end(), i, [](std::size_t k, const Block& b) { return k < b.first; });
  return static_cast<std::size_t>(it - sealed_.begin()) - 1;  // sealed_[0].first == 0 <= i
}

std::string_view TextRope::block_text(std::size_t b) const { return b < sealed_.size() ? std::string_view(*sealed_[b].text) : open_; }

std::size_t TextRope::item_start(std::size_t i) const { return off_[i] + (i ? sep_.size() : 0); }

std::string_view TextRope::item(std::size_t i) const {
  const std::size_t b = block_of(i);
  const std::string_view text = block_text(b);
  const std::size_t next_first = b < sealed_.size() ? (b + 1 < sealed_.size() ? sealed_[b + 1].first : open_first_) : count_;
  const std::size_t end = i + 1 < next_first ? off_[i + 1] : text.size();
  return text.substr(item_start(i), end - item_start(i));
}

void TextRope::write_from(std::string& out, std::size_t i) const {
  if (i >= count_) return;
  const std::size_t b = block_of(i);
  out.append(block_text(b).substr(item_start(i)));
  for (std::size_t k = b + 1; k < sealed_.size(); ++k) out += *sealed_[k].text;
  if (b < sealed_.size()) out += open_;
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
  std::size_t b = sizeof(TextRope) + sealed_.capacity() * sizeof(Block) + open_.capacity() + off_.capacity() * sizeof(std::size_t);
  for (const Block& block : sealed_) b += block.text->capacity();
  if (open_snapshot_) b += open_snapshot_->capacity();
  return b;
}

}  // namespace kopt
