#include "python_build.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include "compile_cache.hpp"
#include "integrity.hpp"
#include "proc.hpp"
#include "sha256.hpp"
#include "kopt_bench_config.hpp"

namespace kopt::bench {

namespace {

using json = nlohmann::json;

std::string base_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return bool(f);
}

// The files a verified build consists of: its launch file, the solution's copies and every
// extension it built (their paths in the launch file are relative to its folder).
std::vector<std::string> verified_files(const std::string& launch_path) {
  std::vector<std::string> files{launch_path};
  const std::string dir = launch_path.substr(0, launch_path.find_last_of('/') + 1);
  try {
    json l = json::parse(read_file(launch_path));
    const json exts = l.value("extensions", json::object());  // items() needs it to outlive the loop
    for (const auto& [name, rec] : exts.items())
      if (rec.is_object() && rec.contains("path") && rec["path"].is_string()) files.push_back(dir + rec["path"].get<std::string>());
    for (const auto& f : l.value("sources", json::array()))
      if (f.is_string()) files.push_back(dir + f.get<std::string>());
  } catch (const std::exception&) {
    return {};
  }
  return files;
}

bool all_macs_ok(const std::string& mac_key, const std::string& launch_path) {
  const auto files = verified_files(launch_path);
  if (files.empty()) return false;
  for (const auto& f : files)
    if (!file_mac_ok(mac_key, f)) return false;
  return true;
}

// The build script's own reason, else the end of its log (Python's traceback, the compiler's error).
std::string build_error(const std::string& reason, const std::string& log, const ProcStatus& st) {
  if (!reason.empty()) return tail_of(reason, 1500);
  std::string tail = tail_of(log, 1500);
  if (tail.empty()) tail = "the build stage " + st.describe();
  return tail;
}

// Puts a finished, verified folder `tmp` in place as `dir`. Folders are whole before they get their
// final name (every MAC written in `tmp`), so a verified `dir` is never replaced and another
// process's work in progress (a tmp name) is never touched; an unverifiable `dir` is moved aside.
template <class Verified>
bool publish(const std::string& tmp, const std::string& dir, Verified verified) {
  if (::rename(tmp.c_str(), dir.c_str()) == 0) return true;
  if (verified()) {
    remove_tree(tmp);
    return true;
  }
  const std::string aside = dir + ".stale." + std::to_string(getpid());
  if (::rename(dir.c_str(), aside.c_str()) == 0) remove_tree(aside);
  if (::rename(tmp.c_str(), dir.c_str()) == 0) return true;
  remove_tree(tmp);
  return verified();
}

}  // namespace

bool is_python_source(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0;
}

