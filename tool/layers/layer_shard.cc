// tlab/tool/layers/layer_shard.cc: see layer_shard.h.
#include "layers/layer_shard.h"

#include <optional>

#include <fmt/format.h>

#include "layers/kill_matrix.h"

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

bool merge_kill_matrices(const std::vector<ReportFile>& files, Report& merged,
                         InputErrors& errors) {
  const std::size_t before = errors.size();
  std::optional<KillMatrix> whole;
  for (const ReportFile& f : files) {
    if (!f.report.kill_matrix) {
      errors.push_back({f.path, "/kill_matrix", "a mutants shard report without its kill matrix"});
      continue;
    }
    std::string pointer, error;
    auto part = KillMatrix::from_json(*f.report.kill_matrix, pointer, error);
    if (!part) {
      errors.push_back({f.path, "/kill_matrix" + pointer,
                        fmt::format("not a kill matrix tlab wrote: {}", error)});
      continue;
    }
    if (!whole) {
      whole = std::move(part);
      continue;
    }
    for (const std::string& twice : whole->absorb(*part)) {
      errors.push_back({f.path, "/kill_matrix/checks",
                        fmt::format("{} is also in another shard: the shards overlap", twice)});
    }
  }
  if (errors.size() != before) return false;
  merged.kill_matrix = whole->to_json();
  return true;
}

}  // namespace tlab::tool
