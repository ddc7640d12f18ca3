// Tests for tlab/sync/timed_wait_group.h (labels unit, tsan): seed 002's split
// counter. Deterministic cases first, then waits on other threads, then done()
// racing the timeout. Mutant kill: kWaitGroupPlainCounter (a straggler's done()
// after the timeout drives the counter negative), deterministic and raced.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/manual_timer_source.h"
#include "support/mutant_platform.h"
#include "support/sync_test_util.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/sync/timed_wait_group.h"

namespace tlab {
namespace {

using testing::ManualTimerSource;
using testing::MutantPlatform;
using testing::spin_until;
using G = TimedWaitGroup<StdPlatform>;

constexpr Duration kTen = Duration::milliseconds(10);

// An empty group is complete: wait_for returns true at once and arms nothing.
TEST(TimedWaitGroup, EmptyGroupIsDone) {
  ManualTimerSource src;
  G g;
  EXPECT_TRUE(g.complete());
  EXPECT_TRUE(g.wait_for(src, kTen));
  EXPECT_EQ(src.scheduled(), 0u);
}

// All done() before the wait: true at once.
TEST(TimedWaitGroup, AllDoneBeforeWait) {
  ManualTimerSource src;
  G g;
  g.add(3);
  EXPECT_EQ(g.pending(), 3);
  g.done();
  g.done();
  g.done();
  EXPECT_EQ(g.pending(), 0);
  EXPECT_EQ(g.unfinished(), 0u);
  EXPECT_TRUE(g.wait_for(src, kTen));
  g.check_invariants();
}

// Seed 002's point: after a timeout, a straggler's done() is absorbed and nothing
// goes below zero; the group stays complete-by-timeout and waits return false.
// Returns pending() after the straggler.
template <class P>
std::int64_t pending_after_straggler() {
  TimedWaitGroup<P> g;
  g.add(2);
  g.done();
  EXPECT_TRUE(g.time_out());
  EXPECT_FALSE(g.time_out()) << "only the first completion counts";
  EXPECT_EQ(g.pending(), 0);
  EXPECT_EQ(g.unfinished(), 1u);
  g.done();  // the straggler
  return g.pending();
}

// The straggler check above on the real word: pending stays 0, unfinished stays 1.
TEST(TimedWaitGroup, DoneAfterTimeoutIsAbsorbed) {
  EXPECT_EQ(pending_after_straggler<StdPlatform>(), 0);
  ManualTimerSource src;
  G g;
  g.add(1);
  g.time_out();
  g.done();
  EXPECT_EQ(g.unfinished(), 1u);
  EXPECT_FALSE(g.wait_for(src, kTen)) << "completed by timeout";
  g.check_invariants();
}

// Mutant kWaitGroupPlainCounter: the straggler drives the counter to -1.
TEST(TimedWaitGroupMutant, PlainCounterGoesNegative) {
  using Bug = MutantPlatform<StdPlatform, Mutant::kWaitGroupPlainCounter>;
  EXPECT_EQ(pending_after_straggler<Bug>(), -1);
}

// done() without a matching add() is a caller bug and throws.
TEST(TimedWaitGroup, DoneWithoutAddThrows) {
  G g;
  EXPECT_THROW(g.done(), std::logic_error);
  g.add(1);
  g.done();
  EXPECT_THROW(g.done(), std::logic_error);
}

// A negative delay throws std::invalid_argument.
TEST(TimedWaitGroup, NegativeDelayThrows) {
  ManualTimerSource src;
  G g;
  g.add(1);
  EXPECT_THROW(g.wait_for(src, Duration::nanoseconds(-1)), std::invalid_argument);
  g.done();
}

// A zero delay on an incomplete group times out at the next timer pass.
TEST(TimedWaitGroup, ZeroDelayTimesOut) {
  ManualTimerSource src;
  src.set_fire_inline_when_due(true);
  G g;
  g.add(1);
  EXPECT_FALSE(g.wait_for(src, Duration::zero()));
  EXPECT_EQ(g.pending(), 0);
  EXPECT_EQ(g.unfinished(), 1u);
}

// A waiter parked on another thread returns true when the last done() arrives,
// and its timer (Duration::max(), saturated) is removed.
TEST(TimedWaitGroup, LastDoneWakesWaiter) {
  ManualTimerSource src;
  G g;
  g.add(2);
  std::atomic<int> result{-1};
  std::thread w([&] { result = g.wait_for(src, Duration::max()) ? 1 : 0; });
  ASSERT_TRUE(src.await_pending(1));
  EXPECT_EQ(src.next_deadline(), Instant::max());
  g.done();
  g.done();
  w.join();
  EXPECT_EQ(result, 1);
  EXPECT_EQ(src.pending(), 0u);
}

// Two waiters with different deadlines: the first deadline completes the group
// for both, both return false, and late done() calls change nothing.
TEST(TimedWaitGroup, FirstDeadlineCompletesForAllWaiters) {
  ManualTimerSource src;
  G g;
  g.add(2);
  std::atomic<int> r1{-1}, r2{-1};
  std::thread w1([&] { r1 = g.wait_for(src, kTen) ? 1 : 0; });
  std::thread w2([&] { r2 = g.wait_for(src, Duration::seconds(3600)) ? 1 : 0; });
  ASSERT_TRUE(src.await_pending(2));
  src.advance(kTen);
  EXPECT_EQ(src.fire_due(), 1u);
  w1.join();
  w2.join();
  EXPECT_EQ(r1, 0);
  EXPECT_EQ(r2, 0);
  EXPECT_EQ(src.pending(), 0u) << "the second waiter removed its timer";
  g.done();
  g.done();
  EXPECT_EQ(g.pending(), 0);
  g.check_invariants();
}

struct RaceTally {
  int rounds = 0;
  int true_results = 0;
  int false_results = 0;
  int wrong_results = 0;    // wait_for's answer disagrees with the final word
  int negative_rounds = 0;  // pending() < 0 after everyone finished
};

// Rounds of: add(4); four workers call done() once each and a timer thread fires
// the waiter's timeout. In odd rounds all start at once (a free race, the CAS
// window widened by a 0-30 us delay at kWaitGroupBeforeCas, probability 0.5); in
// even rounds the timeout goes first, so all four done() calls are stragglers.
template <class P>
RaceTally race_done_vs_timeout(int rounds, bool stop_when_negative) {
  testing::ScopedFaultPlan plan(
      testing::delay_plan(FaultPoint::kWaitGroupBeforeCas, 0, 30'000, 0.5));
  RaceTally tally;
  for (int i = 0; i < rounds; ++i) {
    ManualTimerSource src;
    TimedWaitGroup<P> g;
    g.add(4);
    std::atomic<bool> go{false}, timer_done{false};
    std::atomic<int> result{-1};
    std::thread waiter([&] { result = g.wait_for(src, kTen) ? 1 : 0; });
    EXPECT_TRUE(src.await_pending(1));
    std::vector<std::thread> workers;
    for (int k = 0; k < 4; ++k) {
      workers.emplace_back([&, k] {
        stress::seed_thread(static_cast<std::uint64_t>(i * 8 + k));
        spin_until([&] { return go.load() && (i % 2 == 1 || timer_done.load()); });
        g.done();
      });
    }
    std::thread timer([&] {
      spin_until([&] { return go.load(); });
      src.advance(kTen);
      src.fire_due();
      timer_done.store(true);
    });
    go.store(true);
    for (auto& t : workers) t.join();
    timer.join();
    waiter.join();
    ++tally.rounds;
    (result == 1 ? tally.true_results : tally.false_results) += 1;
    if ((result == 1) != (g.unfinished() == 0)) ++tally.wrong_results;
    if (g.pending() < 0) ++tally.negative_rounds;
    if (tally.negative_rounds > 0 && stop_when_negative) break;
  }
  return tally;
}

// done() racing the timeout: never negative, and wait_for is true iff all done.
TEST(TimedWaitGroupRace, DoneVsTimeoutNeverNegative) {
  const auto t = race_done_vs_timeout<StressPlatform>(60, false);
  EXPECT_EQ(t.negative_rounds, 0);
  EXPECT_EQ(t.wrong_results, 0);
  EXPECT_GE(t.false_results, 30) << "every timeout-first round must report false";
}

// Mutant kWaitGroupPlainCounter in the same race: some straggler drives the
// counter negative; the first timeout-first round (round 0) already does.
TEST(TimedWaitGroupRaceMutant, PlainCounterGoesNegativeInRace) {
  using Bug = MutantPlatform<StressPlatform, Mutant::kWaitGroupPlainCounter>;
  EXPECT_GT(race_done_vs_timeout<Bug>(60, true).negative_rounds, 0);
}

}  // namespace
}  // namespace tlab
