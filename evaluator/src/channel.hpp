// The channel between the judge and a runner process (the candidate's, or the reference's timing
// process). The judge lays every value out itself, in memfd regions it creates, as blocks
// ([table][data]) at offsets it chooses; commands and replies are small fixed-size messages on two
// pipes. The runner only maps: an input block becomes tensors over the shared bytes (no copy on the
// CPU), and its outputs are described to the judge (OutDesc), which reads them out of the runner's
// memory itself while the runner is stopped (remote_op.hpp). Only where the judge cannot read
// them (device memory, or a kernel that refuses process_vm_readv) does the runner copy its outputs
// into the judge's output region (kCopyOut).
// This header is the one place both sides read the values' layout, the outputs of a call
// (to_outputs) and storage overlap.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <vector>

#include "proc.hpp"  // UniqueFd

namespace kopt::bench {

// A shared region, mapped by whoever holds it; it owns its descriptor and its mapping (unmapped
// and closed when it is dropped).
struct SharedRegion {
  UniqueFd fd;
  void* base = nullptr;
  size_t size = 0;
  SharedRegion() = default;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion();
  static SharedRegion* create(const char* name, size_t bytes);  // memfd + mmap (judge)
  bool map(int fd);  // maps an inherited fd (runner) and owns it from then on; false: not mapped, fd not taken
  char* at(size_t offset) const { return static_cast<char*>(base) + offset; }
};
// A block: [table of kTableBytes][tensor data, each 64-byte aligned].
constexpr size_t kTableBytes = 16 * 1024;
constexpr size_t kPage = 4096;
inline size_t page_align(size_t n) { return (n + kPage - 1) & ~(kPage - 1); }

// Bytes a block of these values needs (table included).
size_t block_bytes(const std::vector<c10::IValue>& v);
// Writes a block at `offset` (tensors made contiguous, copied to host); `where`, when given,
// receives each value's data offset in the region (0 for non-tensors). "" or why it does not fit.
std::string encode_block(SharedRegion& r, size_t offset, const std::vector<c10::IValue>& v,
                         std::vector<size_t>* where = nullptr);
// Reads a block back into fresh tensors on `dev` (a copy: later writes to the region do not show).
std::vector<c10::IValue> decode_block(const SharedRegion& r, size_t offset, at::Device dev);
// The runner's view of an input block: on the CPU, tensors over the region's own bytes (no copy:
// an in-place write lands where the judge sees it); elsewhere, copies on `dev`.
std::vector<c10::IValue> wrap_block(SharedRegion& r, size_t offset, at::Device dev);
// Copies device tensors back over the block's bytes (after a call on a GPU: the judge then sees
// the op's effect on its inputs in the region, as on the CPU).
void write_back_block(SharedRegion& r, size_t offset, const std::vector<c10::IValue>& v);

// The tensors an op returned: a Tensor, or a tuple/list of them.
std::vector<at::Tensor> to_outputs(const std::vector<c10::IValue>& stack, const char* who);
// Byte ranges [lo, hi) overlap.
inline bool ranges_overlap(uint64_t lo_a, uint64_t hi_a, uint64_t lo_b, uint64_t hi_b) {
  return lo_a < hi_b && lo_b < hi_a;
}
// Two tensors share storage bytes (the judge's check of the reference's own aliasing).
bool shares_storage(const at::Tensor& a, const at::Tensor& b);

// One output as the runner describes it: where its elements are in its own address space. A claim
// the judge checks: it reads the bytes there itself, and the range must not be an input's or an
// earlier held output's.
struct OutDesc {
  int64_t dtype = 0, ndim = 0;
  int64_t sizes[8] = {0};
  int64_t strides[8] = {0};
  uint64_t ptr = 0;     // address of element 0 (storage offset applied)
  int64_t device = 0;   // 0 CPU, 1 CUDA
  int64_t elem = 0;     // element size in bytes
  uint64_t span() const;  // bytes from ptr covering every element; 0 when empty
};
OutDesc describe_output(const at::Tensor& t);
// Tensors from `bytes` (span() bytes) laid out as `d` says (a contiguous copy); throws on a
// description that does not make sense.
at::Tensor tensor_from_desc(const OutDesc& d, const void* bytes);

// Messages. Judge -> runner: a command; runner -> judge: a reply, then `text_len` bytes (for a call:
// per call of the command, a uint32 count and that many OutDesc).
enum Cmd : uint32_t { kArgs = 'A', kCall = 'C', kNop = 'N', kRecopy = 'R', kEnd = 'X' };
enum ReplyKind : uint32_t { kLoaded = 'L', kOk = 'K', kDone = 'D', kError = 'E' };
enum CmdFlags : uint32_t {
  kCopyOut = 1,  // the runner writes the outputs into the output region (block k at k * out_stride)
  kNoOp = 2,     // a batch that does everything but call the op (the channel's own cost)
};
struct CmdMsg {
  uint32_t cmd = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;          // kArgs, kCall: the input block (call k of a batch: offset + k * stride)
  uint64_t stride = 0;
  uint64_t count = 1;           // kCall: calls back to back (a batch), synchronized once at the end
  uint64_t out_stride = 0;      // kCopyOut
  uint64_t release_before = 0;  // outputs of calls numbered below this are no longer held
};
struct ReplyMsg {
  uint32_t kind = 0;
  uint32_t calls = 0;        // kDone: calls made
  double ms = 0;             // kDone: the runner's own timer over the calls (device time; a claim)
  double kernel_ms = 0;      // kDone: CUPTI kernel time when valid
  int64_t launches = -1, memcpys = 0, streams = 0;
  double off_stream_ms = 0;  // kDone: device busy after the timing stream finished (measured without CUPTI)
  uint32_t stat_flags = 0;   // bit 0 CUPTI stats valid, bit 2 persisting L2 (measured without CUPTI)
  uint32_t text_len = 0;
};

}  // namespace kopt::bench
