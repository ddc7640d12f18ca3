// Multi-threaded tests for tlab/waiter.h (labels unit, tsan): a canceller thread
// and a timer thread race to resolve every arming of one waiter. Exactly one of
// them resumes it, exactly once, and the result names the winner.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "support/manual_timer_source.h"
#include "support/mutant_platform.h"
#include "support/sync_test_util.h"
#include "tlab/platform/std_platform.h"
#include "tlab/waiter.h"

namespace tlab {
namespace {

using testing::ManualTimerSource;
using testing::MutantPlatform;
using testing::spin_until;

constexpr Duration kTen = Duration::milliseconds(10);

template <class P>
struct RaceResult {
  int rounds = 0;
  int cancel_wins = 0;
  int mismatches = 0;  // rounds whose TimeoutResult does not name the winner
  typename Waiter<P>::Counters counters;
};

// `rounds` armings of one waiter (this thread). For each, a canceller thread calls
// cancel(token) and a timer thread advances the clock to the deadline and fires
// what is due. Who goes first depends on the round, so every path is covered
// whatever the machine's load:
//   i % 4 == 0  the timer fires first; the canceller then must lose
//   i % 4 == 1  the canceller goes first; the timer finds nothing or loses
//   i % 4 == 2  both start as soon as the token is published (a free race)
//   i % 4 == 3  both race once the waiter is parked (or the timer has acted)
template <class P>
RaceResult<P> race_cancel_vs_expiry(int rounds) {
  using Token = typename Waiter<P>::Token;
  ManualTimerSource src;
  Waiter<P> w;
  Token token;                    // written before `published`, read after it
  std::atomic<int> published{0};  // round whose token is in `token`
  std::atomic<int> acted{0};      // resolver actions finished, two per round
  std::vector<char> cancel_won(static_cast<std::size_t>(rounds), 0);

  std::thread canceller([&] {
    for (int i = 1; i <= rounds; ++i) {
      EXPECT_TRUE(spin_until([&] { return published.load(std::memory_order::acquire) >= i; }));
      if (i % 4 == 0) {
        EXPECT_TRUE(spin_until([&] { return acted.load() >= 2 * i - 1; }));
      }
      if (i % 4 == 3) spin_until([&] { return w.parked() || acted.load() >= 2 * i - 1; });
      cancel_won[static_cast<std::size_t>(i - 1)] = w.cancel(token) ? 1 : 0;
      acted.fetch_add(1, std::memory_order::release);  // pairs with the waiter's spin
    }
  });
  std::thread timer([&] {
    for (int i = 1; i <= rounds; ++i) {
      EXPECT_TRUE(spin_until([&] { return published.load(std::memory_order::acquire) >= i; }));
      if (i % 4 == 1) {
        EXPECT_TRUE(spin_until([&] { return acted.load() >= 2 * i - 1; }));
      }
      src.advance(kTen);
      src.fire_due();
      acted.fetch_add(1, std::memory_order::release);  // pairs with the waiter's spin
    }
  });

  RaceResult<P> out;
  for (int i = 1; i <= rounds; ++i) {
    const TimeoutResult r = w.timeout(src, kTen, [&](Token t) {
      token = t;
      published.store(i, std::memory_order::release);  // pairs with the resolvers' spin
    });
    // Both resolvers must be done with this round's token before it is overwritten.
    EXPECT_TRUE(spin_until([&] { return acted.load(std::memory_order::acquire) >= 2 * i; }));
    const bool cw = cancel_won[static_cast<std::size_t>(i - 1)] != 0;
    out.cancel_wins += cw ? 1 : 0;
    if ((r == TimeoutResult::kCanceled) != cw) ++out.mismatches;
    ++out.rounds;
  }
  canceller.join();
  timer.join();
  out.counters = w.counters();
  return out;
}

// 400 rounds of canceller vs expiry: one resume per arming, the result always
// names the winner, and the ordered rounds go to the side that went first.
TEST(WaiterRace, CancelVsExpiryResumesExactlyOnce) {
  const auto out = race_cancel_vs_expiry<StdPlatform>(400);
  EXPECT_EQ(out.mismatches, 0);
  EXPECT_EQ(out.counters.armings, 400u);
  EXPECT_EQ(out.counters.resumes, 400u);
  EXPECT_EQ(out.counters.double_resumes, 0u);
  EXPECT_EQ(out.counters.stale_wakeups, 0u);
  EXPECT_EQ(out.counters.cancels, static_cast<std::uint64_t>(out.cancel_wins));
  EXPECT_GE(out.cancel_wins, 100) << "the canceller-first rounds must all cancel";
  EXPECT_LE(out.cancel_wins, 300) << "the timer-first rounds must all expire";
}

// A waiter parked on another thread is woken by a canceller on this one, and a
// parked waiter nobody resolves shows as parked with armings > resumes (what the
// stress runner reports as a lost wakeup).
TEST(WaiterRace, ParkedWaiterIsVisibleAndWokenByCanceller) {
  ManualTimerSource src;
  Waiter<StdPlatform> w;
  std::atomic<bool> published{false};
  Waiter<StdPlatform>::Token token;
  TimeoutResult r = TimeoutResult::kExpired;
  std::thread waiter([&] {
    r = w.timeout(src, Duration::max(), [&](auto t) {
      token = t;
      published.store(true, std::memory_order::release);  // pairs with the spin below
    });
  });
  ASSERT_TRUE(spin_until([&] { return published.load(std::memory_order::acquire) && w.parked(); }));
  EXPECT_EQ(w.counters().armings, 1u);
  EXPECT_EQ(w.counters().resumes, 0u);
  EXPECT_TRUE(w.cancel(token));
  waiter.join();
  EXPECT_EQ(r, TimeoutResult::kCanceled);
  EXPECT_EQ(src.pending(), 0u);
  w.check_invariants();
}

// Mutant kWaiterResumeOnLostResolve: in the same race the losing side resumes the
// waiter too, which the per-waiter counters report as double resumes. Reliable: in
// every timer-first round (i % 4 == 0) the canceller loses.
TEST(WaiterRaceMutant, ResumeOnLostResolveIsCaught) {
  using Bug = MutantPlatform<StdPlatform, Mutant::kWaiterResumeOnLostResolve>;
  const auto out = race_cancel_vs_expiry<Bug>(200);
  EXPECT_GT(out.counters.double_resumes, 0u);
}

}  // namespace
}  // namespace tlab
