// Session log reading (JSON array, JSONL, zstd frames) from arbitrary bytes, then projection.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/projector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::FILE* f = fmemopen(const_cast<std::uint8_t*>(data), size, "rb");
  if (!f) return 0;
  kopt::Projector p;
  kopt::LogReadStats st;
  kopt::read_log_stream(f, "fuzz", [&](const kopt::json& ev) { p.feed_event(ev); }, st);
  std::fclose(f);
  (void)p.series_json("fuzz", 0);
  (void)kopt::derived_json(p.series(), p.has_user_task(), kopt::json::object());
  return 0;
}
