#include "integrity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  std::string tmp = p + ".tmp." + std::to_string(getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
  if (!fd) return "";
  bool ok = ::write(fd.get(), fresh.data(), fresh.size()) == ssize_t(fresh.size());
  fd.reset();
  if (!ok || ::rename(tmp.c_str(), p.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return "";
  }
  return fresh;
}

bool file_mac_ok(const std::string& key, const std::string& path) {
  std::string mac = read_file(path + ".mac");
  return !key.empty() && mac.size() == 64 && mac == hmac_sha256_hex(key, read_file(path));
}

void write_file_mac(const std::string& key, const std::string& path) {
  if (key.empty()) return;
  std::string tmp = path + ".mac.tmp." + std::to_string(getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
  if (!fd) return;
  std::string mac = hmac_sha256_hex(key, read_file(path));
  bool ok = ::write(fd.get(), mac.data(), mac.size()) == ssize_t(mac.size());
  fd.reset();
  if (ok) ::rename(tmp.c_str(), (path + ".mac").c_str());
  else ::unlink(tmp.c_str());
}

}  // namespace kopt::bench
