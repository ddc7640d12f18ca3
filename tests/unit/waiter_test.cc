// Unit tests for tlab/waiter.h, single-threaded and deterministic: the resolver
// (canceller or expiry) acts from inside before_suspend, i.e. after the token is
// published and before the waiter parks, which is a real interleaving and needs no
// second thread. Racing resolvers are in waiter_race_test.cc (label tsan).
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "support/manual_timer_source.h"
#include "support/mutant_platform.h"
#include "tlab/platform/std_platform.h"
#include "tlab/waiter.h"

namespace tlab {
namespace {

using testing::ManualTimerSource;
using testing::MutantPlatform;
using W = Waiter<StdPlatform>;
using Token = W::Token;

constexpr Duration kTen = Duration::milliseconds(10);

// A canceller that wins before the park resumes the waiter with CANCELED, and the
// timer entry is removed lazily before timeout() returns.
TEST(Waiter, CancelBeforeParkReturnsCanceledAndRemovesTimer) {
  ManualTimerSource src;
  W w;
  bool won = false;
  const TimeoutResult r = w.timeout(src, kTen, [&](Token t) {
    EXPECT_EQ(src.pending(), 1u);
    EXPECT_TRUE(w.token_armed());
    won = w.cancel(t);
  });
  EXPECT_TRUE(won);
  EXPECT_EQ(r, TimeoutResult::kCanceled);
  EXPECT_EQ(src.pending(), 0u);
  EXPECT_EQ(src.cancelled(), 1u);
  EXPECT_FALSE(w.token_armed());
  const auto c = w.counters();
  EXPECT_EQ(c.armings, 1u);
  EXPECT_EQ(c.resumes, 1u);
  EXPECT_EQ(c.cancels, 1u);
  EXPECT_EQ(c.expiries, 0u);
  w.check_invariants();
}

// The timer firing at the deadline resumes the waiter with EXPIRED.
TEST(Waiter, ExpiryAtDeadlineReturnsExpired) {
  ManualTimerSource src;
  W w;
  const TimeoutResult r = w.timeout(src, kTen, [&](Token) {
    src.advance(kTen);
    EXPECT_EQ(src.fire_due(), 1u);
  });
  EXPECT_EQ(r, TimeoutResult::kExpired);
  EXPECT_EQ(src.pending(), 0u);
  EXPECT_EQ(w.counters().expiries, 1u);
  w.check_invariants();
}

// The timer is not due one nanosecond before the deadline.
TEST(Waiter, NeverExpiresBeforeTheDeadline) {
  ManualTimerSource src;
  W w;
  const TimeoutResult r = w.timeout(src, kTen, [&](Token t) {
    src.advance(kTen - Duration::nanoseconds(1));
    EXPECT_EQ(src.fire_due(), 0u);
    EXPECT_TRUE(w.cancel(t));
  });
  EXPECT_EQ(r, TimeoutResult::kCanceled);
  w.check_invariants();
}

// A zero delay is due at once: the next timer pass expires it.
TEST(Waiter, ZeroDelayIsDueNow) {
  ManualTimerSource src;
  W w;
  const TimeoutResult r =
      w.timeout(src, Duration::zero(), [&](Token) { EXPECT_EQ(src.fire_due(), 1u); });
  EXPECT_EQ(r, TimeoutResult::kExpired);
}

// A negative delay throws std::invalid_argument before anything is armed or scheduled.
TEST(Waiter, NegativeDelayThrowsAndArmsNothing) {
  ManualTimerSource src;
  W w;
  bool called = false;
  EXPECT_THROW(w.timeout(src, Duration::nanoseconds(-1), [&](Token) { called = true; }),
               std::invalid_argument);
  EXPECT_FALSE(called);
  EXPECT_FALSE(w.token_armed());
  EXPECT_EQ(src.scheduled(), 0u);
  EXPECT_EQ(w.counters().armings, 0u);
  w.check_invariants();
}

// Duration::max() saturates to Instant::max(): it never fires, however far time moves.
TEST(Waiter, MaxDurationSaturatesAndNeverFires) {
  ManualTimerSource src(Instant::from_ns(1'000'000'000));
  W w;
  const TimeoutResult r = w.timeout(src, Duration::max(), [&](Token t) {
    EXPECT_EQ(src.next_deadline(), Instant::max());
    src.clock().set(Instant::max() - Duration::nanoseconds(1));
    EXPECT_EQ(src.fire_due(), 0u);
    EXPECT_TRUE(w.cancel(t));
  });
  EXPECT_EQ(r, TimeoutResult::kCanceled);
}

// Only the winner resumes: a second canceller, an expiry after a cancel, and a
// canceller after an expiry all lose and resume nothing; so does a canceller
// holding the token after timeout() returned. Returns the counters afterwards.
template <class P>
typename Waiter<P>::Counters losers_resume_nothing() {
  ManualTimerSource src;
  Waiter<P> w;
  using T = typename Waiter<P>::Token;
  T kept{};
  const TimeoutResult r1 = w.timeout(src, kTen, [&](T t) {
    EXPECT_TRUE(w.cancel(t));
    EXPECT_FALSE(w.cancel(t));  // second canceller
    kept = t;
  });
  EXPECT_EQ(r1, TimeoutResult::kCanceled);
  EXPECT_FALSE(w.cancel(kept));  // stale canceller after the wait
  return w.counters();
}

// Losing resolvers resume nothing: one resume per arming, the losses counted.
TEST(Waiter, LosingResolversResumeNothing) {
  const auto c = losers_resume_nothing<StdPlatform>();
  EXPECT_EQ(c.resumes, 1u);
  EXPECT_EQ(c.lost_resolves, 2u);
  EXPECT_EQ(c.double_resumes, 0u);
}

// The canceller that comes after the expiry loses; the result stays EXPIRED.
TEST(Waiter, CancellerAfterExpiryLoses) {
  ManualTimerSource src;
  W w;
  bool cancel_won = true;
  const TimeoutResult r = w.timeout(src, kTen, [&](Token t) {
    src.advance(kTen);
    src.fire_due();
    cancel_won = w.cancel(t);
  });
  EXPECT_FALSE(cancel_won);
  EXPECT_EQ(r, TimeoutResult::kExpired);
  EXPECT_EQ(w.counters().resumes, 1u);
  w.check_invariants();
}

// A timer that runs inside schedule_at (the source is that fast) expires the
// arming before before_suspend even runs; the waiter still resumes exactly once.
TEST(Waiter, ExpiryBeforeBeforeSuspendStillResumesOnce) {
  ManualTimerSource src;
  src.set_fire_inline_when_due(true);
  W w;
  bool cancel_won = true;
  const TimeoutResult r =
      w.timeout(src, Duration::zero(), [&](Token t) { cancel_won = w.cancel(t); });
  EXPECT_FALSE(cancel_won);
  EXPECT_EQ(r, TimeoutResult::kExpired);
  w.check_invariants();
}

// A source that refuses the timer (shut down) makes timeout() throw with nothing
// left armed; the waiter is reusable afterwards.
TEST(Waiter, ScheduleFailureLeavesNothingArmed) {
  ManualTimerSource dead;
  dead.shutdown();
  W w;
  EXPECT_THROW(w.timeout(dead, kTen, [](Token) { ADD_FAILURE() << "must not run"; }),
               std::logic_error);
  EXPECT_FALSE(w.token_armed());
  w.check_invariants();
  ManualTimerSource src;
  EXPECT_EQ(w.timeout(src, kTen, [&](Token t) { w.cancel(t); }), TimeoutResult::kCanceled);
  w.check_invariants();
}

// An exception from before_suspend propagates after the waiter resolved its own
// arming and removed the timer.
TEST(Waiter, ThrowingBeforeSuspendDisarmsAndDrains) {
  ManualTimerSource src;
  W w;
  EXPECT_THROW(w.timeout(src, kTen, [](Token) { throw std::runtime_error("publish failed"); }),
               std::runtime_error);
  EXPECT_FALSE(w.token_armed());
  EXPECT_EQ(src.pending(), 0u);
  w.check_invariants();
}

// A thousand armings, alternately cancelled and expired, keep the counters exact.
TEST(Waiter, ManyArmingsKeepCountersExact) {
  ManualTimerSource src;
  W w;
  for (int i = 0; i < 1000; ++i) {
    const TimeoutResult r = w.timeout(src, kTen, [&](Token t) {
      if (i % 2 == 0) {
        w.cancel(t);
      } else {
        src.advance(kTen);
        src.fire_due();
      }
    });
    ASSERT_EQ(r, i % 2 == 0 ? TimeoutResult::kCanceled : TimeoutResult::kExpired);
  }
  const auto c = w.counters();
  EXPECT_EQ(c.armings, 1000u);
  EXPECT_EQ(c.cancels, 500u);
  EXPECT_EQ(c.expiries, 500u);
  EXPECT_EQ(src.pending(), 0u);
  w.check_invariants();
}

// A 3-bit waiter works the same over many armings (the ABA risk is only for
// resolvers that hold a token across 4 re-arms, which the sync/ primitives never do).
TEST(Waiter, SmallTokenWidthWorks) {
  ManualTimerSource src;
  Waiter<StdPlatform, 3> w;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(w.timeout(src, kTen, [&](auto t) { w.cancel(t); }), TimeoutResult::kCanceled);
  }
  w.check_invariants();
}

// Mutant kWaiterResumeOnLostResolve: the losing canceller resumes anyway, a double
// resume; its leftover signal then ends the next wait at once (a stale wakeup).
TEST(WaiterMutant, ResumeOnLostResolveDoubleResumes) {
  using Bug = MutantPlatform<StdPlatform, Mutant::kWaiterResumeOnLostResolve>;
  const auto c = losers_resume_nothing<Bug>();
  EXPECT_GT(c.double_resumes, 0u);
  EXPECT_GT(c.resumes, 1u);

  ManualTimerSource src;
  Waiter<Bug> w;
  w.timeout(src, kTen, [&](auto t) {
    w.cancel(t);
    w.cancel(t);
  });
  // Nobody resolves this arming, yet it returns: the leftover signal woke it.
  w.timeout(src, Duration::max(), [](auto) {});
  EXPECT_EQ(w.counters().stale_wakeups, 1u);
}

// Mutant kDelayOverflowWraps: now + Duration::max() wraps into the past and the
// timer fires on the next pass; the real code saturates and a canceller wins.
template <class P>
TimeoutResult max_delay_outcome(std::optional<Instant>* deadline) {
  ManualTimerSource src(Instant::from_ns(1'000'000'000));
  Waiter<P> w;
  return w.timeout(src, Duration::max(), [&](auto t) {
    *deadline = src.next_deadline();
    src.fire_due();
    w.cancel(t);
  });
}

// The overflow check above, run against the production code and against the mutant.
TEST(WaiterMutant, DelayOverflowWrapsFiresAtOnce) {
  std::optional<Instant> deadline;
  EXPECT_EQ(max_delay_outcome<StdPlatform>(&deadline), TimeoutResult::kCanceled);
  EXPECT_EQ(deadline, Instant::max());
  using Bug = MutantPlatform<StdPlatform, Mutant::kDelayOverflowWraps>;
  EXPECT_EQ(max_delay_outcome<Bug>(&deadline), TimeoutResult::kExpired);
  ASSERT_TRUE(deadline.has_value());
  EXPECT_LT(deadline->ns(), 0);
}

}  // namespace
}  // namespace tlab
