// tlab/tool/cli/cli.h: the `tlab` command line (CLI11).
//
//   tlab run      [PATHS] [--strategy S|all] [--mutant M] [--seed N] [--budget D]
//                 [--operations N] [--report F] [--junit F] [--json]
//   tlab check    [PATHS] [--models] [--report F] [--junit F] [--json]
//   tlab list     [strategies|scenarios|mutants|faults] [--json]
//   tlab validate FILES...
//   tlab replay   REPORT [--case ID] [--report F] [--json]
//   tlab compare  SCENARIO [--strategies S,...] [--peers] [--report F] [--html F]
//   tlab model    [NAME...] [--test T] [--scheduler random|bound|full] [--iterations N]
//                 [--context-bound N] [--mutant M | --clean] [--timeout D] [--jobs N]
//                 [--models-dir DIR] [--history-dir DIR] [--report F] [--junit F] [--json]
//   tlab mutants  [--layers scenario,model,property,tsan] [--iterations N] [--jobs N]
//                 [--models-dir DIR] [--property-bin F] [--tsan-tlab F] [--report F] [--json]
//   --help on every command; --version on every command.
//
// Exit codes (kExit*): 0 every expectation held; 1 a violation (or a surviving
// mutant in check, or a mutant no layer catches in mutants / check --models); 2 bad input or usage,
// including every CLI11 parse error (the message names the flag); 3 internal error or watchdog
// timeout (also "runner not built yet"); 130 interrupted by Ctrl-C (partial report written).
//
// Order of checks for run/check/replay/compare: options, then every input file
// (all errors listed, `file: /json/pointer: message`), then output paths, then the
// runner. So bad input is reported as 2 even in a build without a runner.
//
// Ground rules: run_cli is called once per process from main (or from tests, with
// their own streams and runner factory); it installs no signal handlers itself.
#pragma once

#include <iosfwd>

#include "runner/runner.h"

namespace tlab::tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitViolation = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitInterrupted = 130;

struct CliEnv {
  std::ostream* out;           // the table, JSON, listings
  std::ostream* err;           // errors and diagnostics
  RunnerFactory make_runner;   // may return nullptr: no runner in this build
  bool stdout_is_tty = false;  // colour decisions (use_color(1) in main)
  bool stderr_is_tty = false;  // progress decisions
};

// run_cli: parses argv and runs the command. Returns the process exit code.
int run_cli(int argc, const char* const* argv, const CliEnv& env);

}  // namespace tlab::tool
