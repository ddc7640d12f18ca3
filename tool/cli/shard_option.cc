// tlab/tool/cli/shard_option.cc: see shard_option.h.
#include "cli/shard_option.h"

#include <map>
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

}  // namespace tlab::tool
