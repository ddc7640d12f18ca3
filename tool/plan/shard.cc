// tlab/tool/plan/shard.cc: see shard.h.
#include "plan/shard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace tlab::tool {

const std::vector<ShardVariables> kShardVariables{
    {"Bazel", "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", 0},
    {"GoogleTest", "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", 0},
    {"Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", "TLAB_TOTAL_SHARDS", 0},
    {"GitLab CI", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1},
    {"Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0, "SLURM_ARRAY_TASK_MIN",
     "SLURM_ARRAY_TASK_STEP"},
};

namespace {

// parse_count: a decimal number without sign, spaces or trailing text.
std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}

// read_number: variable `name` as a number; an error naming it when it is set but
// not one. `fallback` when unset.
std::optional<std::uint64_t> read_number(const GetEnv& env, std::string_view name,
                                         std::optional<std::uint64_t> fallback,
                                         InputErrors& errors) {
  const auto text = env(name);
  if (!text) {
    if (!fallback) {
      errors.push_back({std::string(name), "/", "is not set"});
    }
    return fallback;
  }
  auto v = parse_count(*text);
  if (!v) {
    errors.push_back(
        {std::string(name), "/", fmt::format("'{}' is not a non-negative integer", *text)});
  }
  return v;
}

std::optional<Shard> from_row(const ShardVariables& row, const GetEnv& env, InputErrors& errors) {
  const std::size_t before = errors.size();
  const auto id = read_number(env, row.index_var, std::nullopt, errors);
  const auto total = read_number(env, row.total_var, std::nullopt, errors);
  const auto min = row.min_var.empty() ? std::optional<std::uint64_t>(row.base)
                                       : read_number(env, row.min_var, row.base, errors);
  const auto step = row.step_var.empty() ? std::optional<std::uint64_t>(1)
                                         : read_number(env, row.step_var, 1, errors);
  if (errors.size() != before || !id || !total || !min || !step) {
    errors.push_back({std::string(row.index_var), "/",
                      fmt::format("{} sharding needs {} and {} ({}-based)", row.system,
                                  row.index_var, row.total_var, row.base)});
    return std::nullopt;
  }
  const std::string name(row.index_var);
  if (*total == 0 || *total > kMaxShards) {
    errors.push_back({std::string(row.total_var), "/",
                      fmt::format("{} shards is outside [1, {}]", *total, kMaxShards)});
    return std::nullopt;
  }
  if (*step == 0) {
    errors.push_back({std::string(row.step_var), "/", "a step of 0 is not an array"});
    return std::nullopt;
  }
  if (*id < *min || (*id - *min) % *step != 0 || (*id - *min) / *step >= *total) {
    errors.push_back(
        {name, "/",
         fmt::format("{} does not name one of {} shards (the first is {}{}); {}", *id, *total, *min,
                     *step == 1 ? "" : fmt::format(", step {}", *step),
                     row.min_var.empty() ? fmt::format("{} counts from {}", name, row.base)
                                         : "use a range such as --array=0-N-1, or pass --shard")});
    return std::nullopt;
  }
  Shard s;
  s.index = static_cast<std::uint32_t>((*id - *min) / *step);
  s.total = static_cast<std::uint32_t>(*total);
  s.source = fmt::format("{}/{} ({})", row.index_var, row.total_var, row.system);
  return s;
}

}  // namespace

std::optional<std::string> process_env(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<Shard> parse_shard_flag(const std::string& text, InputErrors& errors) {
  const auto slash = text.find('/');
  std::optional<std::uint64_t> i, n;
  if (slash != std::string::npos) {
    i = parse_count(std::string_view(text).substr(0, slash));
    n = parse_count(std::string_view(text).substr(slash + 1));
  }
  if (!i || !n) {
    errors.push_back(
        {"--shard", "/", fmt::format("'{}' is not i/n (0-based: --shard 0/3, 1/3, 2/3)", text)});
    return std::nullopt;
  }
  if (*n == 0 || *n > kMaxShards || *i >= *n) {
    errors.push_back(
        {"--shard", "/",
         fmt::format("'{}': needs 0 <= i < n <= {} (the index is 0-based)", text, kMaxShards)});
    return std::nullopt;
  }
  return Shard{static_cast<std::uint32_t>(*i), static_cast<std::uint32_t>(*n), "--shard"};
}

std::optional<Shard> resolve_shard(const std::optional<std::string>& flag, const GetEnv& env,
                                   InputErrors& errors) {
  if (flag) return parse_shard_flag(*flag, errors);
  for (const ShardVariables& row : kShardVariables) {
    if (env(row.index_var) || env(row.total_var)) return from_row(row, env, errors);
  }
  return std::nullopt;
}

std::string touch_shard_status_file(const GetEnv& env) {
  const auto path = env("TEST_SHARD_STATUS_FILE");
  if (!path || path->empty()) return {};
  const int fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fmt::format("cannot create TEST_SHARD_STATUS_FILE {}: {}", *path, std::strerror(errno));
  }
  ::close(fd);
  return {};
}

bool in_shard(std::string_view key, const Shard& shard) {
  return fnv1a64(key) % shard.total == shard.index;
}

ShardSelection select_shard(const std::vector<std::string>& keys, const Shard& shard) {
  ShardSelection s;
  s.plan_cases = keys.size();
  std::string all;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (in_shard(keys[i], shard)) s.indices.push_back(i);
    all += keys[i];
    all += '\n';
  }
  s.plan_digest = digest_hex(all);
  return s;
}

}  // namespace tlab::tool
