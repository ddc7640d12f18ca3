// tlab/tool/commands/merge.cc: `tlab merge REPORT...`: the shard reports of one
// sharded run (`--shard i/n`, plan/shard.h) joined into the report of the whole
// run (report/merge.h has the rules; a mutants run's kill matrix is joined by
// layers/layer_shard.h), written and printed like any other report through
// finish(): --report, --junit, --json, the table. Exit 2 (naming the file and the
// JSON pointer) when the files are not all the shards of one run, missing shards
// included; otherwise the merged report's own exit code, as `tlab run` or `tlab
// check` of the whole plan would have exited.
#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "layers/layer_shard.h"
#include "report/merge.h"
#include "report/report_read.h"

namespace tlab::tool {

namespace {

struct MergeOptions {
  std::vector<std::string> paths;
  OutputOptions outputs;
};

class MergeCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.description("merge the shard reports of a --shard i/n run into one report");
    sub.add_option("REPORT", o_.paths, "the shards' --report files, one per shard")
        ->type_name("REPORT")
        ->required();
    add_outputs(sub, o_.outputs, /*junit=*/true);
    add_example(sub, "tlab merge shard-*.json --report merged.json --junit merged.xml");
  }

  int run(const CliEnv& env) override {
    InputErrors errors;
    check_outputs(o_.outputs, errors);
    std::vector<ReportFile> files;
    for (const std::string& path : o_.paths) {
      if (auto f = read_report(path, errors)) files.push_back(std::move(*f));
    }
    if (!errors.empty()) return bad_input(errors, env);
    auto merged = merge_reports(files, errors);
    if (!merged) return bad_input(errors, env);
    // A mutants run's kill matrix is its layer's to join (layers/layer_shard.h).
    if (merged->command == "mutants" && !merge_kill_matrices(files, *merged, errors)) {
      return bad_input(errors, env);
    }
    return finish(*merged, o_.outputs, env);
  }

 private:
  MergeOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_merge_command() { return std::make_unique<MergeCommand>(); }

}  // namespace tlab::tool
