// tlab/tool/report/merge.cc: see merge.h.
#include "report/merge.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tlab::tool {

namespace {

// check_same: one "same as the first file" rule of merge.h.
void check_same(const ReportFile& f, const ReportFile& first, const std::string& pointer,
                const std::string& what, const std::string& value, const std::string& expected,
                InputErrors& errors) {
  if (value == expected) return;
  errors.push_back({f.path, pointer,
                    fmt::format("{} is '{}', but '{}' in {}: these reports are not shards of "
                                "one run",
                                what, value, expected, first.path)});
}

// check_alone: the rules of merge.h that one file meets by itself.
bool check_alone(const ReportFile& f, InputErrors& errors) {
  const std::size_t before = errors.size();
  const Report& r = f.report;
  if (!r.shard) {
    errors.push_back({f.path, "/shard",
                      "not a shard report: only reports of runs with --shard i/n (or a sharding "
                      "variable, docs/scale-out.md) merge"});
    return false;
  }
  if (r.interrupted) {
    errors.push_back({f.path, "/interrupted",
                      fmt::format("shard {} was interrupted: run it again", r.shard->index)});
  } else if (!f.complete) {
    errors.push_back({f.path, "/complete",
                      fmt::format("shard {} did not finish (its run was killed): run it again",
                                  r.shard->index)});
  }
  if (r.until_fail) {
    errors.push_back({f.path, "/until_fail",
                      "a --until-fail report is one round of its own shard; shards stop at "
                      "different rounds, so there is no one report to merge into"});
  }
  if (scenario_set_digest(r.scenarios) != r.shard->scenario_digest) {
    errors.push_back({f.path, "/shard/scenario_digest",
                      "does not match the scenarios this report embeds (edited by hand?)"});
  }
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const auto& index = r.cases[i].plan_index;
    if (!index || *index >= r.shard->plan_cases) {
      errors.push_back({f.path, fmt::format("/cases/{}/plan_index", i),
                        fmt::format("a shard's case needs a plan_index below plan_cases ({})",
                                    r.shard->plan_cases)});
    }
  }
  return errors.size() == before;
}

}  // namespace

std::optional<Report> merge_reports(const std::vector<ReportFile>& files, InputErrors& errors) {
  const std::size_t before = errors.size();
  for (const ReportFile& f : files) check_alone(f, errors);
  if (errors.size() != before) return std::nullopt;
  const ReportFile& first = files.front();
  const ShardRecord& s0 = *first.report.shard;
  std::map<std::uint32_t, const ReportFile*> by_index;
  std::map<std::size_t, std::string> plan_slots;  // plan_index -> file holding it
  for (const ReportFile& f : files) {
    const Report& r = f.report;
    const ShardRecord& s = *r.shard;
    check_same(f, first, "/command", "the command", r.command, first.report.command, errors);
    check_same(f, first, "/environment/tlab_version", "the tlab version",
               r.environment.tlab_version, first.report.environment.tlab_version, errors);
    check_same(f, first, "/environment/git_revision", "the git revision",
               r.environment.git_revision, first.report.environment.git_revision, errors);
    check_same(f, first, "/shard/total", "the shard total", std::to_string(s.total),
               std::to_string(s0.total), errors);
    check_same(f, first, "/shard/scenario_digest", "the scenario set's digest", s.scenario_digest,
               s0.scenario_digest, errors);
    check_same(f, first, "/shard/plan_digest", "the plan's digest (cases, seeds, operations)",
               s.plan_digest, s0.plan_digest, errors);
    if (const auto [it, fresh] = by_index.emplace(s.index, &f); !fresh) {
      errors.push_back(
          {f.path, "/shard/index",
           fmt::format("shard {} of {} is also in {}", s.index, s.total, it->second->path)});
      continue;  // its cases are the other file's: one error says it
    }
    // A mutants shard's cases carry their work unit's index: shared by the unit's
    // cases within the file, never across files.
    const bool units = r.command == "mutants";
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      const auto [it, fresh] = plan_slots.emplace(*r.cases[i].plan_index, f.path);
      if (!fresh && !(units && it->second == f.path)) {
        errors.push_back({f.path, fmt::format("/cases/{}/plan_index", i),
                          fmt::format("plan case {} is also in {}", it->first, it->second)});
      }
    }
  }
  if (errors.size() != before) return std::nullopt;
  std::vector<std::uint32_t> missing, have;
  for (std::uint32_t i = 0; i < s0.total; ++i) {
    (by_index.count(i) ? have : missing).push_back(i);
  }
  if (!missing.empty()) {
    errors.push_back(
        {"tlab merge", "",
         fmt::format("missing shard{} {} of {} (given: {}); nothing was written",
                     missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), s0.total,
                     have.empty() ? "none" : fmt::format("{}", fmt::join(have, ", ")))});
    return std::nullopt;
  }
  Report merged;
  merged.command = first.report.command;
  merged.environment = by_index.at(0)->report.environment;
  merged.scenarios = first.report.scenarios;
  for (const ReportFile& f : files) {
    merged.planned += f.report.planned;
    merged.cases.insert(merged.cases.end(), f.report.cases.begin(), f.report.cases.end());
  }
  std::stable_sort(
      merged.cases.begin(), merged.cases.end(),
      [](const CaseRecord& a, const CaseRecord& b) { return *a.plan_index < *b.plan_index; });
  for (CaseRecord& c : merged.cases) c.plan_index.reset();
  merged.merged = MergedRecord{s0.total, s0.plan_cases, s0.plan_digest, s0.scenario_digest};
  return merged;
}

}  // namespace tlab::tool
