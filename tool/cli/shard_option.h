// tlab/tool/cli/shard_option.h: `--shard i/n` on run, check and model, shared:
// the flag, which shard this process is (the flag, else the conventional variables
// of plan/shard.h, logged on stderr), and the plan cut down to that shard with the
// report marked as one shard of the whole plan (report.h ShardRecord), so that
// `tlab merge` can join the shards back.
//
// Cost: O(cases) per plan. Ground rules: CLI thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "plan/shard.h"
#include "report/report.h"

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

// ShardedPlan: one shard's part of a plan (select_shard) and the ids of the whole
// plan, by which record_shard finds each case's plan_index.
struct ShardedPlan {
  Shard shard;
  ShardSelection selection;
  std::vector<std::string> plan_ids;  // every case of the whole plan, in plan order
};

// shard_plan: the shard's part of `plan`, whose elements have case keys `keys`
// (one per element, plan order) and case ids `ids`; `plan` keeps only that part.
template <typename Spec>
ShardedPlan shard_plan(std::vector<Spec>& plan, const std::vector<std::string>& keys,
                       std::vector<std::string> ids, const Shard& shard) {
  ShardedPlan s{shard, select_shard(keys, shard), std::move(ids)};
  std::vector<Spec> part;
  for (std::size_t i : s.selection.indices) part.push_back(std::move(plan[i]));
  plan = std::move(part);
  return s;
}

// scenario_case_key: the key a scenario case is sharded by (plan/shard.h): its id,
// seed, operations and budget; for a `check` mutant case its (scenario, mutant)
// pair instead of its id, so a pair's strategies stay in one shard and stop at the
// first that catches it, as unsharded.
std::string scenario_case_key(const CaseSpec& spec);
// shard_scenario_plan: shard_plan over scenario cases.
ShardedPlan shard_scenario_plan(std::vector<CaseSpec>& specs, const Shard& shard);

// record_shard: marks `report` as shard `s` of its plan: report.shard (with the
// digest of report.scenarios) and each case's plan_index.
void record_shard(Report& report, const ShardedPlan& s);

}  // namespace tlab::tool
