#include "spec.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <random>

#include "integrity.hpp"
#include "sha256.hpp"

namespace kopt::bench {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw SpecError(where + ": " + what);
}

double num(const json& j, const char* key, double dflt, const std::string& where) {
  if (!j.contains(key)) return dflt;
  if (!j[key].is_number()) fail(where + "." + key, "must be a number");
  return j[key].get<double>();
}

// "bytes" / "flops": a whole number > 0 (1e9 is fine; 1.5, 0, -1, "8" and NaN are not), at most `max`.
double whole_positive(const json& j, const char* key, double max, const char* what) {
  const std::string where = std::string("spec.") + key;
  const json& v = j[key];
  if (!v.is_number()) fail(where, std::string("must be a number: ") + what);
  const double d = v.get<double>();
  if (!(d > 0) || d != std::floor(d) || !(d <= max))
    fail(where, "must be a whole number > 0 and at most " + json(max).dump() + " (" + what + "), not " + v.dump());
  return d;
}

Dist parse_dist(const json& d, const std::string& dtype, const std::string& where) {
  Dist out;
  if (!d.is_object()) fail(where, "must be an object like {\"kind\": \"normal\"}");
  std::string kind = "normal";
  if (d.contains("kind")) {
    if (!d["kind"].is_string()) fail(where + ".kind", "must be a string");
    kind = d["kind"].get<std::string>();
  }
  if (kind == "normal") {
    out.kind = DistKind::Normal;
    out.a = num(d, "mean", 0, where);
    out.b = num(d, "std", 1, where);
    if (!(out.b >= 0)) fail(where + ".std", "must be >= 0");
  } else if (kind == "uniform") {
    out.kind = DistKind::Uniform;
    out.a = num(d, "low", 0, where);
    out.b = num(d, "high", 1, where);
    if (!(out.b > out.a)) fail(where, "uniform needs low < high");
  } else if (kind == "randint") {
    out.kind = DistKind::Randint;
    if (!d.contains("high")) fail(where + ".high", "randint needs high (exclusive)");
    out.a = num(d, "low", 0, where);
    out.b = num(d, "high", 0, where);
    if (!(out.b > out.a)) fail(where, "randint needs low < high");
  } else if (kind == "const") {
    out.kind = DistKind::Const;
    if (!d.contains("value")) fail(where + ".value", "const needs a value");
    out.a = num(d, "value", 0, where);
  } else if (kind == "arange") {
    out.kind = DistKind::Arange;
    out.a = num(d, "start", 0, where);
    out.b = num(d, "step", 1, where);
  } else if (kind == "file") {
    out.kind = DistKind::File;
    if (!d.contains("path") || !d["path"].is_string()) fail(where + ".path", "file needs a path string");
    out.path = d["path"].get<std::string>();
  } else {
    fail(where + ".kind", "unknown '" + kind + "' (normal, uniform, randint, const, arange, file)");
  }
  (void)dtype;
  return out;
}

}  // namespace

bool is_floating_dtype(const std::string& d) {
  return d == "float32" || d == "float16" || d == "bfloat16" || d == "float64";
}
bool is_known_dtype(const std::string& d) {
  return is_floating_dtype(d) || d == "int64" || d == "int32" || d == "int16" || d == "int8" ||
         d == "uint8" || d == "bool";
}
bool is_known_precision(const std::string& p) {
  return p == "float32" || p == "float16" || p == "bfloat16";
}

static std::string normalize_dtype(std::string d) {
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  if (d == "float") return "float32";
  if (d == "half") return "float16";
  if (d == "double") return "float64";
  if (d == "long") return "int64";
  if (d == "int") return "int32";
  return d;
}

