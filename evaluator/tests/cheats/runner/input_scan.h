// Test helper for the cheats in this folder: finds the judge's input values in the region the
// runner maps (its format is open source: a table of rows, then the data), wherever the judge put
// them, by scanning the pages of the region that hold anything (mincore). What a candidate that
// wants to work on the inputs before the judge's clock starts would do.
#pragma once
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

struct KoptFoundInput {
  const float* data;
  int64_t rows, cols;
};

namespace kopt_scan {
struct Row {
  int64_t kind, dtype, ndim, offset, nbytes;
  int64_t sizes[8];
  double d;
  int64_t i;
};
inline bool region(char** base, size_t* size) {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[512];
  bool ok = false;
  while (std::fgets(line, sizeof line, f))
    if (std::strstr(line, "kopt-in")) {
      unsigned long lo = 0, hi = 0;
      if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
        *base = reinterpret_cast<char*>(lo);
        *size = hi - lo;
        ok = true;
      }
      break;
    }
  std::fclose(f);
  return ok;
}
}  // namespace kopt_scan

// Every block holding one float32 matrix: the op's single input.
inline std::vector<KoptFoundInput> kopt_find_inputs() {
  std::vector<KoptFoundInput> found;
  char* base = nullptr;
  size_t size = 0;
  if (!kopt_scan::region(&base, &size)) return found;
  const size_t pages = size / 4096;
  std::vector<unsigned char> resident(pages);
  if (mincore(base, size, resident.data()) != 0) return found;
  for (size_t p = 0; p < pages; ++p) {
    if (!(resident[p] & 1)) continue;
    const char* at = base + p * 4096;
    int64_t count;
    std::memcpy(&count, at, 8);
    if (count != 1) continue;
    kopt_scan::Row r;
    std::memcpy(&r, at + 8, sizeof r);
    if (r.kind != 0 || r.dtype != 6 || r.ndim != 2 || r.sizes[0] <= 0 || r.sizes[1] <= 0) continue;
    if (r.nbytes != r.sizes[0] * r.sizes[1] * 4 || r.offset <= 0 || size_t(r.offset + r.nbytes) > size) continue;
    if (!(resident[size_t(r.offset) / 4096] & 1)) continue;
    found.push_back({reinterpret_cast<const float*>(base + r.offset), r.sizes[0], r.sizes[1]});
  }
  return found;
}

// A fingerprint of all of a matrix's values. All of them: a stored answer is then the answer of
// exactly this input, so these cheats fail only on the clock (a partial fingerprint let a stale
// answer from a racing watcher thread meet the mutation sentinel's one-element change, and the
// test saw the sentinel instead of the clock).
inline uint64_t kopt_fingerprint(const float* x, int64_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (int64_t k = 0; k < n; ++k) {
    uint32_t w;
    std::memcpy(&w, x + k, 4);
    h = (h ^ w) * 1099511628211ULL;
  }
  return h;
}
