// tlab/tool/types/sim_spec.h: how a case runs under deterministic simulation
// (`--sim`): the scheduler's strategy and PCT depth. The seed is the case's.
//
// A simulated case runs the same engine and oracles on SimPlatform
// (core/include/tlab/platform/sim_platform.h): every actor and the timer thread
// are tasks of one seeded scheduler, one runs at a time, and time is virtual (it
// jumps to the next deadline when every task is blocked), so a case is a pure
// function of (scenario, strategy, mutant, seed, operations, SimSpec): replay is
// exact, bit for bit.
//
// A value of types/ (tool/LAYERS): a scenario's run.sim and the runner's CaseSpec
// both hold one, so it sits below both.
//
// Cost: nothing (a plain value). Ground rules: the names are the CLI's and the
// report's ("random", "pct").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tlab::tool {

enum class SimStrategy : std::uint8_t { kRandom, kPct };

// The PCT depth range --pct-depth accepts (d - 1 priority change points).
inline constexpr int kMaxPctDepth = 16;

struct SimSpec {
  SimStrategy strategy = SimStrategy::kRandom;
  int pct_depth = 3;  // kPct only: 1..kMaxPctDepth
  bool operator==(const SimSpec&) const = default;
};

constexpr std::string_view name_of(SimStrategy s) { return s == SimStrategy::kPct ? "pct" : "random"; }
constexpr std::optional<SimStrategy> sim_strategy_from_name(std::string_view n) {
  if (n == "random") return SimStrategy::kRandom;
  if (n == "pct") return SimStrategy::kPct;
  return std::nullopt;
}

}  // namespace tlab::tool
