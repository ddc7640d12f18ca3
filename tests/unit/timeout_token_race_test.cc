// Multi-threaded tests for tlab/timeout_token.h (labels unit, tsan): N resolvers
// race on every arming and exactly one wins; the load/store mutant, with both
// resolvers met inside its race window, produces two winners in every run.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/mutant_platform.h"
#include "support/sync_test_util.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/timeout_token.h"

namespace tlab {
namespace {

using testing::MutantPlatform;

// MeetingPlatform<Base, kAt, N>: Base, except that fault(kAt) returns only once N
// threads have reached kAt (a barrier, reused for every meeting). A window that
// follows kAt then stays open until every racer is inside it, however the machine
// schedules them; a delay only keeps it open for as long as it lasts.
template <class Base, FaultPoint kAt, std::ptrdiff_t N>
struct MeetingPlatform : Base {
  static void fault(FaultPoint p) noexcept {
    Base::fault(p);
    if (p == kAt) meeting().arrive_and_wait();
  }
  static std::barrier<>& meeting() {
    static std::barrier<> b(N);
    return b;
  }
};

struct RaceOutcome {
  std::uint64_t armings = 0;
  std::uint64_t zero_winner_armings = 0;
  std::uint64_t multi_winner_armings = 0;
};

// Runs `armings` rounds. In each, the owner (this thread) arms, then `resolvers`
// threads all call resolve() with that arming's token at once. Stops early once
// `stop_at_first_multi` and an arming had more than one winner.
template <class P>
RaceOutcome race_resolvers(int resolvers, std::uint64_t armings, bool stop_at_first_multi) {
  TimeoutToken<P> word;
  typename TimeoutToken<P>::Token token;
  std::atomic<int> winners{0};
  std::atomic<bool> stop{false};
  // Phase 1 start: token published; phase 2: all resolvers done.
  std::barrier sync(resolvers + 1);
  std::vector<std::thread> threads;
  for (int r = 0; r < resolvers; ++r) {
    threads.emplace_back([&, r] {
      stress::seed_thread(static_cast<std::uint64_t>(r) + 1);
      for (;;) {
        sync.arrive_and_wait();
        if (stop.load(std::memory_order::relaxed)) return;  // ordered by the barrier
        if (word.resolve(token)) winners.fetch_add(1, std::memory_order::relaxed);
        sync.arrive_and_wait();
      }
    });
  }
  RaceOutcome out;
  for (std::uint64_t i = 0; i < armings; ++i) {
    token = word.arm();  // read by resolvers after the barrier
    winners.store(0, std::memory_order::relaxed);
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    ++out.armings;
    const int w = winners.load(std::memory_order::relaxed);
    if (w == 0) ++out.zero_winner_armings;
    if (w > 1) ++out.multi_winner_armings;
    if (w == 0) (void)word.resolve(token);  // keep the owner's arm() precondition
    if (w > 1 && stop_at_first_multi) break;
  }
  stop.store(true, std::memory_order::relaxed);
  sync.arrive_and_wait();
  for (auto& t : threads) t.join();
  return out;
}

// Four resolvers race on each of 3000 armings: every arming has exactly one winner.
TEST(TimeoutTokenRace, ExactlyOneWinnerPerArming) {
  const RaceOutcome out = race_resolvers<StdPlatform>(4, 3000, false);
  EXPECT_EQ(out.armings, 3000u);
  EXPECT_EQ(out.zero_winner_armings, 0u);
  EXPECT_EQ(out.multi_winner_armings, 0u);
}

// The same race with the resolve window widened by a 200-500 us delay before the
// CAS still has exactly one winner: the widening alone does not break the CAS.
TEST(TimeoutTokenRace, WidenedWindowStillOneWinner) {
  testing::ScopedFaultPlan plan(
      testing::delay_plan(FaultPoint::kTokenBeforeResolveCas, 200'000, 500'000));
  const RaceOutcome out = race_resolvers<StressPlatform>(2, 50, false);
  EXPECT_EQ(out.zero_winner_armings, 0u);
  EXPECT_EQ(out.multi_winner_armings, 0u);
}

// The same two resolvers met before the CAS, on each of 50 armings: the shipped
// CAS still lets exactly one win (the shipped side of the mutant check below).
TEST(TimeoutTokenRace, MetResolversStillOneWinner) {
  using Met = MeetingPlatform<StdPlatform, FaultPoint::kTokenBeforeResolveCas, 2>;
  const RaceOutcome out = race_resolvers<Met>(2, 50, false);
  EXPECT_EQ(out.armings, 50u);
  EXPECT_EQ(out.zero_winner_armings, 0u);
  EXPECT_EQ(out.multi_winner_armings, 0u);
}

// Mutant kTokenLoadStoreResolve (check-then-act): the two resolvers meet at
// kTokenBeforeResolveCas, before the load and again between the load and the
// store, so both load the armed word before either stores, and both "win" the
// first arming, every run. (Widened by a 200-500 us delay instead, the window met
// the second resolver only if the machine ran it within that delay.)
TEST(TimeoutTokenRaceMutant, LoadStoreResolveHasTwoWinners) {
  using Met = MeetingPlatform<StdPlatform, FaultPoint::kTokenBeforeResolveCas, 2>;
  using LoadStore = MutantPlatform<Met, Mutant::kTokenLoadStoreResolve>;
  const RaceOutcome out = race_resolvers<LoadStore>(2, 50, true);
  EXPECT_EQ(out.armings, 1u);
  EXPECT_EQ(out.multi_winner_armings, 1u);
}

}  // namespace
}  // namespace tlab
