// tests/support/mutant_platform.h: compile-time mutant platforms for tests.
//
// MutantPlatform<Base, M> is Base with exactly one mutant switched on at compile
// time. A test instantiates the real core template with it and expects the check
// under test to FAIL: that is how every property and concurrency test proves it
// can fail (see README, "Every check proves it can fail").
//
//   MutantPlatform<ManualStdPlatform, Mutant::kHeapUnstableTies>  manual clock
//   MutantPlatform<StdPlatform, Mutant::kTimerSleepNotWait>        real clock
//   MutantPlatform<StressPlatform, ...>                            + fault points
#pragma once

#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"

namespace tlab::testing {

template <class Base, Mutant M>
struct MutantPlatform : Base {
  static constexpr std::string_view kName = name_of(M);
  static constexpr bool mutated(Mutant m) noexcept { return m == M; }
};

}  // namespace tlab::testing
