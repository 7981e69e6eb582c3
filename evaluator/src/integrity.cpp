#include "integrity.hpp"

#include <random>

#include "proc.hpp"
#include "sha256.hpp"

namespace kopt::bench {
namespace {
std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}
}  // namespace

std::string hmac_sha256_hex(const std::string& key, const std::string& data) {
  std::string k = key;
  if (k.size() > 64) k = unhex(sha256_hex(k));
  k.resize(64, '\0');
  std::string ipad(64, 0), opad(64, 0);
  for (size_t i = 0; i < 64; ++i) {
    ipad[i] = char(k[i] ^ 0x36);
    opad[i] = char(k[i] ^ 0x5c);
  }
  Sha256 inner;
  inner.update(ipad).update(data);
  std::string ih = unhex(inner.hex());
  Sha256 outer;
  outer.update(opad).update(ih);
  return outer.hex();
}

std::string judge_key(const std::string& cache_dir, std::string* key_path) {
  std::string p = cache_dir + "/judge.key";
  if (key_path) *key_path = p;
  std::string k = read_file(p);
  if (k.size() == 64) return k;
  std::random_device rd;
  static const char* hexd = "0123456789abcdef";
  std::string fresh;
  for (int i = 0; i < 64; ++i) fresh.push_back(hexd[rd() & 15]);
  return replace_file(p, fresh, 0600).empty() ? fresh : "";
}

bool file_mac_ok(const std::string& key, const std::string& path) {
  std::string mac = read_file(path + ".mac");
  return !key.empty() && mac.size() == 64 && mac == hmac_sha256_hex(key, read_file(path));
}

void write_file_mac(const std::string& key, const std::string& path) {
  if (key.empty()) return;
  replace_file(path + ".mac", hmac_sha256_hex(key, read_file(path)), 0644);  // none written: the MAC fails, a rebuild
}

}  // namespace kopt::bench
