// Tests for the Platform policies: production mutants are compile-time false, the
// stress switchboard turns exactly one mutant on, and fault plans fire as planned.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"

namespace tlab {
namespace {

// In production every mutant is a constant expression equal to false.
TEST(Platform, StdMutantsAreConstexprFalse) {
  static_assert(!StdPlatform::mutated(Mutant::kDelayOverflowWraps));
  constexpr bool any = [] {
    for (std::size_t i = 0; i < kMutantCount; ++i) {
      if (StdPlatform::mutated(static_cast<Mutant>(i))) return true;
    }
    return false;
  }();
  static_assert(!any);
  SUCCEED();
}

// Every mutant and fault point has a unique, round-tripping CLI name.
TEST(Platform, CatalogueNamesRoundTrip) {
  for (const auto& row : kMutantInfo) {
    ASSERT_EQ(mutant_from_name(row.name), row.id) << row.name;
    EXPECT_FALSE(row.failure_class.empty()) << row.name;
  }
  for (const auto& row : kFaultPointInfo) {
    ASSERT_EQ(fault_point_from_name(row.name), row.id) << row.name;
  }
  EXPECT_EQ(mutant_from_name("no_such_mutant"), std::nullopt);
}

// configure() turns on exactly the named mutant; reset() turns it off again.
TEST(Platform, StressSwitchboardEnablesOneMutant) {
  stress::configure(Mutant::kTokenFlagOnly, {});
  EXPECT_TRUE(StressPlatform::mutated(Mutant::kTokenFlagOnly));
  EXPECT_FALSE(StressPlatform::mutated(Mutant::kTokenRelaxedResolve));
  stress::reset();
  EXPECT_FALSE(StressPlatform::mutated(Mutant::kTokenFlagOnly));
}

// A fault point with probability 1 injects on every hit, from any thread; one
// without a plan only counts hits.
TEST(Platform, FaultPlansInjectAsPlanned) {
  std::array<stress::FaultPlan, kFaultPointCount> plans{};
  plans[static_cast<std::size_t>(FaultPoint::kTokenBeforeResolveCas)] = {
      stress::FaultAction::kYield, 1.0, 0, 0};
  stress::configure(std::nullopt, plans);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      stress::seed_thread(static_cast<std::uint64_t>(t));
      for (int i = 0; i < 100; ++i) {
        StressPlatform::fault(FaultPoint::kTokenBeforeResolveCas);
        StressPlatform::fault(FaultPoint::kTimerBeforeNotify);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(stress::stats(FaultPoint::kTokenBeforeResolveCas).hits, 400u);
  EXPECT_EQ(stress::stats(FaultPoint::kTokenBeforeResolveCas).injected, 400u);
  EXPECT_EQ(stress::stats(FaultPoint::kTimerBeforeNotify).hits, 400u);
  EXPECT_EQ(stress::stats(FaultPoint::kTimerBeforeNotify).injected, 0u);
  stress::reset();
}

}  // namespace
}  // namespace tlab
