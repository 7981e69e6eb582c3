// SHA-256 (FIPS 180-4), streaming and dependency-free: preset-sync manifests, kopt-bench cache and
// baseline keys. C++17, because kopt-bench (built against LibTorch 1.13 headers) compiles it too.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kopt {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  // Adds a length-prefixed field, so ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view data);
  std::string hex();  // finalizes; the object must not be updated afterwards
  std::array<uint32_t, 8> words();  // the digest as eight big-endian words (hex() spells them); finalizes likewise

 private:
  void block(const unsigned char* p);
  uint32_t h_[8];
  unsigned char buf_[64];
  uint64_t len_ = 0;
  size_t used_ = 0;
};

// Lowercase hex SHA-256 of bytes.
std::string sha256_hex(std::string_view data);

}  // namespace kopt
