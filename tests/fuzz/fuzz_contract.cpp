// Contract-line parsing and tool-result parsing on arbitrary text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kopt/contract.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto& p : kopt::contract_payloads(text)) {
    kopt::Iteration it;
    kopt::apply_contract_only_fields(it, p.payload);
    kopt::apply_payload_fields(it, p.payload);
    std::string out;
    kopt::write_json(out, it);
  }
  if (auto r = kopt::parse_result_json(text)) {
    kopt::Iteration it;
    kopt::apply_payload_fields(it, *r);
    (void)kopt::js_stringify(*r);
  }
  return 0;
}
