// tlab/tool/commands/compare.h: the `tlab compare` command.
//
//   tlab compare [SCENARIO] [--workload W|all ...] [--strategies S,...|all] [--peers]
//                [--pending N,...] [--cell-ms MS] [--samples N] [--threads N]
//                [--slack-1ns] [--report F] [--html F] [--json]
//
// Without SCENARIO it measures the workloads of compare/subject.h (default: all)
// on the chosen strategies (default: all) and, with --peers, on libuv, libevent,
// asio and a java.util.Timer-style heap, against the OS-limit baselines of
// compare/baselines.h, all in this one process (compare/run.h). With SCENARIO it
// runs that scenario once per strategy through the stress runner (one case per
// strategy, latency percentiles side by side, as before), and the workloads too
// only if --workload is given. Outputs: the table on stdout (or the JSON report
// with --json), the JSON report (--report; "compare" section in
// tool/report/report_schema.json) and a self-contained HTML page with inline SVG charts
// (--html; compare/html.h).
//
// Defaults are chosen so that `tlab compare --peers --html out.html` measures
// every strategy and peer in one process in well under 2 minutes on 2 cores:
// pending 1K, 100K, 1M; 40 ms of CPU per cell; 1000 latency samples. Sizes up to
// 10M are accepted (--pending 1000,10000000).
//
// Exit codes (cli.h): 0 measured (the bars are reported, never enforced); 1 a
// scenario case failed; 2 a bad option (CLI11 names the flag) or bad SCENARIO or
// output path; 3 an internal error (for example a peer library failing to start).
//
// Ground rules: add_compare_command is called once while cli.cc builds its App;
// the returned object owns the option storage and must outlive parsing.
#pragma once

#include <memory>
#include <string>

#include "cli/cli.h"
#include "report/report.h"

namespace CLI {
class App;
}

namespace tlab::tool {

// compare_table: the scenario mode's aligned text table (one row per strategy x
// latency histogram).
std::string compare_table(const Report& report);
// compare_html: the scenario mode's standalone HTML page.
std::string compare_html(const Report& report);

class CompareCommand {
 public:
  virtual ~CompareCommand() = default;
  // CompareCommand::selected: whether `compare` was the parsed subcommand.
  virtual bool selected() const = 0;
  // CompareCommand::run: runs the parsed command; returns the exit code.
  virtual int run(const CliEnv& env) = 0;
};

// add_compare_command: registers the `compare` subcommand and its options on `app`.
std::unique_ptr<CompareCommand> add_compare_command(CLI::App& app);

}  // namespace tlab::tool
