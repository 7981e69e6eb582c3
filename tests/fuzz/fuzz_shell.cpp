// Shell command analysis on arbitrary command lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kopt/config.hpp"
#include "kopt/shell.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kopt::ProjectionConfig cfg;
  std::string_view cmd(reinterpret_cast<const char*>(data), size);
  (void)kopt::command_kind(cmd);
  (void)kopt::matches_profile_command(cmd, cfg.profileCommands);
  (void)kopt::wire_command(cmd);
  return 0;
}
