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
    (void)kopt::bench::derive_seed(spec.seed, kopt::bench::Stream::Timing, spec.inputs.size());
  } catch (const kopt::bench::SpecError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();  // errors must say what is wrong
  }
  return 0;
}
