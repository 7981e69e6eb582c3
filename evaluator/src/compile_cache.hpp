// Building candidates (and C++ references) into a content-addressed cache of shared objects.
#pragma once
#include <string>
#include <vector>

namespace kopt::bench {

struct Toolchain {
  std::string cxx;                     // C++ compiler
  std::vector<std::string> cxx_flags;  // -std, -O2, -fPIC, ABI macro
  std::vector<std::string> include_flags;  // -I<kopt/op.h dir> -isystem <torch>
  std::vector<std::string> link_flags;     // -L, rpath, -ltorch_cpu -lc10 ...
  std::string nvcc;                    // empty: no CUDA sources
  std::vector<std::string> nvcc_flags;
  std::string cuda_archs;              // e.g. "90"
  std::string torch_version;
  std::string op_header_path;          // kopt/op.h, hashed into the key
  bool use_pch = true;

  // The toolchain this kopt-bench was built with (paths from CMake; no environment variable swaps
  // the compiler or the op header. KOPT_BENCH_NO_PCH=1 only turns the precompiled header off).
  static Toolchain from_build_config();
  std::string compiler_identity() const;  // first line of `cxx --version` (memoized)
};

struct BuildResult {
  bool ok = false;
  bool cached = false;
  bool pch_used = false;
  std::string key;   // SHA-256 hex
  std::string ns;    // injected namespace, "kopt_" + 16 hex digits of the key
  std::string so_path;
  std::string log;   // compiler output (failure: the error text)
  double seconds = 0;
};

// The key covers every source's name and bytes, header files next to the sources (.h .hpp .cuh
// .hh .inl .inc), the flags, the compiler identity, the torch version, the CUDA arch list and
// kopt/op.h.
std::string build_key(const Toolchain& tc, const std::vector<std::string>& sources, std::string* error);

// Builds (or finds) the shared object. Writes go to a temporary name and are renamed into place,
// so a concurrent or interrupted build never leaves a partial .so under the final name.
BuildResult build_cached(const Toolchain& tc, const std::vector<std::string>& sources,
                         const std::string& cache_dir);

// Default cache: $KOPT_BENCH_CACHE, else $XDG_CACHE_HOME/kopt-bench, else ~/.cache/kopt-bench.
// Entries are verified (integrity.hpp), so the location only moves where they are kept.
std::string default_cache_dir();
bool make_dirs(const std::string& path);

}  // namespace kopt::bench
