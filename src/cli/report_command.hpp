// `kopt report` (src/cli/report_command.cpp).
#pragma once
#include <string>
#include <vector>

namespace kopt {

// kopt report LOG [-o OUT.html] [--csv OUT.csv] [--json OUT.json] [--lang zh|en] [--budget N]
//   [--config CONFIG.json]. Without any output option the HTML goes to stdout.
// Returns the exit code (2: usage, 1: cannot read or write).
int report_command(const std::vector<std::string>& args);

}  // namespace kopt
