#include "inputs.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#ifdef KOPT_WITH_CUDA
#include "cuda_call.hpp"
#endif

namespace kopt::bench {

at::ScalarType scalar_type_of(const std::string& d) {
  if (d == "float32") return at::kFloat;
  if (d == "float16") return at::kHalf;
  if (d == "bfloat16") return at::kBFloat16;
  if (d == "float64") return at::kDouble;
  if (d == "int64") return at::kLong;
  if (d == "int32") return at::kInt;
  if (d == "int16") return at::kShort;
  if (d == "int8") return at::kChar;
  if (d == "uint8") return at::kByte;
  if (d == "bool") return at::kBool;
  throw SpecError("unknown dtype '" + d + "'");
}

at::ScalarType effective_dtype(const InputDesc& d, const std::string& precision) {
  if (is_floating_dtype(d.dtype)) return scalar_type_of(precision);
  return scalar_type_of(d.dtype);
}

static at::Tensor read_file_tensor(const InputSpec& spec, const InputDesc& d) {
  std::string p = d.dist.path[0] == '/' ? d.dist.path : spec.base_dir + "/" + d.dist.path;
  std::ifstream f(p, std::ios::binary);
  if (!f) throw SpecError("input '" + d.name + "': cannot open file " + p);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string bytes = ss.str();
  at::Tensor t = at::empty(d.shape, at::TensorOptions().dtype(scalar_type_of(d.dtype)));
  size_t want = size_t(t.numel()) * t.element_size();
  if (bytes.size() != want)
    throw SpecError("input '" + d.name + "': file " + p + " has " + std::to_string(bytes.size()) +
                    " bytes, the shape and dtype need " + std::to_string(want));
  std::memcpy(t.data_ptr(), bytes.data(), want);
  return t;
}

std::string Regime::describe() const {
  char b[96];
  switch (kind) {
    case RegimeKind::Declared: return "declared";
    case RegimeKind::Scaled: std::snprintf(b, sizeof b, "scaled x%.3g about the centre", f); break;
    case RegimeKind::Shifted: std::snprintf(b, sizeof b, "shifted by %+.3g spreads", f); break;
    case RegimeKind::Wide: std::snprintf(b, sizeof b, "wide: uniform over the centre +-%.3g spreads", f); break;
    case RegimeKind::Outliers:
      std::snprintf(b, sizeof b, "outliers: 1 in 64 values uniform over the centre +-%.3g spreads", f);
      break;
  }
  return b;
}

namespace {
// splitmix64: a well-mixed 64-bit value from a seed and an index (the regime's own draws).
uint64_t mix(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

Regime pick_regime(uint64_t seed, size_t k, bool mild) {
  std::array<RegimeKind, 4> kinds{RegimeKind::Scaled, RegimeKind::Shifted, RegimeKind::Wide, RegimeKind::Outliers};
  std::mt19937_64 order(seed);
  for (size_t i = kinds.size() - 1; i > 0; --i) std::swap(kinds[i], kinds[order() % (i + 1)]);  // Fisher-Yates
  std::mt19937_64 g(mix(seed, 2 * k + (mild ? 1 : 0)));
  const double lo = mild ? 2 : 7, hi = mild ? 4 : 8;
  Regime r;
  r.kind = kinds[k % kinds.size()];
  r.f = std::exp2(lo + (hi - lo) * double(g() >> 11) / double(uint64_t(1) << 53));
  if (r.kind == RegimeKind::Shifted && (g() & 1)) r.f = -r.f;
  return r;
}

// A floating tensor from normal(a, b) or uniform(a, b), in `g`'s regime.
static at::Tensor draw_floating(const std::vector<int64_t>& shape, bool normal, double a, double b, const Regime& g,
                                at::Generator& gen) {
  const double c = normal ? a : (a + b) / 2, w = normal ? b : (b - a) / 2;
  auto declared = [&] {
    at::Tensor t = at::empty(shape, at::kFloat);
    return normal ? t.normal_(a, b, gen) : t.uniform_(a, b, gen);
  };
  auto wide = [&] { return at::empty(shape, at::kFloat).uniform_(c - g.f * w, c + g.f * w, gen); };
  if (!(w > 0)) return declared();
  switch (g.kind) {
    case RegimeKind::Declared: break;
    case RegimeKind::Scaled: return declared().sub_(c).mul_(g.f).add_(c);
    case RegimeKind::Shifted: return declared().add_(g.f * w);
    case RegimeKind::Wide: return wide();
    case RegimeKind::Outliers: {
      at::Tensor t = declared();
      at::Tensor pick = at::empty(shape, at::kFloat).uniform_(0, 1, gen).lt(1.0 / 64);
      return at::where(pick, wide(), t);
    }
  }
  return declared();
}

std::vector<c10::IValue> draw_inputs(const InputSpec& spec, uint64_t seed, const std::string& precision,
                                     at::Device device, const Regime& regime) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<c10::IValue> out;
  out.reserve(spec.inputs.size());
  for (const auto& d : spec.inputs) {
    if (d.is_scalar) {
      switch (d.scalar_kind) {
        case ScalarKind::Float: out.emplace_back(d.scalar); break;
        case ScalarKind::Int: out.emplace_back(int64_t(d.scalar)); break;
        case ScalarKind::Bool: out.emplace_back(d.scalar != 0); break;
      }
      continue;
    }
    at::ScalarType target = effective_dtype(d, precision);
    at::Tensor t;
    switch (d.dist.kind) {
      case DistKind::Normal:
      case DistKind::Uniform:
        t = draw_floating(d.shape, d.dist.kind == DistKind::Normal, d.dist.a, d.dist.b, regime, gen);
        break;
      case DistKind::Randint: {
        const int64_t lo = int64_t(d.dist.a), hi = int64_t(d.dist.b);
        t = at::randint(lo, hi, d.shape, gen, at::kLong);
        if (regime.kind != RegimeKind::Declared && hi - lo > 1) {  // the range's ends, half of the time
          at::Tensor ends = at::randint(0, 2, d.shape, gen, at::kLong).mul_(hi - 1 - lo).add_(lo);
          t = at::where(at::empty(d.shape, at::kFloat).uniform_(0, 1, gen).lt(0.5), ends, t);
        }
        break;
      }
      case DistKind::Const:
        t = at::full(d.shape, d.dist.a, at::kDouble);
        break;
      case DistKind::Arange: {
        int64_t n = 1;
        for (auto s : d.shape) n *= s;
        t = at::arange(n, at::kDouble).mul_(d.dist.b).add_(d.dist.a).reshape(d.shape);
        break;
      }
      case DistKind::File:
        t = read_file_tensor(spec, d);
        break;
    }
    out.emplace_back(t.to(target).contiguous().to(device));
  }
  return out;
}

std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& in) {
  std::vector<c10::IValue> out;
  out.reserve(in.size());
  for (const auto& v : in) out.emplace_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  return out;
}

std::vector<c10::IValue> to_double(const std::vector<c10::IValue>& in) {
  std::vector<c10::IValue> out;
  for (const auto& v : in) {
    if (v.isTensor() && v.toTensor().is_floating_point()) out.emplace_back(v.toTensor().to(at::kDouble));
    else out.push_back(v);
  }
  return out;
}

static void copy_bytes(const at::Tensor& dst, const at::Tensor& src) {
  TORCH_CHECK(dst.is_contiguous() && src.is_contiguous() && dst.nbytes() == src.nbytes() &&
                  dst.scalar_type() == src.scalar_type(),
              "overwrite_bytes: layout mismatch");
  if (dst.is_cpu() && src.is_cpu()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), dst.nbytes());
    return;
  }
