// Unit tests of plan/shard.h: the partition (and base/digest.h, the hash it rests
// on), the --shard flag and the catalogue of sharding variables (each system's
// variables set as that system sets them).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <fmt/format.h>

#include "base/digest.h"
#include "plan/shard.h"

namespace tlab::tool {
namespace {

using Vars = std::map<std::string, std::string>;

GetEnv env_of(const Vars& vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::optional<Shard> from_env(const Vars& vars, InputErrors& errors) {
  return resolve_shard(std::nullopt, env_of(vars), errors);
}

std::string all_messages(const InputErrors& errors) {
  std::string s;
  for (const InputError& e : errors) s += e.str() + "\n";
  return s;
}

// FNV-1a 64 gives the published test vectors, so the partition is the same on
// every build and platform.
TEST(Shard, Fnv1a64MatchesThePublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(digest_hex("a"), "af63dc4c8601ec8c");
}

// For every n from 1 to 9, each of 500 case keys is selected by exactly one of the
// n shards, and every shard sees the same plan digest.
TEST(Shard, EveryCaseIsInExactlyOneShard) {
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i)
    keys.push_back(fmt::format("scenario{}/strategy{}|seed={}", i % 7, i, i));
  for (std::uint32_t n = 1; n <= 9; ++n) {
    std::vector<int> owners(keys.size(), 0);
    std::string digest;
    for (std::uint32_t i = 0; i < n; ++i) {
      const ShardSelection s = select_shard(keys, Shard{i, n, "test"});
      EXPECT_EQ(s.plan_cases, keys.size());
      if (i == 0) digest = s.plan_digest;
      EXPECT_EQ(s.plan_digest, digest);
      for (std::size_t k : s.indices) ++owners[k];
      EXPECT_TRUE(std::is_sorted(s.indices.begin(), s.indices.end()));
    }
    for (std::size_t k = 0; k < keys.size(); ++k) {
      EXPECT_EQ(owners[k], 1) << "n=" << n << " key " << keys[k];
    }
  }
}

// --shard i/n is 0-based; anything else names the flag.
TEST(Shard, FlagIsZeroBasedIOverN) {
  InputErrors errors;
  auto s = parse_shard_flag("2/3", errors);
  ASSERT_TRUE(s) << all_messages(errors);
  EXPECT_EQ(s->index, 2u);
  EXPECT_EQ(s->total, 3u);
  for (const char* bad : {"3/3", "1/0", "-1/3", "1", "a/b", "1/3x", "", "0/100001"}) {
    InputErrors e;
    EXPECT_FALSE(parse_shard_flag(bad, e)) << bad;
    ASSERT_EQ(e.size(), 1u) << bad;
    EXPECT_EQ(e[0].file, "--shard");
  }
}

// Each system's variables, as that system sets them for its second worker, give
// shard 1 of 3, and the source names the variables used.
TEST(Shard, EachSystemsVariablesGiveItsShard) {
  const std::vector<std::pair<Vars, std::string>> systems{
      {{{"TEST_SHARD_INDEX", "1"}, {"TEST_TOTAL_SHARDS", "3"}}, "TEST_SHARD_INDEX"},
      {{{"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "3"}}, "GTEST_SHARD_INDEX"},
      {{{"JOB_COMPLETION_INDEX", "1"}, {"TLAB_TOTAL_SHARDS", "3"}}, "JOB_COMPLETION_INDEX"},
      {{{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX"},  // 1-based
      // sbatch --array=1-3: ids 1..3, MIN 1.
      {{{"SLURM_ARRAY_TASK_ID", "2"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_MAX", "3"},
        {"SLURM_ARRAY_TASK_STEP", "1"}},
       "SLURM_ARRAY_TASK_ID"},
      // sbatch --array=10-14:2: ids 10, 12, 14.
      {{{"SLURM_ARRAY_TASK_ID", "12"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "10"},
        {"SLURM_ARRAY_TASK_STEP", "2"}},
       "SLURM_ARRAY_TASK_ID"},
  };
  for (const auto& [vars, var] : systems) {
    InputErrors errors;
    auto s = from_env(vars, errors);
    ASSERT_TRUE(s) << var << ": " << all_messages(errors);
    EXPECT_EQ(s->index, 1u) << var;
    EXPECT_EQ(s->total, 3u) << var;
    EXPECT_NE(s->source.find(var), std::string::npos) << s->source;
  }
}

// The catalogue's order decides when two systems' variables are both set, and the
// flag beats every variable.
TEST(Shard, FlagThenCatalogueOrderDecides) {
  const Vars both{{"GTEST_SHARD_INDEX", "0"},
                  {"GTEST_TOTAL_SHARDS", "2"},
                  {"CI_NODE_INDEX", "2"},
                  {"CI_NODE_TOTAL", "5"}};
  InputErrors errors;
  auto s = from_env(both, errors);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->total, 2u);
  auto f = resolve_shard(std::string("4/5"), env_of(both), errors);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->index, 4u);
  EXPECT_EQ(f->source, "--shard");
  EXPECT_FALSE(from_env({}, errors));
  EXPECT_TRUE(errors.empty()) << all_messages(errors);
}

// Bad values are errors naming the variable at fault.
TEST(Shard, BadVariablesNameTheVariable) {
  const std::vector<std::pair<Vars, std::string>> cases{
      {{{"TEST_SHARD_INDEX", "3"}, {"TEST_TOTAL_SHARDS", "3"}}, "TEST_SHARD_INDEX"},
      {{{"TEST_SHARD_INDEX", "x"}, {"TEST_TOTAL_SHARDS", "3"}}, "TEST_SHARD_INDEX"},
      {{{"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "0"}}, "GTEST_TOTAL_SHARDS"},
      {{{"JOB_COMPLETION_INDEX", "0"}}, "TLAB_TOTAL_SHARDS"},               // no total
      {{{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX"},  // 1-based
      {{{"CI_NODE_INDEX", " 1"}, {"CI_NODE_TOTAL", "3"}}, "CI_NODE_INDEX"},
      // sbatch --array=1,2,7: not a range.
      {{{"SLURM_ARRAY_TASK_ID", "7"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "1"}},
       "SLURM_ARRAY_TASK_ID"},
      {{{"SLURM_ARRAY_TASK_ID", "1"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "2"}},
       "SLURM_ARRAY_TASK_ID"},
  };
  for (const auto& [vars, var] : cases) {
    InputErrors errors;
    EXPECT_FALSE(from_env(vars, errors)) << var;
    ASSERT_FALSE(errors.empty()) << var;
    EXPECT_EQ(errors.front().file, var) << all_messages(errors);
  }
}

// Bazel's TEST_SHARD_STATUS_FILE is created when set, and nothing happens when not.
TEST(Shard, TouchesBazelsStatusFile) {
  const std::string path = ::testing::TempDir() + "/tlab_shard_status";
  std::remove(path.c_str());
  EXPECT_EQ(touch_shard_status_file(env_of({{"TEST_SHARD_STATUS_FILE", path}})), "");
  EXPECT_EQ(std::remove(path.c_str()), 0);
  EXPECT_EQ(touch_shard_status_file(env_of({})), "");
  EXPECT_NE(touch_shard_status_file(env_of({{"TEST_SHARD_STATUS_FILE", "/nonexistent/dir/x"}})),
            "");
}

}  // namespace
}  // namespace tlab::tool
