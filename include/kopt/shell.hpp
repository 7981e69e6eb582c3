// Shell command-line analysis (spec D, E): read-back / echo / run, profiler invocations, wire form.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt {

enum class CommandKind { Run, ReadBack, Echo };
const char* to_string(CommandKind k);

// D-1..D-5, judged on the full line. An empty line is Run.
CommandKind command_kind(std::string_view command);
inline bool is_read_back_command(std::string_view command) { return command_kind(command) == CommandKind::ReadBack; }

// E-2..E-6: does the line run one of `profilers` with real arguments?
bool matches_profile_command(std::string_view command, const std::vector<std::string>& profilers);

// D-7: the full command up to 300 UTF-16 units; longer: first 180 + " … " + last 117, with the length.
struct WireCommand {
  std::string command;
  std::optional<std::size_t> length;  // present only when cut
};
WireCommand wire_command(std::string_view command);

}  // namespace kopt