static InputSpec parse_spec_fields(const json& j, const std::string& base_dir) {
  InputSpec s;
  s.raw = j;
  s.base_dir = base_dir;
  if (!j.is_object()) fail("spec", "must be a JSON object with an \"inputs\" array");
  if (!j.contains("inputs") || !j["inputs"].is_array()) fail("spec.inputs", "missing or not an array");
  const auto& ins = j["inputs"];
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string where = "inputs[" + std::to_string(i) + "]";
    const json& e = ins[i];
    if (!e.is_object()) fail(where, "must be an object");
    InputDesc d;
    d.name = e.value("name", "in" + std::to_string(i));
    if (e.contains("scalar")) {
      d.is_scalar = true;
      const json& v = e["scalar"];
      std::string type = e.value("type", std::string());
      if (v.is_boolean()) {
        d.scalar_kind = ScalarKind::Bool;
        d.scalar = v.get<bool>() ? 1 : 0;
      } else if (v.is_number()) {
        d.scalar = v.get<double>();
        d.scalar_kind = v.is_number_float() ? ScalarKind::Float : ScalarKind::Int;
      } else {
        fail(where + ".scalar", "must be a number or a boolean");
      }
      if (type == "float") d.scalar_kind = ScalarKind::Float;
      else if (type == "int") d.scalar_kind = ScalarKind::Int;
      else if (type == "bool") d.scalar_kind = ScalarKind::Bool;
      else if (!type.empty()) fail(where + ".type", "unknown '" + type + "' (float, int, bool)");
    } else {
      if (!e.contains("shape") || !e["shape"].is_array()) fail(where + ".shape", "missing or not an array");
      for (const auto& x : e["shape"]) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0) fail(where + ".shape", "dimensions must be integers >= 0");
        d.shape.push_back(x.get<int64_t>());
      }
      if (e.contains("dtype")) {
        if (!e["dtype"].is_string()) fail(where + ".dtype", "must be a string");
        d.dtype = normalize_dtype(e["dtype"].get<std::string>());
      }
      if (!is_known_dtype(d.dtype)) fail(where + ".dtype", "unknown '" + d.dtype + "'");
      d.dist = parse_dist(e.value("dist", json::object()), d.dtype, where + ".dist");
      if (d.dist.kind == DistKind::Randint && is_floating_dtype(d.dtype) && !e.contains("dtype"))
        d.dtype = "int64";  // randint with no dtype means an index tensor
    }
    s.inputs.push_back(std::move(d));
  }
  if (j.contains("params")) {
    if (!j["params"].is_array()) fail("spec.params", "must be an array of parameter names");
    for (const auto& p : j["params"]) {
      if (!p.is_string()) fail("spec.params", "names must be strings");
      s.params.push_back(p.get<std::string>());
    }
  }
  if (j.contains("init_args")) s.init_args = j["init_args"];
  if (j.contains("precision")) {
    if (!j["precision"].is_string() || !is_known_precision(j["precision"].get<std::string>()))
      fail("spec.precision", "must be float32, float16 or bfloat16");
    s.precision = j["precision"].get<std::string>();
  }
  if (j.contains("mode")) {
    if (!j["mode"].is_string() || (j["mode"] != "train" && j["mode"] != "eval"))
      fail("spec.mode", "must be \"train\" or \"eval\"");
    s.mode = j["mode"].get<std::string>();
  }
  if (j.contains("integer_outputs")) {
    if (!j["integer_outputs"].is_string() || (j["integer_outputs"] != "exact" && j["integer_outputs"] != "tolerance"))
      fail("spec.integer_outputs", "must be \"exact\" (the default) or \"tolerance\"");
    s.integer_outputs_tolerance = j["integer_outputs"] == "tolerance";
  }
  if (j.contains("bytes"))
    s.bytes = uint64_t(whole_positive(j, "bytes", 9007199254740992.0, "the bytes one call must move at least"));
  if (j.contains("flops")) s.flops = whole_positive(j, "flops", 1e24, "the floating-point operations of one call");
  if (j.contains("seed")) {
    if (!j["seed"].is_number_integer() || j["seed"].get<int64_t>() < 0) fail("spec.seed", "must be an integer >= 0");
    s.seed = j["seed"].get<uint64_t>();
  }
  return s;
}

// A field of the wrong JSON type (found by fuzzing: "name": [8192, 64]) must also end in a
// SpecError that says where, never in another exception.
InputSpec parse_spec(const json& j, const std::string& base_dir) {
  try {
    return parse_spec_fields(j, base_dir);
  } catch (const json::exception& e) {
    throw SpecError(std::string("spec: a field has the wrong type (") + e.what() + ")");
  }
}

InputSpec load_spec(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw SpecError(path + ": cannot open the input spec");
  json j;
  try {
    j = json::parse(f);
  } catch (const json::parse_error& e) {
    throw SpecError(path + ": not valid JSON (" + e.what() + ")");
  }
  auto slash = path.find_last_of('/');
  return parse_spec(j, slash == std::string::npos ? "." : path.substr(0, slash));
}

bool input_varies(const InputDesc& d) {
  if (d.is_scalar) return false;
  for (auto n : d.shape)
    if (n <= 0) return false;
  switch (d.dist.kind) {
    case DistKind::Normal: return d.dist.b > 0;
    case DistKind::Uniform: return d.dist.b > d.dist.a;
    case DistKind::Randint: return d.dist.b - d.dist.a > 1;
    default: return false;
  }
}

bool any_input_varies(const InputSpec& s) {
  for (const auto& d : s.inputs)
    if (input_varies(d)) return true;
  return false;
}

SeedSchedule SeedSchedule::random() { return SeedSchedule(); }

SeedSchedule SeedSchedule::pinned(uint64_t seed, const std::string& key) {
  SeedSchedule s;
  s.pinned_ = true;
  s.seed_ = seed;
  s.key_ = key;
  return s;
}

uint64_t SeedSchedule::operator()(Stream stream, uint64_t index) {
  const auto k = std::make_pair(uint64_t(stream), index);
  auto it = drawn_.find(k);
  if (it != drawn_.end()) return it->second;
  uint64_t v;
  if (pinned_) {
    const std::string mac = hmac_sha256_hex(key_, "kopt-bench seed " + std::to_string(seed_) + " " +
                                                       std::to_string(uint64_t(stream)) + " " + std::to_string(index));
    v = std::stoull(mac.substr(0, 16), nullptr, 16);
  } else {
    std::random_device rd;  // getrandom(2)
    v = (uint64_t(rd()) << 32) ^ uint64_t(rd());
  }
  v &= 0x7FFFFFFFFFFFFFFFULL;
  drawn_.emplace(k, v);
  return v;
}

std::string spec_hash(const InputSpec& s) {
  Sha256 h;
  h.field(s.raw.dump());
  for (const auto& in : s.inputs) {
    if (in.is_scalar || in.dist.kind != DistKind::File) continue;
    std::string p = in.dist.path[0] == '/' ? in.dist.path : s.base_dir + "/" + in.dist.path;
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    h.field(ss.str());
  }
  return h.hex();
}

}  // namespace kopt::bench
