// tlab/tool/layers/layer_shard.cc: see layer_shard.h.
#include "layers/layer_shard.h"

#include <fmt/format.h>

namespace tlab::tool {

bool LayerShard::take(const std::string& key, const std::string& id) {
  if (units_.try_emplace(id, keys_.size()).second) keys_.push_back(key);
  return in_shard(keys_[units_.at(id)], shard_);
}

bool LayerShard::take_whole(const std::string& id) {
  if (units_.try_emplace(id, keys_.size()).second) keys_.push_back(id);
  return shard_.index == 0;
}

std::string LayerShard::unit_of(const CaseRecord& c) {
  if (c.model) return "model|" + c.id;
  return fmt::format("{}|{}:{}", c.sim ? "sim" : "scenario", c.scenario, c.mutant.value_or(""));
}

void LayerShard::record(Report& report) const {
  const ShardSelection whole = select_shard(keys_, shard_);
  report.shard = ShardRecord{shard_.index,      shard_.total,
                             keys_.size(),      whole.plan_digest,
                             scenario_set_digest(report.scenarios), shard_.source};
  for (CaseRecord& c : report.cases) {
    if (const auto it = units_.find(unit_of(c)); it != units_.end()) c.plan_index = it->second;
  }
}

}  // namespace tlab::tool
