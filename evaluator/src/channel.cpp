#include "channel.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace kopt::bench {
namespace {

// One table row per value. Kinds: 0 tensor, 1 double, 2 int, 3 bool, 4 none.
struct Row {
  int64_t kind, dtype, ndim, offset, nbytes;
  int64_t sizes[8];
  double d;
  int64_t i;
};
struct Table {
  int64_t count;
  Row rows[1];
};
constexpr size_t kMaxRows = (kTableBytes - sizeof(int64_t)) / sizeof(Row);

size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

const Table* table_at(const SharedRegion& r, size_t offset) {
  if (offset + kTableBytes > r.size) throw std::runtime_error("a block outside the region");
  const auto* t = reinterpret_cast<const Table*>(r.at(offset));
  if (t->count < 0 || size_t(t->count) > kMaxRows) throw std::runtime_error("corrupt value table");
  return t;
}

// A tensor row's sizes, checked against the region; its data stays where it is.
std::vector<int64_t> checked_sizes(const SharedRegion& r, const Row& row) {
  if (row.ndim < 0 || row.ndim > 8 || row.dtype < 0 || row.dtype >= int64_t(at::ScalarType::NumOptions))
    throw std::runtime_error("corrupt tensor row");
  std::vector<int64_t> sizes(row.sizes, row.sizes + row.ndim);
  int64_t n = 1;
  for (auto s : sizes) {
    if (s < 0 || (s > 0 && n > (int64_t(1) << 50) / s)) throw std::runtime_error("corrupt tensor row");
    n *= s;
  }
  const int64_t bytes = n * int64_t(c10::elementSize(at::ScalarType(row.dtype)));
  if (bytes != row.nbytes || row.offset < 0 || size_t(row.offset) + size_t(bytes) > r.size)
    throw std::runtime_error("corrupt tensor row");
  return sizes;
}

template <class OnTensor>
std::vector<c10::IValue> read_block(const SharedRegion& r, size_t offset, OnTensor on_tensor) {
  const Table* t = table_at(r, offset);
  std::vector<c10::IValue> out;
  out.reserve(size_t(t->count));
  for (int64_t k = 0; k < t->count; ++k) {
    Row row = t->rows[k];  // copied: the other side may keep writing
    switch (row.kind) {
      case 0: out.emplace_back(on_tensor(row, checked_sizes(r, row))); break;
      case 1: out.emplace_back(row.d); break;
      case 2: out.emplace_back(row.i); break;
      case 3: out.emplace_back(bool(row.i)); break;
      case 4: out.emplace_back(at::Tensor()); break;
      default: throw std::runtime_error("corrupt value table");
    }
  }
  return out;
}

}  // namespace

SharedRegion::~SharedRegion() {
  if (base) ::munmap(base, size);
  // fd: closed by its owner
}

SharedRegion* SharedRegion::create(const char* name, size_t bytes) {
  UniqueFd fd(memfd_create(name, 0));  // inherited on purpose: the runner maps it
  if (!fd) throw std::runtime_error("memfd_create failed");
  bytes = page_align(std::max(bytes, kTableBytes + kPage));
  if (ftruncate(fd.get(), off_t(bytes)) != 0) throw std::runtime_error("cannot size the shared region");
  auto r = std::make_unique<SharedRegion>();
  if (!r->map(fd.get())) throw std::runtime_error("cannot map the shared region");
  fd.release();  // the region's now
  return r.release();
}

