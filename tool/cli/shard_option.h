// tlab/tool/cli/shard_option.h: `--shard i/n` on run, check, model and mutants,
// shared: the flag, and which shard this process is (the flag, else the
// conventional variables of plan/shard.h, logged on stderr). Cutting the plan to
// that shard and marking the report are plan/shard_plan.h's.
//
// Cost: O(variables). Ground rules: CLI thread only.
#pragma once

#include <optional>
#include <string>

#include "cli/command.h"
#include "plan/shard.h"

namespace CLI {
class App;
}

namespace tlab::tool {

// add_shard_option: adds --shard i/n to `sub`, bound to `flag`.
void add_shard_option(CLI::App& sub, std::string& flag);

// resolve_shard_option: this process's shard: --shard if `sub` was given it, else
// the variables (kShardVariables); `shard` stays empty when neither is set. Says
// on err which source it used, and touches $TEST_SHARD_STATUS_FILE. Returns the exit
// code when it must stop: 2 after naming the bad flag or variable, 3 when the
// status file cannot be created.
std::optional<int> resolve_shard_option(const CLI::App& sub, const std::string& flag,
                                        const CliEnv& env, std::optional<Shard>& shard);

}  // namespace tlab::tool
