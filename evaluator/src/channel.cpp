#include "channel.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace kopt::bench {
namespace {

// One table row per value. Kinds: 0 tensor, 1 double, 2 int, 3 bool, 4 none. A tensor's `i` holds
// the device type it had on the writing side.
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

}  // namespace

SharedRegion::~SharedRegion() {
  if (base) ::munmap(base, size);
  if (fd >= 0) ::close(fd);
}

SharedRegion* SharedRegion::create(const char* name, size_t bytes) {
  int fd = memfd_create(name, 0);  // inherited on purpose: the runner maps it
  if (fd < 0) throw std::runtime_error("memfd_create failed");
  bytes = align64(std::max(bytes, kTableBytes + 64));
  if (ftruncate(fd, off_t(bytes)) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot size the shared region");
  }
  auto* r = new SharedRegion;
  if (!r->map(fd)) {
    delete r;
    throw std::runtime_error("cannot map the shared region");
  }
  return r;
}

bool SharedRegion::map(int f) {
  off_t end = lseek(f, 0, SEEK_END);
  if (end <= 0) return false;
  void* p = mmap(nullptr, size_t(end), PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  if (p == MAP_FAILED) return false;
  fd = f;
  base = p;
  size = size_t(end);
  return true;
}

size_t region_bytes(const std::vector<c10::IValue>& v) {
  size_t n = kTableBytes;
  for (const auto& x : v)
    if (x.isTensor()) n += align64(x.toTensor().nbytes());
  return n;
}

std::string encode_values(SharedRegion& r, const std::vector<c10::IValue>& v) {
  if (v.size() > kMaxRows) return "too many values (" + std::to_string(v.size()) + ")";
  auto* t = static_cast<Table*>(r.base);
  size_t off = kTableBytes;
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
        row.i = int64_t(ten.device().type());
        row.dtype = int64_t(c.scalar_type());
        row.ndim = c.dim();
        for (int64_t d = 0; d < c.dim(); ++d) row.sizes[d] = c.size(d);
        row.nbytes = int64_t(c.nbytes());
        row.offset = int64_t(off);
        if (off + c.nbytes() > r.size)
          return "outputs of " + std::to_string(off + c.nbytes()) + " bytes exceed the " + std::to_string(r.size) +
                 "-byte region sized from the reference's outputs";
        if (c.nbytes()) std::memcpy(static_cast<char*>(r.base) + off, c.data_ptr(), c.nbytes());
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

std::vector<c10::IValue> decode_values(const SharedRegion& r, at::Device dev, std::vector<c10::DeviceType>* devices) {
  const auto* t = static_cast<const Table*>(r.base);
  int64_t n = t->count;
  if (n < 0 || size_t(n) > kMaxRows) throw std::runtime_error("corrupt value table");
  std::vector<c10::IValue> out;
  out.reserve(size_t(n));
  for (int64_t k = 0; k < n; ++k) {
    Row row = t->rows[k];  // copied: the other side may keep writing
    if (devices) {
      bool known = row.kind == 0 && row.i >= 0 && row.i < int64_t(c10::DeviceType::COMPILE_TIME_MAX_DEVICE_TYPES);
      devices->push_back(known ? c10::DeviceType(row.i) : c10::DeviceType::CPU);
    }
    switch (row.kind) {
      case 0: {
        if (row.ndim < 0 || row.ndim > 8 || row.dtype < 0 || row.dtype >= int64_t(at::ScalarType::NumOptions))
          throw std::runtime_error("corrupt tensor row");
        std::vector<int64_t> sizes(row.sizes, row.sizes + row.ndim);
        for (auto s : sizes)
          if (s < 0) throw std::runtime_error("corrupt tensor row");
        at::Tensor c = at::empty(sizes, at::TensorOptions().dtype(at::ScalarType(row.dtype)));
        if (int64_t(c.nbytes()) != row.nbytes || row.offset < int64_t(kTableBytes) ||
            size_t(row.offset) + c.nbytes() > r.size)
          throw std::runtime_error("corrupt tensor row");
        if (c.nbytes()) std::memcpy(c.data_ptr(), static_cast<const char*>(r.base) + row.offset, c.nbytes());
        out.emplace_back(dev.is_cpu() ? c : c.to(dev));
        break;
      }
      case 1: out.emplace_back(row.d); break;
      case 2: out.emplace_back(row.i); break;
      case 3: out.emplace_back(bool(row.i)); break;
      case 4: out.emplace_back(at::Tensor()); break;
      default: throw std::runtime_error("corrupt value table");
    }
  }
  return out;
}

}  // namespace kopt::bench
