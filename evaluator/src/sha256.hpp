// SHA-256 (FIPS 180-4), streaming; used for cache keys and baseline keys.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace kopt::bench {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  // Adds a length-prefixed field, so ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view data);
  std::string hex();  // finalizes; the object must not be updated afterwards

 private:
  void block(const unsigned char* p);
  uint32_t h_[8];
  unsigned char buf_[64];
  uint64_t len_ = 0;
  size_t used_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace kopt::bench