PythonBuild build_python(const std::vector<std::string>& files, const json& params, const std::string& cache_dir,
                         const std::string& mac_key, const std::string& runner) {
  PythonBuild b;
  const auto t0 = std::chrono::steady_clock::now();
  auto done = [&]() -> PythonBuild& {
    b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return b;
  };
  if (std::string(KOPT_CFG_PYTHON).empty() || std::string(KOPT_CFG_PYTHON_EMBEDDED) != "ON") {
    b.error = "this kopt-bench was built without a Python whose torch matches its LibTorch (torch " +
              std::string(KOPT_CFG_TORCH_VERSION) + "): install python3-torch of that line (Debian: apt-get install "
              "python3-torch python3-dev pybind11-dev) and rebuild kopt-bench, or write the kernel as a C++ op (kopt/op.h)";
    return done();
  }
  // The key: every file's name and bytes, what the model is constructed with, the interpreter.
  Sha256 h;
  h.field("kopt-python-build/1").field(KOPT_CFG_PYTHON).field(KOPT_CFG_TORCH_VERSION).field(params.dump());
  std::vector<std::string> names;
  for (const auto& f : files) {
    const std::string n = base_name(f);
    for (const auto& m : names)
      if (m == n) {
        b.error = "two solution files are named " + n + ": the build stage keeps one folder of them";
        return done();
      }
    names.push_back(n);
    h.field(n).field(read_file(f));
  }
  b.key = h.hex();
  b.dir = cache_dir + "/python/" + b.key.substr(0, 32);
  b.entry = b.dir + "/src/" + names.front();
  b.launch = b.dir + "/launch.json";
  if (read_file(b.launch).size() && all_macs_ok(mac_key, b.launch)) {
    b.ok = b.cached = true;
    return done();
  }
  // Built under a temporary name, then renamed into place (a concurrent build of the same bytes
  // finds either nothing or a whole folder). An unverifiable folder is replaced.
  std::random_device rd;
  const std::string tmp = b.dir + ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  if (!make_dirs(tmp + "/src") || !make_dirs(tmp + "/ext") || !make_dirs(tmp + "/tmp")) {
    b.error = "cannot create the build folder " + tmp;
    return done();
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (!write_text(tmp + "/src/" + names[i], read_file(files[i]))) {
      remove_tree(tmp);
      b.error = "cannot copy " + files[i] + " into the build folder";
      return done();
    }
  if (!write_text(tmp + "/params.json", params.dump())) {
    remove_tree(tmp);
    b.error = "cannot write the build parameters";
    return done();
  }
  const std::string log = tmp + "/build.log";
  const std::string script = std::string(KOPT_CFG_TOOLS_DIR) + "/kopt_pybuild.py";
  ProcStatus st = run_process({runner, "pybuild", tmp, KOPT_CFG_PYTHON, script, names.front()}, log, 900,
                              {"TORCH_EXTENSIONS_DIR=" + tmp + "/ext", "TMPDIR=" + tmp + "/tmp", "HOME=" + tmp + "/tmp",
                               "TRITON_CACHE_DIR=" + tmp + "/triton", "TRITON_HOME=" + tmp + "/tmp", "PYTHONDONTWRITEBYTECODE=1",
                               std::string("KOPT_BUILD_ALLOW_WEAKER=") + (params.value("allow_weaker_isolation", false) ? "1" : "0")});
  const std::string log_text = read_file(log);
  json manifest;
  try {
    manifest = json::parse(read_file(tmp + "/manifest.json"));
  } catch (const std::exception&) {
  }
  if (!st.exited || st.code != 0 || !manifest.is_object()) {
    const std::string reason = read_file(tmp + "/error.txt");
    remove_tree(tmp);
    b.error = build_error(reason, log_text, st);
    return done();
  }
  // Paths in the launch file are relative to its folder: the runner may see the build folder at
  // another place (bubblewrap binds it at a fixed one).
  json launch = params;
  launch.erase("inputs");
  launch.erase("allow_weaker_isolation");
  launch["sys_path"] = manifest.value("sys_path", json::array());
  launch["class"] = manifest.value("class", "");
  launch["sources"] = json::array();
  for (const auto& n : names) launch["sources"].push_back("src/" + n);
  launch["extensions"] = manifest.value("extensions", json::object());
  launch["env"] = manifest.value("env", json::object());
  write_text(tmp + "/launch.json", launch.dump(1));
  for (const auto& f : verified_files(tmp + "/launch.json")) write_file_mac(mac_key, f);
  // The runner may run as another user (nobody, under root): the build is readable by all.
  run_process({"chmod", "-R", "a+rX", tmp}, "", 30);
  if (!publish(tmp, b.dir, [&] { return all_macs_ok(mac_key, b.launch); })) {
    b.error = "cannot move the build into " + b.dir;
    return done();
  }
  b.ok = true;
  return done();
}

ExportedReference export_reference(const std::string& problem, const std::string& cache_dir, const std::string& mac_key) {
  ExportedReference r;
  const std::string tools = KOPT_CFG_TOOLS_DIR;
  Sha256 h;
  h.field("kopt-export/1").field(KOPT_CFG_PYTHON).field(KOPT_CFG_TORCH_VERSION).field(read_file(problem));
  h.field(read_file(tools + "/export_ref.py"));
  const std::string dir = cache_dir + "/refs/" + h.hex().substr(0, 32);
  r.pt = dir + "/ref.pt";
  r.spec = dir + "/inputs.json";
  auto runs_as_python = [](const std::string& spec_path) {
    try {
      return json::parse(read_file(spec_path)).value("export", "") == "python";
    } catch (const std::exception&) {
      return false;
    }
  };
  auto verified = [&] {
    if (!file_mac_ok(mac_key, r.spec)) return false;
    r.python = runs_as_python(r.spec);
    return r.python || file_mac_ok(mac_key, r.pt);
  };
  if (verified()) {
    r.ok = r.cached = true;
    return r;
  }
  std::random_device rd;
  const std::string tmp = dir + ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  if (!make_dirs(tmp)) {
    r.error = "cannot create " + tmp;
    return r;
  }
  const std::string log = tmp + "/export.log";
  std::vector<std::string> env{"PYTHONDONTWRITEBYTECODE=1"};
  if (!std::string(KOPT_CFG_PYTHON).empty()) env.push_back("KOPT_PYTHON=" + std::string(KOPT_CFG_PYTHON));
  ProcStatus st = run_process({tools + "/export-ref", problem, "-o", tmp + "/ref.pt", "-s", tmp + "/inputs.json",
                               "--python-fallback"}, log, 600, env);
  if (!st.exited || st.code != 0) {
    r.error = tail_of(read_file(log), 1200);
    if (r.error.empty()) r.error = "the export " + st.describe();
    remove_tree(tmp);
    return r;
  }
  if (!runs_as_python(tmp + "/inputs.json")) write_file_mac(mac_key, tmp + "/ref.pt");
  write_file_mac(mac_key, tmp + "/inputs.json");
  run_process({"chmod", "-R", "a+rX", tmp}, "", 30);
  if (!publish(tmp, dir, verified)) {
    r.error = "cannot move the export into " + dir;
    return r;
  }
  r.python = runs_as_python(r.spec);
  r.ok = true;
  return r;
}

}  // namespace kopt::bench
