// tlab/tool/plan/shard_plan.cc: see shard_plan.h.
#include "plan/shard_plan.h"

#include <map>

#include <fmt/format.h>

#include "base/digest.h"

namespace tlab::tool {

std::string scenario_case_key(const CaseSpec& spec) {
  const std::string name = spec.scenario ? spec.scenario->name : std::string();
  const std::string unit =
      spec.expect_fail && spec.mutant ? fmt::format("{}:{}", name, name_of(*spec.mutant)) : spec.id;
  return fmt::format("{}|seed={}|operations={}|budget_s={}", unit, spec.seed, spec.operations,
                     spec.budget_s);
}

ShardedPlan shard_scenario_plan(std::vector<CaseSpec>& specs, const Shard& shard) {
  std::vector<std::string> keys, ids;
  for (const CaseSpec& spec : specs) {
    keys.push_back(scenario_case_key(spec));
    ids.push_back(spec.id);
  }
  return shard_plan(specs, keys, std::move(ids), shard);
}

void record_shard(Report& report, const ShardedPlan& s) {
  report.shard = ShardRecord{s.shard.index,
                             s.shard.total,
                             s.selection.plan_cases,
                             s.selection.plan_digest,
                             scenario_set_digest(report.scenarios),
                             s.shard.source};
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < s.plan_ids.size(); ++i) position.emplace(s.plan_ids[i], i);
  for (CaseRecord& c : report.cases) {
    if (auto it = position.find(c.id); it != position.end()) c.plan_index = it->second;
  }
}

std::optional<std::size_t> extend_sharded_plan(Report& report, const std::string& key) {
  ShardRecord& r = *report.shard;
  const std::size_t index = r.plan_cases++;
  r.plan_digest = digest_hex(r.plan_digest + "\n" + key);
  if (!in_shard(key, Shard{r.index, r.total, r.source})) return std::nullopt;
  return index;
}

}  // namespace tlab::tool