bool SharedRegion::map(int f) {
  off_t end = lseek(f, 0, SEEK_END);
  if (end <= 0) return false;
  void* p = mmap(nullptr, size_t(end), PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  if (p == MAP_FAILED) return false;
  fd.reset(f);
  base = p;
  size = size_t(end);
  return true;
}

size_t block_bytes(const std::vector<c10::IValue>& v) {
  size_t n = kTableBytes;
  for (const auto& x : v)
    if (x.isTensor() && x.toTensor().defined()) n += align64(x.toTensor().nbytes());
  return n;
}

std::string encode_block(SharedRegion& r, size_t offset, const std::vector<c10::IValue>& v,
                         std::vector<size_t>* where) {
  if (v.size() > kMaxRows) return "too many values (" + std::to_string(v.size()) + ")";
  if (offset + kTableBytes > r.size) return "a block outside the region";
  auto* t = reinterpret_cast<Table*>(r.at(offset));
  if (where) where->assign(v.size(), 0);
  size_t off = offset + kTableBytes;
  for (size_t k = 0; k < v.size(); ++k) {
    Row row{};
    const auto& x = v[k];
    if (x.isTensor()) {
      const at::Tensor& ten = x.toTensor();
      if (!ten.defined()) {
        row.kind = 4;
      } else {
        if (ten.dim() > 8) return "a tensor of rank " + std::to_string(ten.dim()) + " (at most 8)";
        at::Tensor c = ten.detach().to(at::kCPU).contiguous();
        row.kind = 0;
        row.dtype = int64_t(c.scalar_type());
        row.ndim = c.dim();
        for (int64_t d = 0; d < c.dim(); ++d) row.sizes[d] = c.size(d);
        row.nbytes = int64_t(c.nbytes());
        row.offset = int64_t(off);
        if (off + c.nbytes() > r.size)
          return "values of " + std::to_string(off + c.nbytes() - offset) + " bytes exceed the " +
                 std::to_string(r.size) + "-byte region sized from the reference";
        if (c.nbytes()) std::memcpy(r.at(off), c.data_ptr(), c.nbytes());
        if (where) (*where)[k] = off;
        off += align64(c.nbytes());
      }
    } else if (x.isDouble()) {
      row.kind = 1;
      row.d = x.toDouble();
    } else if (x.isInt()) {
      row.kind = 2;
      row.i = x.toInt();
    } else if (x.isBool()) {
      row.kind = 3;
      row.i = x.toBool();
    } else if (x.isNone()) {
      row.kind = 4;
    } else {
      return std::string("a value of kind ") + x.tagKind() + " cannot travel";
    }
    t->rows[k] = row;
  }
  t->count = int64_t(v.size());
  return "";
}

std::vector<c10::IValue> decode_block(const SharedRegion& r, size_t offset, at::Device dev) {
  return read_block(r, offset, [&](const Row& row, const std::vector<int64_t>& sizes) {
    at::Tensor c = at::empty(sizes, at::TensorOptions().dtype(at::ScalarType(row.dtype)));
    if (c.nbytes()) std::memcpy(c.data_ptr(), r.at(size_t(row.offset)), c.nbytes());
    return dev.is_cpu() ? c : c.to(dev);
  });
}

std::vector<c10::IValue> wrap_block(SharedRegion& r, size_t offset, at::Device dev) {
  return read_block(r, offset, [&](const Row& row, const std::vector<int64_t>& sizes) {
    at::Tensor v = at::from_blob(r.at(size_t(row.offset)), sizes, at::TensorOptions().dtype(at::ScalarType(row.dtype)));
    return dev.is_cpu() ? v : v.to(dev);
  });
}

void write_back_block(SharedRegion& r, size_t offset, const std::vector<c10::IValue>& v) {
  const Table* t = table_at(r, offset);
  for (int64_t k = 0; k < t->count && size_t(k) < v.size(); ++k) {
    const Row& row = t->rows[k];
    if (row.kind != 0 || !v[size_t(k)].isTensor()) continue;
    at::Tensor c = v[size_t(k)].toTensor().detach().to(at::kCPU).contiguous();
    if (int64_t(c.nbytes()) != row.nbytes) continue;
    if (c.nbytes()) std::memcpy(r.at(size_t(row.offset)), c.data_ptr(), c.nbytes());
  }
}

std::vector<at::Tensor> to_outputs(const std::vector<c10::IValue>& stack, const char* who) {
  std::vector<at::Tensor> o;
  auto add = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      o.push_back(v.toTensor());
    } else if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements()) {
        if (!e.isTensor()) throw std::runtime_error(std::string(who) + " returned a tuple with a non-tensor element");
        o.push_back(e.toTensor());
      }
    } else if (v.isTensorList()) {
      for (const auto& t : v.toTensorVector()) o.push_back(t);
    } else {
      throw std::runtime_error(std::string(who) + " must return a Tensor or a tuple of Tensors, got " + v.tagKind());
    }
  };
  for (const auto& v : stack) add(v);
  return o;
}

bool shares_storage(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return false;
  if (a.storage().is_alias_of(b.storage())) return true;
  auto la = reinterpret_cast<uintptr_t>(a.storage().data()), ha = la + a.storage().nbytes();
  auto lb = reinterpret_cast<uintptr_t>(b.storage().data()), hb = lb + b.storage().nbytes();
  return ranges_overlap(la, ha, lb, hb);
}

uint64_t OutDesc::span() const {
  if (ndim < 0 || ndim > 8 || elem <= 0) return 0;
  uint64_t last = 0;
  for (int64_t d = 0; d < ndim; ++d) {
    if (sizes[d] == 0) return 0;
    if (sizes[d] < 0 || strides[d] < 0) return 0;
    last += uint64_t(sizes[d] - 1) * uint64_t(strides[d]);
  }
  return (last + 1) * uint64_t(elem);
}

OutDesc describe_output(const at::Tensor& t) {
  OutDesc d;
  if (!t.defined()) {
    d.ndim = -1;
    return d;
  }
  d.dtype = int64_t(t.scalar_type());
  d.ndim = std::min<int64_t>(t.dim(), 9);
  for (int64_t k = 0; k < t.dim() && k < 8; ++k) {
    d.sizes[k] = t.size(k);
    d.strides[k] = t.stride(k);
  }
  d.ptr = reinterpret_cast<uint64_t>(t.data_ptr());
  d.device = t.is_cuda() ? 1 : 0;
  d.elem = int64_t(t.element_size());
  return d;
}

at::Tensor tensor_from_desc(const OutDesc& d, const void* bytes) {
  if (d.ndim < 0 || d.ndim > 8 || d.dtype < 0 || d.dtype >= int64_t(at::ScalarType::NumOptions))
    throw std::runtime_error("an output the runner described as no tensor");
  const auto st = at::ScalarType(d.dtype);
  if (int64_t(c10::elementSize(st)) != d.elem) throw std::runtime_error("an output described with a wrong element size");
  std::vector<int64_t> sizes(d.sizes, d.sizes + d.ndim), strides(d.strides, d.strides + d.ndim);
  const uint64_t span = d.span();
  at::Tensor flat = at::empty({int64_t(span / uint64_t(d.elem))}, at::TensorOptions().dtype(st));
  if (span) std::memcpy(flat.data_ptr(), bytes, span);
  for (auto s : sizes)
    if (s == 0) return at::empty(sizes, at::TensorOptions().dtype(st));
  return flat.as_strided(sizes, strides).contiguous();
}

}  // namespace kopt::bench
