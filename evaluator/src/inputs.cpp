#include "inputs.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cstring>
#include <fstream>
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

std::vector<c10::IValue> draw_inputs(const InputSpec& spec, uint64_t seed, const std::string& precision,
                                     at::Device device) {
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
        t = at::empty(d.shape, at::kFloat).normal_(d.dist.a, d.dist.b, gen);
        break;
      case DistKind::Uniform:
        t = at::empty(d.shape, at::kFloat).uniform_(d.dist.a, d.dist.b, gen);
        break;
      case DistKind::Randint:
        t = at::randint(int64_t(d.dist.a), int64_t(d.dist.b), d.shape, gen, at::kLong);
        break;
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
