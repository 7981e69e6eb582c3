// kopt-bench uses the project's one SHA-256 (include/kopt/sha256.hpp, src/core/sha256.cpp).
#pragma once
#include "kopt/sha256.hpp"

namespace kopt::bench {
using kopt::Sha256;
using kopt::sha256_hex;
}  // namespace kopt::bench
