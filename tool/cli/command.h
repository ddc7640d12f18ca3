// tlab/tool/cli/command.h: one `tlab` command, the seam between the dispatcher
// (cli.cc) and the commands (tool/commands/<name>.cc, one file each).
//
// Lifecycle, all on the CLI thread, once per process:
//   | 1 | cli.cc makes every command of kCommands (command_table.cc)            |
//   | 2 | Command::setup on a subcommand cli.cc named from the table            |
//   | 3 | one CLI11 parse of argv; a parse error exits 2 before any run         |
//   | 4 | Command::run on the one parsed command; its return is the exit code   |
//
// To add a command: write tool/commands/<name>.cc with a Command and its
// make_<name>_command(), and add its line to kCommands. Plumbing two commands
// share (outputs, validators, finish) is in cli/common.h.
//
// Exit codes (kExit*): 0 every expectation held; 1 a violation (or a surviving
// mutant in check, or a mutant no layer catches in mutants / check --models); 2 bad
// input or usage, including every CLI11 parse error (the message names the flag);
// 3 internal error, watchdog timeout or an output file that cannot be written (also
// "runner not built yet"); 4 `tlab replay` did not reproduce the recorded verdict (a
// replay, or one of its --repeat trials, ran to a different verdict; a reproduced
// verdict exits with its own code instead: 1 for a reproduced failure); 130
// interrupted by Ctrl-C (partial report written).
#pragma once

#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>

#include "runner/runner.h"

namespace CLI {
class App;
}

namespace tlab::tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitViolation = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitNotReproduced = 4;  // replay only (commands/replay.cc)
inline constexpr int kExitInterrupted = 130;

// CliEnv: what a command sees of its process.
struct CliEnv {
  std::ostream* out;           // the table, JSON, listings
  std::ostream* err;           // errors and diagnostics
  RunnerFactory make_runner;   // may return nullptr: no runner in this build
  bool stdout_is_tty = false;  // colour decisions (use_color(1) in main)
  bool stderr_is_tty = false;  // progress decisions
};

class Command {
 public:
  virtual ~Command() = default;
  // Command::setup: gives `sub` (named by cli.cc from kCommands) its description,
  // options and a footer ending in an "Example:" line. Options bind to storage
  // in *this, which outlives the parse.
  virtual void setup(CLI::App& sub) = 0;
  // Command::run: runs the parsed command. Returns the exit code (kExit*).
  virtual int run(const CliEnv& env) = 0;
};

struct CommandEntry {
  std::string_view name;  // the subcommand: `tlab <name>`
  std::unique_ptr<Command> (*make)();
};

// kCommands: every command, in the order `tlab --help` lists them.
extern const std::span<const CommandEntry> kCommands;

}  // namespace tlab::tool
