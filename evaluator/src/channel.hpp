// The channel between the judge and a runner process (the candidate's, or the reference's timing
// process): values travel through two memfd regions the judge creates (inputs judge -> runner,
// outputs runner -> judge) and small fixed-size messages on two pipes. The judge reads outputs
// out of the region the moment the "done" message arrives, so an output is what the memory held
// when the call returned.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kopt::bench {

// A shared region: [table of kTableBytes][tensor data]. Owned (mapped) by whoever holds it.
struct SharedRegion {
  int fd = -1;
  void* base = nullptr;
  size_t size = 0;
  SharedRegion() = default;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion();
  static SharedRegion* create(const char* name, size_t bytes);  // memfd + mmap (judge)
  bool map(int fd);                                             // map an inherited fd (runner)
};
constexpr size_t kTableBytes = 64 * 1024;

// Bytes a set of values needs in a region (table included).
size_t region_bytes(const std::vector<c10::IValue>& v);
// Writes values (tensors made contiguous, copied to host). Returns "" or why it does not fit.
std::string encode_values(SharedRegion& r, const std::vector<c10::IValue>& v);
// Reads them back into fresh tensors on `dev` (a copy: later writes to the region do not show).
// `devices`, when given, receives the device type each tensor had on the writing side (CPU for
// values that are not tensors): the copies themselves are made on `dev`.
std::vector<c10::IValue> decode_values(const SharedRegion& r, at::Device dev,
                                       std::vector<c10::DeviceType>* devices = nullptr);

// Messages. Judge -> runner: a command; runner -> judge: a reply, then `text_len` bytes of text.
enum Cmd : uint32_t { kArgs = 'A', kPrepare = 'P', kCall = 'C', kInspect = 'I', kMutate = 'M', kEnd = 'X' };
enum ReplyKind : uint32_t { kLoaded = 'L', kOk = 'K', kDone = 'D', kError = 'E' };
struct CmdMsg {
  uint32_t cmd = 0;
  uint32_t flags = 0;
};
struct ReplyMsg {
  uint32_t kind = 0;
  uint32_t flags = 0;       // kInspect: bit 0 inputs modified (bit 8+i: input i), bit 1 output reuses an earlier output
  uint64_t alias_mask = 0;  // kInspect: per output i, bit (i*8 + j) = output i overlaps input j (j < 8)
  double ms = 0;            // kDone: the runner's own timer (device time on GPU)
  double kernel_ms = 0;     // kDone: CUPTI kernel time when valid
  int64_t launches = -1, memcpys = 0, streams = 0;
  double off_stream_ms = 0; // kDone: device busy after the timing stream finished (measured without CUPTI)
  uint32_t stat_flags = 0;  // bit 0 CUPTI stats valid, bit 2 persisting L2 (measured without CUPTI)
  uint32_t text_len = 0;
};

}  // namespace kopt::bench
