// Building candidates (and C++ references) into a content-addressed cache of shared objects.
//
// Every file a build reads is known from the compiler itself: each compile writes a dependency file
// (`-MD -MF` for the C++ compiler and for nvcc) and, with the GNU assembler, the assembler's own list
// (`--MD`: files pulled in by `.incbin` / `.include`). The toolchain's headers are dropped; every other
// file must lie inside the build's workspace (else the build is refused) and is bound by its SHA-256:
// in the cache (a manifest beside the cached libraries, like ccache's direct mode) and in the result
// (files_read_record, printed by kopt-bench as a KOPT_FILES_READ= line).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  // The folders whose headers are the toolchain's, not the candidate's: the -I/-isystem folders of
  // the flags, the compiler's own search list (`cxx -E -v`, memoized), the CUDA toolkit's root.
  std::vector<std::string> toolchain_dirs() const;
};

// A file a build read: its real path (symbolic links resolved) and the SHA-256 of its bytes.
struct FileRead {
  std::string path;
  std::string sha256;
};

struct BuildResult {
  bool ok = false;
  bool cached = false;
  bool pch_used = false;
  std::string key;          // SHA-256 hex of the sources (real paths, bytes) and the toolchain
  std::string content_key;  // the key and every file the build read (path, SHA-256): the library's name
  std::string ns;           // injected namespace, "kopt_" + 16 hex digits of the key
  std::string so_path;
  std::string workspace;    // the folder every file the build read must lie in
  std::vector<FileRead> files_read;  // every file the build read but the toolchain's, sorted by path
  std::string log;          // compiler output (failure: the error text)
  double seconds = 0;
};

// The key known before compiling: every source's real path and bytes, the flags, the compiler
// identity, the torch version, the CUDA arch list and kopt/op.h. The headers a build reads are not
// guessed here: a cached library is used only when every file its build read still has the bytes it
// had (the manifest, build_cached).
std::string build_key(const Toolchain& tc, const std::vector<std::string>& sources, std::string* error);

// The workspace of sources when the caller names none: the current directory when every source lies
// inside it (kopt-bench --serve runs each evaluation in the session's working directory, so there it
// is the session's); else the git work tree holding the first source (the nearest folder above it with
// a .git); else the deepest folder holding every source. "" when a source does not exist.
std::string default_workspace(const std::vector<std::string>& sources);

// The file names of a make-style dependency file (gcc -MD, nvcc -MD, as --MD): every prerequisite of
// every rule, unescaped (`\ ` a space, `\#` a '#', `$$` a '$'), in order, duplicates kept.
std::vector<std::string> parse_dep_file(const std::string& text);

// Builds (or finds) the shared object. `workspace`: "" = default_workspace(sources). A file the
// build read outside the workspace (or inside kopt-bench's cache, its precompiled header apart) is
// refused: ok false, the log says which file and why. Writes go to a temporary name and are renamed
// into place, so a concurrent or interrupted build never leaves a partial .so under the final name.
BuildResult build_cached(const Toolchain& tc, const std::vector<std::string>& sources,
                         const std::string& cache_dir, const std::string& workspace = "");

// What kopt-bench reports of the files its builds read: {"workspace", "count", "sha256" (of the list:
// SHA-256 over "<sha256>  <path>\n" per file, sorted by path, as sha256sum prints it), "files":
// [{"path", "sha256"}]} with duplicates removed. The payload keeps all but "files"; the files go on
// their own KOPT_FILES_READ= line (report.cpp), so no count of files can push the payload past what a
// reader of KERNEL_EVAL lines takes.
nlohmann::json files_read_record(const std::string& workspace, std::vector<FileRead> files);
// The files a stage that lists its own inputs read (the Python build stage reads exactly the files it
// is given, copied into its build folder): each one's real path and SHA-256; unreadable ones left out.
std::vector<FileRead> files_as_read(const std::vector<std::string>& paths);
std::string files_read_digest(const std::vector<FileRead>& sorted_files);

// Default cache: $KOPT_BENCH_CACHE, else $XDG_CACHE_HOME/kopt-bench, else ~/.cache/kopt-bench.
// Entries are verified (integrity.hpp), so the location only moves where they are kept.
std::string default_cache_dir();
bool make_dirs(const std::string& path);

}  // namespace kopt::bench
