// tlab/tool/plan/shard_plan.h: one shard's part of a plan, and its report marked
// as that part of the whole, so that `tlab merge` can join the shards back.
//
// Which shard this process is comes from plan/shard.h (the flag or the variables;
// cli/shard_option.h reads them for a command). Given it, a command cuts its plan
// (shard_plan, or shard_scenario_plan for scenario cases) before running it, and
// marks the report (record_shard: report.h ShardRecord, each case's plan_index in
// the whole plan). A scenario case is hashed by its key (scenario_case_key):
//
//   | case                    | key                                                      |
//   |-------------------------|----------------------------------------------------------|
//   | a run or check case     | its id, seed, operations and budget                      |
//   | a check mutant case     | its (scenario, mutant) pair, seed, operations and budget |
//
// so a mutant pair's strategies stay in one shard and its detection search stops
// at the first that catches it, as unsharded. The kill matrix's layers hash their
// own units (layers/layer_shard.h), some of them by scenario_case_key.
//
// Cost: O(cases) per plan. Ground rules: CLI thread only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "plan/shard.h"
#include "report/report.h"
#include "runner/runner.h"

namespace tlab::tool {

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

// scenario_case_key: the key a scenario case is sharded by (the table above).
std::string scenario_case_key(const CaseSpec& spec);
// shard_scenario_plan: shard_plan over scenario cases.
ShardedPlan shard_scenario_plan(std::vector<CaseSpec>& specs, const Shard& shard);

// record_shard: marks `report` as shard `s` of its plan: report.shard (with the
// digest of report.scenarios) and each case's plan_index.
void record_shard(Report& report, const ShardedPlan& s);

// extend_sharded_plan: one more case, keyed `key`, joins a sharded report's plan
// after its scenario cases (check --subject's property layer): in every shard the
// record's plan grows by one case (plan_cases, and plan_digest then covers `key`,
// so shards that disagree on it do not merge), and the case belongs to the shard
// that in_shard(key) names, as a scenario case does. Returns the case's
// plan_index when this shard runs it, else nullopt. Requires: report.shard.
std::optional<std::size_t> extend_sharded_plan(Report& report, const std::string& key);

}  // namespace tlab::tool
