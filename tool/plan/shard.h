// tlab/tool/plan/shard.h: splitting one command's plan across n machines, and
// which shard this process is.
//
// A shard is (index, total), 0-based: `--shard i/n`, or with no flag the variables
// that the distribution engine already sets, read in this order (kShardVariables,
// the one catalogue of them; the first row whose index variable is set wins, and
// tlab says on stderr which one it used):
//
// clang-format off
//   | system               | index variable       | total variable         | base                     |
//   |----------------------|----------------------|------------------------|--------------------------|
//   | Bazel                | TEST_SHARD_INDEX     | TEST_TOTAL_SHARDS      | 0                        |
//   | GoogleTest           | GTEST_SHARD_INDEX    | GTEST_TOTAL_SHARDS     | 0                        |
//   | Kubernetes Indexed Job| JOB_COMPLETION_INDEX| TLAB_TOTAL_SHARDS      | 0                        |
//   | GitLab CI parallel   | CI_NODE_INDEX        | CI_NODE_TOTAL          | 1                        |
//   | Slurm job array      | SLURM_ARRAY_TASK_ID  | SLURM_ARRAY_TASK_COUNT | SLURM_ARRAY_TASK_MIN (0),|
//   |                      |                      |                        | step SLURM_ARRAY_TASK_STEP (1) |
// clang-format on
//
// Kubernetes sets only the index; its total is the Job's `completions`, which the
// manifest passes as TLAB_TOTAL_SHARDS (or writes `--shard $(JOB_COMPLETION_INDEX)/N`).
// Slurm numbers tasks as `--array` says: --array=1-3 runs ids 1, 2, 3 with MIN=1,
// so the shard is (id - MIN) / STEP. A list that is not an arithmetic range
// (--array=1,2,7) gives an index past COUNT and is refused.
// Bad values (not a number, index >= total, total 0, an index with no total) are
// bad input naming the flag or the variable (exit 2). When TEST_SHARD_STATUS_FILE
// is set, tlab touches it: Bazel's sign that the test understood sharding.
//
// The partition: a case belongs to shard fnv1a64(key) mod total, where the key is
// the case's canonical id (a scenario case's: plan/shard_plan.h scenario_case_key).
// FNV-1a 64 (base/digest.h) over the key's bytes is the same on every build and
// platform, so every shard of one plan agrees, and each case is in exactly one
// shard. The hash spreads cases evenly only on average: a shard may be empty
// (7 shards of 10 cases), and an empty shard is a valid, passing shard.
//
// Cost: resolve O(rows); partition O(cases x key length). Ground rules: CLI thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/digest.h"
#include "base/json_input.h"

namespace tlab::tool {

// Shard: this process's part of a sharded plan.
struct Shard {
  std::uint32_t index = 0;  // 0-based, < total
  std::uint32_t total = 1;
  std::string source;  // "--shard" or the variables used, for the log and the report
};

// ShardVariables: one row of the catalogue in the table above.
struct ShardVariables {
  std::string_view system;
  std::string_view index_var;
  std::string_view total_var;
  std::uint32_t base;  // what the first shard's index variable reads
  // Slurm only: variables giving the first id and the step (unset: 0 and 1).
  std::string_view min_var = {};
  std::string_view step_var = {};
};

// kShardVariables: the catalogue, in the order they are read.
extern const std::vector<ShardVariables> kShardVariables;

// kMaxShards: a bound on n that no real matrix reaches (GitHub caps a matrix at
// 256 jobs, Slurm's default MaxArraySize is 1001), so a typo like 10/1000000 is
// refused rather than planned.
inline constexpr std::uint32_t kMaxShards = 100000;

// GetEnv: how the variables are read (tests pass a map).
using GetEnv = std::function<std::optional<std::string>(std::string_view)>;
// process_env: ::getenv.
std::optional<std::string> process_env(std::string_view name);

// parse_shard_flag: "i/n" -> Shard{i, n, "--shard"}; nullopt and an error naming
// --shard on bad syntax or i >= n.
std::optional<Shard> parse_shard_flag(const std::string& text, InputErrors& errors);

// resolve_shard: the shard of this process: `flag` if given, else the first row of
// kShardVariables whose index (or total) variable is set; nullopt when none is
// (the whole plan). Appends an error naming the variable on a bad value.
std::optional<Shard> resolve_shard(const std::optional<std::string>& flag, const GetEnv& env,
                                   InputErrors& errors);

// touch_shard_status_file: creates $TEST_SHARD_STATUS_FILE when it is set (Bazel's
// TEST_SHARD_STATUS_FILE protocol). Returns an error message on failure, else "".
std::string touch_shard_status_file(const GetEnv& env);

// in_shard: whether the case with canonical id `key` belongs to `shard`.
bool in_shard(std::string_view key, const Shard& shard);

// ShardSelection: the part of a plan one shard runs.
struct ShardSelection {
  std::vector<std::size_t> indices;  // positions in the whole plan, ascending
  std::size_t plan_cases = 0;        // cases in the whole (unsharded) plan
  std::string plan_digest;           // digest_hex of every key of the whole plan, in order
};
// select_shard: the positions of `keys` (one per planned case, in plan order) that
// belong to `shard`. Ensures: over shards 0..total-1 the selections partition
// 0..keys.size()-1.
ShardSelection select_shard(const std::vector<std::string>& keys, const Shard& shard);

}  // namespace tlab::tool
