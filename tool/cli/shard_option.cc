// tlab/tool/cli/shard_option.cc: see shard_option.h.
#include "cli/shard_option.h"

#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace tlab::tool {

void add_shard_option(CLI::App& sub, std::string& flag) {
  sub.add_option("--shard", flag,
                 "run only shard i of n (0-based; e.g. 0/3, 1/3, 2/3) and mark the report so "
                 "`tlab merge` joins the shards; without it, the variables of Bazel, GoogleTest, "
                 "Kubernetes, GitLab or Slurm are read (docs/scale-out.md)")
      ->type_name("i/n");
}

std::optional<int> resolve_shard_option(const CLI::App& sub, const std::string& flag,
                                        const CliEnv& env, std::optional<Shard>& shard) {
  InputErrors errors;
  std::optional<std::string> given;
  if (sub.count("--shard") > 0) given = flag;
  shard = resolve_shard(given, &process_env, errors);
  if (!errors.empty()) {
    // Not bad_input (cli/common.h, which includes this file): a variable or the
    // flag has one or two errors, never a file's worth.
    for (const InputError& e : errors) *env.err << e.str() << "\n";
    return kExitBadInput;
  }
  if (!shard) return std::nullopt;
  *env.err << fmt::format("tlab: shard {} of {} (0-based), from {}\n", shard->index, shard->total,
                          shard->source);
  if (const std::string e = touch_shard_status_file(&process_env); !e.empty()) {
    *env.err << "tlab: " << e << "\n";
    return kExitInternal;
  }
  return std::nullopt;
}

}  // namespace tlab::tool
