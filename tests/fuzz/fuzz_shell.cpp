// Shell command analysis on arbitrary command lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kopt/config.hpp"
#include "kopt/contract.hpp"
#include "kopt/shell.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kopt::ProjectionConfig cfg;
  std::string_view cmd(reinterpret_cast<const char*>(data), size);
  (void)kopt::command_kind(cmd);
  (void)kopt::matches_profile_command(cmd, cfg.profileCommands);
  (void)kopt::wire_command(cmd);
  kopt::CommandSpelling spelling(cmd);  // D-8 on the command's own contract lines, and on a fixed one
  for (const auto& cp : kopt::contract_payloads(cmd)) (void)spelling.spells(cp.text, cp.payload);
  (void)spelling.spells("{\"correct\":true}", kopt::json{{"correct", true}});
  return 0;
}