#ifdef KOPT_WITH_CUDA
  KOPT_CUDA_CALL(cudaMemcpy(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDefault));
  KOPT_CUDA_CALL(cudaDeviceSynchronize());
#else
  TORCH_CHECK(false, "overwrite_bytes: non-CPU tensor in a CPU-only build");
#endif
}

void overwrite_bytes(std::vector<c10::IValue>& dst, const std::vector<c10::IValue>& src) {
  TORCH_CHECK(dst.size() == src.size(), "overwrite_bytes: arity");
  for (size_t i = 0; i < dst.size(); ++i)
    if (dst[i].isTensor()) copy_bytes(dst[i].toTensor(), src[i].toTensor());
}

uint64_t checksum(const at::Tensor& t0) {
  at::Tensor t = t0.is_cpu() ? t0.contiguous() : t0.to(at::kCPU).contiguous();
  return checksum_bytes(t.data_ptr(), t.nbytes());
}

uint64_t checksum_bytes(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 1469598103934665603ULL;
  // 8 bytes at a time with an FNV-style mix: fast and sensitive to every byte.
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ULL;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

uint64_t checksum(const std::vector<c10::IValue>& in) {
  uint64_t h = 7;
  for (const auto& v : in)
    if (v.isTensor()) h = (h * 31) ^ checksum(v.toTensor());
  return h;
}

}  // namespace kopt::bench
