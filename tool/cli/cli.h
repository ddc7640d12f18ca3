// tlab/tool/cli/cli.h: the `tlab` command line (CLI11): the dispatcher over the
// commands of command.h.
//
//   tlab run      [PATHS] [--strategy S|all] [--mutant M] [--seed N] [--budget D]
//                 [--operations N] [--report F] [--junit F] [--json]
//   tlab check    [PATHS] [--models] [--report F] [--junit F] [--json]
//   tlab list     [strategies|scenarios|mutants|faults] [--json]
//   tlab validate FILES...
//   tlab replay   REPORT [--case ID] [--report F] [--json]
//   tlab compare  [SCENARIO] [--workload W,...] [--strategies S,...] [--peers] [--report F]
//                 [--html F] [--json]                  (more: tool/commands/compare.cc)
//   tlab model    [NAME...] [--test T] [--scheduler random|bound|full] [--iterations N]
//                 [--context-bound N] [--mutant M | --clean] [--timeout D] [--jobs N]
//                 [--models-dir DIR] [--history-dir DIR] [--report F] [--junit F] [--json]
//   tlab mutants  [--layers scenario,model,property,tsan] [--iterations N] [--jobs N]
//                 [--models-dir DIR] [--property-bin F] [--tsan-tlab F] [--report F] [--json]
//   --help on every command; --version on every command.
//
// Exit codes: command.h (kExit*).
//
// Order of checks for run/check/replay/compare: options, then every input file
// (all errors listed, `file: /json/pointer: message`), then output paths, then the
// runner. So bad input is reported as 2 even in a build without a runner.
//
// Ground rules: run_cli is called once per process from main (or from tests, with
// their own streams and runner factory); it installs no signal handlers itself.
#pragma once

#include "cli/command.h"

namespace tlab::tool {

// run_cli: registers every command of kCommands, parses argv and runs the parsed
// command. Returns the process exit code.
int run_cli(int argc, const char* const* argv, const CliEnv& env);

}  // namespace tlab::tool
