// Shell command-line analysis (spec D, E): read-back / echo / run, profiler invocations, wire form.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/json.hpp"

namespace kopt {

enum class CommandKind { Run, ReadBack, Echo };
const char* to_string(CommandKind k);

// D-1..D-5, judged on the full line. An empty line is Run.
CommandKind command_kind(std::string_view command);
inline bool is_read_back_command(std::string_view command) { return command_kind(command) == CommandKind::ReadBack; }

// E-2..E-6: does the line run one of `profilers` with real arguments?
bool matches_profile_command(std::string_view command, const std::vector<std::string>& profilers);

// The Slurm path a command line measures through, for finalize's re-submission (H-7, docs/cluster.md):
// "srun", "salloc" (a segment launched by those wrappers, after assignments and other wrappers), "sbatch"
// (a segment whose program is sbatch), "kopt-bench --slurm" (kopt-bench with a --slurm option); the first
// one found, in segment order; "" when the line does not go through Slurm.
std::string slurm_path(std::string_view command);

// D-8 (DV-10): does the command spell out this contract payload itself? True when the payload text
// occurs in the command, or in it with backslash escaping undone (up to a few nested levels, as
// `bash -c "…"` inside quotes produces), or when a balanced {…} span of those forms parses as JSON
// equal to the payload (same keys and values, any order or spacing). Built once per command.
class CommandSpelling {
 public:
  explicit CommandSpelling(std::string_view command);
  bool spells(std::string_view payload_text, const json& payload);

 private:
  std::vector<std::string> forms_;  // the command, then each further level of unescaping
  std::optional<std::vector<json>> records_;  // records parsed from balanced spans, built lazily
};

// D-7: the full command up to 300 UTF-16 units; longer: first 180 + " … " + last 117, with the length.
struct WireCommand {
  std::string command;
  std::optional<std::size_t> length;  // present only when cut
};
WireCommand wire_command(std::string_view command);

}  // namespace kopt
