// tlab/tool/layers/layer_shard.h: `tlab mutants --shard i/n`: which of the kill
// matrix's work units this shard runs, the shard report's marks, and the shards'
// matrices joined back by `tlab merge`.
//
// A unit is one record of the matrix (kill_matrix.h): everything that adds up to one
// (layer, check, mutant), so that a record is built in one shard only and the
// merged matrix is the union of the shards' (KillMatrix::absorb). Per layer:
// clang-format off
//   | layer    | unit                                   | id (cases' plan_index)        | key hashed (plan/shard.h)       |
//   |----------|----------------------------------------|-------------------------------|---------------------------------|
//   | scenario | a (scenario, mutant) pair, all its     | scenario|<scenario>:<mutant>  | scenario| + scenario_case_key   |
//   |          | strategies and --trials                |                               |   (pair, seed, ops, budget)     |
//   | sim      | a (scenario, mutant) pair, all its     | sim|<scenario>:<mutant>       | sim| + scenario_case_key         |
//   |          | strategies, --sim-trials and schedules |                               |                                 |
//   | model    | one Relacy run (model, test, mutant)   | model|<case id>               | id + |iterations=N              |
//   | tsan     | a scenario's tsan_catches mutant       | tsan|<scenario>:<mutant>      | the id                          |
//   | property | the whole layer: one binary run whose  | property                      | none: shard 0 runs it           |
//   |          | tests cannot be split by mutant        |                               |                                 |
// clang-format on
// A pair's strategies stay together because the matrix counts a pair caught when any
// of them catches it (and the sim search stops at the first). Every shard meets
// every unit of the layers it runs, in the same order, so keys and their digest (the
// report's plan_digest) are the whole plan's in each shard; a shard whose layer is
// unavailable (no model binaries) meets fewer, its digest differs, and merge refuses.
//
// The gate is not applied per shard: a mutant caught only by another shard's unit
// would fail every shard that does not hold it. A shard's exit code is 0 unless a
// layer errs (3) or it was interrupted (130); `tlab merge` evaluates the gate on
// the joined matrix and exits as the unsharded `tlab mutants` would (report.h,
// Report::exit_code).
//
// `tlab merge` joins the cases as for any command (report/merge.h), then the kill
// matrices here (merge_kill_matrices): the shards' records joined
// (KillMatrix::absorb), the cells, counts and gate computed on the whole, equal to
// the unsharded matrix but for the layers' seconds. It refuses, naming the file and
// the JSON pointer (exit 2):
//   | rule                                         | pointer                         |
//   |----------------------------------------------|---------------------------------|
//   | every shard report has its kill matrix       | /kill_matrix                    |
//   | the matrix is one tlab wrote (KillMatrix::   | /kill_matrix + from_json's      |
//   |   from_json: known layers and mutants)       |   pointer                       |
//   | no record is in two shards                   | /kill_matrix/checks             |
//
// Cost: O(log units) per take. Ground rules: CLI thread only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/json_input.h"
#include "plan/shard.h"
#include "report/report.h"
#include "report/report_read.h"

namespace tlab::tool {

class LayerShard {
 public:
  explicit LayerShard(Shard shard) : shard_(std::move(shard)) {}

  // LayerShard::take: meets unit `id`, hashed by `key`; whether this shard runs it.
  // A unit met again (another strategy of the pair) is not counted twice.
  bool take(const std::string& key, const std::string& id);
  // LayerShard::take_whole: a layer that cannot be split, as one unit run by shard 0.
  bool take_whole(const std::string& id);
  // LayerShard::index: this shard's number (0-based).
  std::uint32_t index() const { return shard_.index; }
  std::uint32_t total() const { return shard_.total; }

  // LayerShard::record: marks `report` (whose scenarios are set) as this shard of
  // the plan met: report.shard, and each case's plan_index = its unit's (unit_of).
  void record(Report& report) const;

  // unit_of: the id of the unit a case belongs to (the table above).
  static std::string unit_of(const CaseRecord& c);

 private:
  Shard shard_;
  std::vector<std::string> keys_;             // every unit met, in order
  std::map<std::string, std::size_t> units_;  // id -> position in keys_
};

// merge_kill_matrices: the kill matrices of `files`, the shard reports of one
// `tlab mutants` run that merge_reports (report/merge.h) merged into `merged`,
// joined into merged.kill_matrix; false with errors per the table above.
bool merge_kill_matrices(const std::vector<ReportFile>& files, Report& merged, InputErrors& errors);

}  // namespace tlab::tool
