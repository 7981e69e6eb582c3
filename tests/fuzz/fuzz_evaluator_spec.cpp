// kopt-bench's JSON input-spec parser (evaluator/src/spec.cpp, torch-free) on arbitrary text:
// a bad spec must end in SpecError with a message, never in a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    auto spec = kopt::bench::parse_spec(j, "/nonexistent-fuzz-base");
    for (const auto& in : spec.inputs) (void)kopt::bench::is_known_dtype(in.dtype);
    (void)kopt::bench::any_input_varies(spec);
    // A pinned seed's schedule (the keyed hash) is a pure function of seed, stream and index.
    auto a = kopt::bench::SeedSchedule::pinned(spec.seed, "fuzz-key");
    auto b = kopt::bench::SeedSchedule::pinned(spec.seed, "fuzz-key");
    if (a(kopt::bench::Stream::Timing, spec.inputs.size()) != b(kopt::bench::Stream::Timing, spec.inputs.size()))
      __builtin_trap();
  } catch (const kopt::bench::SpecError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();  // errors must say what is wrong
  }
  return 0;
}
