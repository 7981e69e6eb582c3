// Verifying state the candidate does not control: the compile cache's shared objects and the frozen
// baseline carry an HMAC-SHA256 made with a key kept in the cache directory (0600). The key file is
// hidden from the candidate's process, which also cannot write anywhere outside its scratch dir.
#pragma once
#include <string>

namespace kopt::bench {

// The judge's key (hex), created from OS randomness on first use. "" when it cannot be stored.
std::string judge_key(const std::string& cache_dir, std::string* key_path);
std::string hmac_sha256_hex(const std::string& key, const std::string& data);

// <path>.mac holds HMAC(key, bytes of path).
bool file_mac_ok(const std::string& key, const std::string& path);
void write_file_mac(const std::string& key, const std::string& path);

}  // namespace kopt::bench
