// tlab/tool/types/expectations.h: what must hold after a case: the bounds a
// scenario's `expect` sets on each oracle's count and on the latency histograms.
//
// The scenario loader fills an Expectations from `expect` (scenario/scenario.h;
// scenarios/README.md documents the keys) and the parent judges a case against it
// (oracles/oracles.h, judge()). A value of types/ (tool/LAYERS): the scenario holds
// one and the judge reads it, so it sits below both.
//
// Cost: nothing (plain values). Ground rules: constant tables and plain values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "types/oracle.h"

namespace tlab::tool {

// Upper bounds on a latency histogram, in microseconds; unset means unbounded.
struct LatencyBound {
  std::optional<std::int64_t> p50_max, p90_max, p99_max, p999_max, max;
};

// What must hold (oracles/oracles.h judges it). Indexed by Oracle; only boundable
// oracles are read from a file, the others stay 0.
struct Expectations {
  std::array<std::uint64_t, kOracleCount> max_violations{};  // all 0 by default
  // expect.at_least: violations that MUST occur (all 0 by default). For scenarios
  // that demonstrate a predicted failure of the real code (aba_wraparound_narrow:
  // the RFC's wraparound at 3 bits); the case fails if fewer are seen.
  std::array<std::uint64_t, kOracleCount> min_violations{};
  LatencyBound fire_lateness_us;
  LatencyBound cancel_to_resume_us;
};

// The latency histograms a scenario may bound (expect.<key>), by histogram name.
struct LatencyBoundInfo {
  std::string_view histogram;  // "fire_lateness": the report's latency key
  std::string_view key;        // "fire_lateness_us": the key under expect
};
inline constexpr std::array<LatencyBoundInfo, 2> kLatencyBoundInfo{{
    {"fire_lateness", "fire_lateness_us"},
    {"cancel_to_resume", "cancel_to_resume_us"},
}};

}  // namespace tlab::tool
