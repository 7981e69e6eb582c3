// The JSON input spec: what tensors and scalars the op receives and how their values are drawn.
// Parsing is torch-free; drawing values lives in inputs.hpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DistKind { Normal, Uniform, Randint, Const, Arange, File };

struct Dist {
  DistKind kind = DistKind::Normal;
  double a = 0, b = 1;  // normal: mean,std; uniform: low,high; randint: low,high; const: value,-; arange: start,step
  std::string path;     // file: raw little-endian values of the tensor's dtype, C order
};

enum class ScalarKind { Float, Int, Bool };

struct InputDesc {
  std::string name;
  bool is_scalar = false;
  // tensor
  std::vector<int64_t> shape;
  std::string dtype = "float32";  // float32 float16 bfloat16 float64 int64 int32 int16 int8 uint8 bool
  Dist dist;
  // scalar
  ScalarKind scalar_kind = ScalarKind::Float;
  double scalar = 0;
};

struct InputSpec {
  std::vector<InputDesc> inputs;
  std::vector<std::string> params;  // reference parameter names passed after the inputs
  nlohmann::json init_args = nlohmann::json::array();
  std::optional<std::string> precision;  // float32 float16 bfloat16
  std::optional<std::string> mode;       // train | eval: the TorchScript reference's mode (absent: eval)
  uint64_t seed = 42;
  // How integer, boolean and index outputs are compared: exactly (the default), or, where the spec
  // declares "integer_outputs": "tolerance", with the float rules (atol/rtol, relative L2).
  bool integer_outputs_tolerance = false;
  // Distance to the limit (issue 49): the bytes one call must move at least and its floating-point
  // operations, when the spec declares them ("bytes", "flops": whole numbers > 0). `bytes` replaces
  // the count of the tensors (inputs read once, outputs written once); `flops` enables compute_fraction.
  std::optional<uint64_t> bytes;
  std::optional<double> flops;
  std::string base_dir;  // where relative file paths resolve
  nlohmann::json raw;    // as given, for hashing
};

// Throws SpecError with the JSON path of the offending field.
InputSpec parse_spec(const nlohmann::json& j, const std::string& base_dir = ".");
InputSpec load_spec(const std::string& path);

bool is_floating_dtype(const std::string& dtype);
bool is_known_dtype(const std::string& dtype);
bool is_known_precision(const std::string& p);

// The seed of each purpose's each trial. None says anything about another (a trial's generator has
// 32 bits of state, so its values reveal its own seed in minutes; they must not reveal the next
// trial's): without a pinned seed each is drawn from OS randomness; with --seed N each is
// HMAC-SHA256(the judge's key, N, purpose, index), reproducible with the same cache and
// unpredictable to a candidate, which cannot read the key.
enum class Stream : uint64_t {
  Correctness = 1, Check = 2, Timing = 3, Sentinel = 4, Warmup = 5, Select = 6, Poison = 7, OffDistribution = 8, Floor = 9
};
class SeedSchedule {
 public:
  static SeedSchedule random();
  static SeedSchedule pinned(uint64_t seed, const std::string& key);
  uint64_t operator()(Stream stream, uint64_t index);  // the same (stream, index) gives the same seed
  bool is_pinned() const { return pinned_; }

 private:
  bool pinned_ = false;
  uint64_t seed_ = 0;
  std::string key_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> drawn_;
};

// Whether an input's values change from one draw to the next: a tensor drawn from a normal with
// std > 0, a uniform with high > low, or a randint with more than one value, with at least one
// element. Scalars, const, arange and file inputs never vary.
bool input_varies(const InputDesc& d);
// False for a deterministic spec: no input varies, every draw gives the same values.
bool any_input_varies(const InputSpec& s);

// SHA-256 of the spec's canonical JSON plus the contents of any file inputs.
std::string spec_hash(const InputSpec& s);

}  // namespace kopt::bench
