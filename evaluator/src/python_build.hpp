// The build stage of a Python solution (KernelBench format): before any runner starts, the
// solution is imported and its model constructed once, in a confined child (Landlock: it reads the
// system and its interpreter, writes only its own build folder; no TCP), so that every
// `load_inline`/`load` extension is compiled there, by a process that may run a compiler, and the
// runner only loads what was built. The output is content-addressed in the cache (the solution
// files' names and bytes, the constructor's arguments and seed, the interpreter and torch), verified
// by the judge's MAC like a compiled .so: a second evaluation of the same bytes does not rebuild.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

struct PythonBuild {
  bool ok = false;
  bool cached = false;
  std::string key;     // SHA-256 hex
  std::string dir;     // the build folder in the cache
  std::string entry;   // the solution's copy inside it (what the runner imports)
  std::string launch;  // the runner's launch file (python_op.hpp)
  std::string error;   // why not (the build's own words: a compiler's tail, a traceback's end)
  double seconds = 0;
};

bool is_python_source(const std::string& path);

// `files`: the solution (first: the module that defines ModelNew) and files it reads (helper
// modules, .cu/.cpp sources passed to load); `params`: init_args, seed, train, precision, device,
// inputs (the spec's, for one warm-up call). `runner`: kopt-bench-runner, which confines the child.
PythonBuild build_python(const std::vector<std::string>& files, const nlohmann::json& params,
                         const std::string& cache_dir, const std::string& mac_key, const std::string& runner);

// A KernelBench problem (.py) exported once per bytes (tools/export-ref: TorchScript + input spec,
// the random-reference refusal), kept in the cache under the judge's MAC. A problem that neither
// scripts nor traces gets its spec alone (python: the judge runs its Model as Python).
struct ExportedReference {
  bool ok = false;
  bool cached = false;
  std::string pt, spec;  // the module and the spec derived from get_inputs()/get_init_inputs()
  bool python = false;   // neither script nor trace worked: no module; the reference runs as Python
  std::string error;     // the exporter's own words
};
ExportedReference export_reference(const std::string& problem, const std::string& cache_dir, const std::string& mac_key);

}  // namespace kopt::bench
