// Tests for Executor (executor.h, seed 003) in manual mode: the metronome and the
// workers are driven step by step (no threads), so every race window is entered on
// purpose: firing on the metronome's tick, cancel with exactly one winner against the
// fire, reschedule, worker stop/restart through the merge queue, stats, shutdown, and
// the executor mutants. The same contracts under real worker threads are in
// executor_threads_test.cc.
#include "tlab/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/mutant_platform.h"

namespace tlab {
namespace {

constexpr Duration kRes = Duration::milliseconds(1);

// ManualStdPlatform whose fault points call a test hook (set only by manual tests).
struct HookPlatform : ManualStdPlatform {
  static inline std::function<void(FaultPoint)> hook;
  static void fault(FaultPoint p) {
    if (hook) hook(p);
  }
};

struct HookGuard {
  explicit HookGuard(std::function<void(FaultPoint)> h) { HookPlatform::hook = std::move(h); }
  ~HookGuard() { HookPlatform::hook = nullptr; }
};

template <class P>
typename Executor<P>::Config manual_config(std::size_t workers = 2) {
  typename Executor<P>::Config c;
  c.workers = workers;
  c.resolution = kRes;
  c.wheel_slots = 64;
  c.worker_threads = false;
  c.metronome_thread = false;
  return c;
}

// A manual executor plus its clock; step() is one metronome tick and one run of
// every worker.
template <class P = HookPlatform>
struct Manual {
  using Ex = Executor<P>;
  ManualClock clock;
  Ex ex;
  explicit Manual(std::size_t workers = 2)
      : ex(manual_config<P>(workers), clock), worker_count(workers) {}
  explicit Manual(typename Ex::Config c) : ex(c, clock), worker_count(c.workers) {}
  void step(int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      clock.advance(kRes);
      ex.tick_once();
      for (std::size_t w = 0; w < worker_count; ++w) ex.run_worker_once(w);
      if (check) ex.check_invariants();
    }
  }
  std::size_t worker_count;
  // Mutant runs turn this off: the invariant check would abort before the
  // behavioural check under test gets to fail.
  bool check = true;
};

template <class P = HookPlatform>
std::unique_ptr<Manual<P>> make_manual(std::size_t workers = 2) {
  return std::make_unique<Manual<P>>(workers);
}

// A timer fires on the first tick at or after its deadline (rounded up), never before.
TEST(Executor, FiresOnItsDueTickNotBefore) {
  auto m = make_manual();
  int fired = 0;
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(t, Duration::microseconds(4500));  // due at tick 5
  m->step(4);
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(t->state(), TimerState::kScheduled);
  m->step(1);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t->state(), TimerState::kFired);
  m->step(10);
  EXPECT_EQ(fired, 1);
  const auto s = m->ex.stats();
  EXPECT_EQ(s.scheduled, 1u);
  EXPECT_EQ(s.fired, 1u);
  EXPECT_EQ(s.pending, 0u);
}

// cancel() returns true once, for a pending timer, and the timer never fires.
TEST(Executor, CancelPreventsTheFireAndWinsOnce) {
  auto m = make_manual();
  int fired = 0;
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(t, Duration::milliseconds(3));
  m->step(1);
  EXPECT_TRUE(m->ex.cancel(t));
  EXPECT_FALSE(m->ex.cancel(t));
  m->step(5);
  EXPECT_EQ(fired, 0);
  const auto s = m->ex.stats();
  EXPECT_EQ(s.cancelled, 1u);
  EXPECT_EQ(s.stale_skipped, 1u);  // the lazily cancelled entry, dropped when due
  EXPECT_EQ(s.pending, 0u);
  EXPECT_FALSE(m->ex.cancel(t));  // nothing pending
}

// A cancel landing between the worker's generation check and its CAS wins; the
// callback does not run.
TEST(Executor, CancelInTheBeforeFireWindowWins) {
  auto m = make_manual();
  int fired = 0;
  bool cancel_result = false;
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  HookGuard g([&](FaultPoint p) {
    if (p == FaultPoint::kExecutorBeforeFire) cancel_result = m->ex.cancel(t);
  });
  m->ex.schedule(t, Duration::milliseconds(1));
  m->step(2);
  EXPECT_TRUE(cancel_result);
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(t->state(), TimerState::kCancelled);
}

// A fire landing inside a canceller's window wins; that cancel returns false.
TEST(Executor, FireInTheCancelWindowWins) {
  auto m = make_manual();
  int fired = 0;
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(t, Duration::milliseconds(1));
  m->clock.advance(kRes * 2);
  m->ex.tick_once();
  HookGuard g([&](FaultPoint p) {
    if (p == FaultPoint::kExecutorCancelBetween) {
      m->ex.run_worker_once(0);
      m->ex.run_worker_once(1);
    }
  });
  EXPECT_FALSE(m->ex.cancel(t));
  EXPECT_EQ(fired, 1);
}

// Re-arming a pending timer replaces its arming: one fire, at the new deadline.
TEST(Executor, RescheduleReplacesThePendingArming) {
  auto m = make_manual();
  int fired = 0;
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(t, Duration::milliseconds(2));
  m->ex.schedule(t, Duration::milliseconds(6));
  m->step(5);
  EXPECT_EQ(fired, 0);
  m->step(1);
  EXPECT_EQ(fired, 1);
  const auto s = m->ex.stats();
  EXPECT_EQ(s.scheduled, 1u);
  EXPECT_EQ(s.rescheduled, 1u);
  EXPECT_EQ(s.stale_skipped, 1u);
}

// A callback that re-arms its own timer takes the local path and fires periodically.
TEST(Executor, CallbackRearmsLocally) {
  auto m = make_manual();
  int fired = 0;
  typename Manual<>::Ex::Timer t;
  t = Manual<>::Ex::make_timer([&] {
    if (++fired < 3) m->ex.schedule(t, Duration::milliseconds(2));
  });
  ASSERT_TRUE(m->ex.post(1, [&] { m->ex.schedule(t, Duration::milliseconds(2)); }));
  m->step(3);  // the task runs at tick 1: due at tick 3
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t->home(), 1u);  // scheduled from worker 1, stays there
  m->step(4);                // re-armed at ticks 3 and 5
  EXPECT_EQ(fired, 3);
  m->step(4);
  EXPECT_EQ(fired, 3);
  t.reset();  // break the callback's self-reference
}

// The check behind the fired-after-run mutant: a callback re-arms its own timer
// (at 0, due at the next tick) twice; both re-arms fire. Returns the fires seen.
template <class P>
int fires_of_a_self_rearming_timer() {
  auto m = make_manual<P>();
  m->check = std::is_same_v<P, HookPlatform>;
  int fired = 0;
  typename Executor<P>::Timer t;
  t = Executor<P>::make_timer([&] {
    if (++fired < 3) m->ex.schedule(t, Duration::zero());
  });
  m->ex.schedule(t, Duration::milliseconds(2));
  m->step(8);
  t.reset();  // break the callback's self-reference
  return fired;
}

// The mutant writes Fired over the callback's own re-arm: the new entry is stale
// and the timer is lost after its first fire.
TEST(Executor, FiredAfterRunMutantLosesTheCallbacksReArm) {
  EXPECT_EQ(fires_of_a_self_rearming_timer<HookPlatform>(), 3);
  EXPECT_EQ((fires_of_a_self_rearming_timer<
                testing::MutantPlatform<HookPlatform, Mutant::kExecutorFiredAfterRun>>()),
            1);
}

// The check behind the cancel-state-only mutant: cancel, then re-arm later; the
// old entry must not fire at the old deadline. Returns the fires seen by tick 5.
template <class P>
int fires_before_rearmed_deadline() {
  auto m = make_manual<P>();
  m->check = std::is_same_v<P, HookPlatform>;
  int fired = 0;
  auto t = Executor<P>::make_timer([&] { ++fired; });
  m->ex.schedule(t, Duration::milliseconds(3));
  if (!m->ex.cancel(t)) return -1;
  m->ex.schedule(t, Duration::milliseconds(8));
  m->step(5);
  return fired;
}

// Cancel then re-arm fires only at the new deadline; the mutant fires the old entry.
TEST(Executor, CancelStateOnlyMutantFiresTheOldEntry) {
  EXPECT_EQ(fires_before_rearmed_deadline<HookPlatform>(), 0);
  EXPECT_EQ((fires_before_rearmed_deadline<
                testing::MutantPlatform<HookPlatform, Mutant::kExecutorCancelStateOnly>>()),
            1);
}

struct ChurnResult {
  int fired = 0;
  std::uint64_t migrated = 0;
  std::uint64_t pending = 0;
};

// The check behind the drop-on-shutdown mutant: timers living on worker 0 survive
// its stop, move to worker 1 and fire at their original deadlines.
template <class P>
ChurnResult timers_survive_a_worker_stop() {
  auto m = make_manual<P>();
  ChurnResult r;
  std::vector<typename Executor<P>::Timer> timers;
  for (int i = 0; i < 100; ++i) timers.push_back(Executor<P>::make_timer([&] { ++r.fired; }));
  m->ex.post(0, [&] {
    for (int i = 0; i < 100; ++i) m->ex.schedule(timers[i], Duration::milliseconds(5 + i % 7));
  });
  m->ex.run_worker_once(0);
  m->ex.stop_worker(0);
  m->clock.advance(kRes * 4);
  m->ex.tick_once();  // redistributes to worker 1
  m->ex.run_worker_once(1);
  if (r.fired != 0) return r;  // fired before the original deadline: fail
  for (int i = 0; i < 8; ++i) {
    m->clock.advance(kRes);
    m->ex.tick_once();
    m->ex.run_worker_once(1);
  }
  const auto s = m->ex.stats();
  r.migrated = s.migrated;
  r.pending = s.pending;
  return r;
}

// Stopping a worker loses nothing; the drop-on-shutdown mutant loses every timer.
TEST(Executor, WorkerStopMigratesTimersAndMutantLosesThem) {
  const ChurnResult ok = timers_survive_a_worker_stop<HookPlatform>();
  EXPECT_EQ(ok.fired, 100);
  EXPECT_EQ(ok.migrated, 100u);
  EXPECT_EQ(ok.pending, 0u);
  const ChurnResult bad = timers_survive_a_worker_stop<
      testing::MutantPlatform<HookPlatform, Mutant::kWorkerDropOnShutdown>>();
  EXPECT_EQ(bad.fired, 0);
  EXPECT_EQ(bad.pending, 100u);
}

// The invariant check itself notices lost timers under the drop-on-shutdown mutant.
TEST(ExecutorDeathTest, InvariantsCatchLostTimers) {
  using MP = testing::MutantPlatform<HookPlatform, Mutant::kWorkerDropOnShutdown>;
  EXPECT_DEATH(
      {
        auto m = make_manual<MP>();
        auto t = Executor<MP>::make_timer([] {});
        m->ex.post(0, [&] { m->ex.schedule(t, Duration::milliseconds(5)); });
        m->ex.run_worker_once(0);
        m->ex.stop_worker(0);
        m->ex.check_invariants();
      },
      "live entries=0");
}

// A cancel inside the stopping worker's merge-push window wins; the entry is
// discarded at redistribution instead of firing.
TEST(Executor, CancelWhileMigratingWins) {
  auto m = make_manual();
  int fired = 0;
  bool cancel_result = false;
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.post(0, [&] { m->ex.schedule(t, Duration::milliseconds(2)); });
  m->ex.run_worker_once(0);
  {
    HookGuard g([&](FaultPoint p) {
      if (p == FaultPoint::kExecutorBeforeMergePush) {
        EXPECT_EQ(t->state(), TimerState::kMigrating);
        cancel_result = m->ex.cancel(t);
      }
    });
    m->ex.stop_worker(0);
  }
  EXPECT_TRUE(cancel_result);
  m->step(5);
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(m->ex.stats().migrated, 0u);
  EXPECT_EQ(m->ex.stats().stale_skipped, 1u);
}

// With no worker running, timers wait on the merge queue and fire once one starts.
TEST(Executor, TimersWaitForARunningWorker) {
  auto m = make_manual();
  int fired = 0;
  m->ex.stop_worker(0);
  m->ex.stop_worker(1);
  auto t = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(t, Duration::milliseconds(1));
  EXPECT_EQ(t->state(), TimerState::kMigrating);
  m->step(3);
  EXPECT_EQ(fired, 0);
  m->ex.start_worker(1);
  m->step(1);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(m->ex.stats().migrated, 1u);
}

// A throwing callback is counted and the worker keeps firing other timers.
TEST(Executor, CallbackExceptionsAreCounted) {
  auto m = make_manual(1);
  int fired = 0;
  auto bad = Manual<>::Ex::make_timer([] { throw std::runtime_error("boom"); });
  auto good = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(bad, Duration::milliseconds(1));
  m->ex.schedule(good, Duration::milliseconds(1));
  m->step(2);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(m->ex.stats().callback_errors, 1u);
  EXPECT_EQ(m->ex.stats().fired, 2u);
}

// schedule_far: n idle timers 1000 + (i % spread) ms out on worker 0, adopted into
// its wheel (one step), far enough that none comes due in a test's scrub laps.
std::vector<Manual<>::Ex::Timer> schedule_far(Manual<>& m, int n, int spread) {
  std::vector<Manual<>::Ex::Timer> ts;
  for (int i = 0; i < n; ++i) {
    ts.push_back(Manual<>::Ex::make_timer([] {}));
    m.ex.schedule(ts.back(), Duration::milliseconds(1000 + i % spread));
  }
  m.step(1);  // adopt into the wheel
  return ts;
}

// Remote cancels are reported through the striped counter and scrubbed from far
// buckets before they come due.
TEST(Executor, ScrubRemovesRemotelyCancelledEntries) {
  auto c = manual_config<HookPlatform>(1);
  c.scrub_garbage_threshold = 1;
  c.scrub_live_ratio = 0;  // every last stale entry, however few are left
  Manual<> m(c);
  const auto ts = schedule_far(m, 200, 50);
  for (int i = 0; i < 200; i += 2) ASSERT_TRUE(m.ex.cancel(ts[i]));
  for (int i = 0; i < 64; ++i) m.ex.run_worker_once(0);  // 8 buckets per run: a full lap
  EXPECT_EQ(m.ex.stats().stale_skipped, 100u);
  EXPECT_EQ(m.ex.stats().fired, 0u);
  m.ex.check_invariants();
}

// With scrub_live_ratio 8 a worker leaves remote garbage alone until it is 1/8 of
// its wheel's entries, then scrubs until it is below that again: a big wheel with
// a little garbage is not read end to end for it.
TEST(Executor, ScrubWaitsForGarbageInProportionToTheWheel) {
  auto c = manual_config<HookPlatform>(1);
  c.scrub_garbage_threshold = 1;
  ASSERT_EQ(c.scrub_live_ratio, 8u);  // the default
  Manual<> m(c);
  const auto ts = schedule_far(m, 800, 400);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(m.ex.cancel(ts[static_cast<std::size_t>(i)]));
  for (int i = 0; i < 64; ++i) m.ex.run_worker_once(0);  // a full lap
  EXPECT_EQ(m.ex.stats().stale_skipped, 0u);  // 50 < 800 / 8
  for (int i = 50; i < 150; ++i) ASSERT_TRUE(m.ex.cancel(ts[static_cast<std::size_t>(i)]));
  for (int i = 0; i < 64; ++i) m.ex.run_worker_once(0);
  // 150 - r < (800 - r) / 8 first holds at r = 58 removed; a run removes what its
  // 8 buckets hold, so it may overshoot by a few, never by all of it.
  EXPECT_GE(m.ex.stats().stale_skipped, 58u);
  EXPECT_LT(m.ex.stats().stale_skipped, 150u);
  EXPECT_EQ(m.ex.stats().fired, 0u);
  m.ex.check_invariants();
}

// shutdown() abandons pending timers, reports them, and refuses later schedules.
TEST(Executor, ShutdownAbandonsPendingTimers) {
  auto m = make_manual();
  int fired = 0;
  auto a = Manual<>::Ex::make_timer([&] { ++fired; });
  auto b = Manual<>::Ex::make_timer([&] { ++fired; });
  m->ex.schedule(a, Duration::milliseconds(1));
  m->ex.schedule(b, Duration::milliseconds(50));
  m->step(2);
  EXPECT_EQ(m->ex.shutdown(), 1u);
  EXPECT_EQ(m->ex.shutdown(), 1u);
  EXPECT_EQ(fired, 1);
  EXPECT_FALSE(m->ex.cancel(b));
  EXPECT_EQ(b->state(), TimerState::kCancelled);
  const auto s = m->ex.stats();
  EXPECT_EQ(s.abandoned, 1u);
  EXPECT_EQ(s.scheduled, s.fired + s.cancelled + s.abandoned + s.pending);
  EXPECT_THROW(m->ex.schedule(a, Duration::milliseconds(1)), std::logic_error);
  m->ex.check_invariants();
}

// A negative delay is rejected with std::invalid_argument.
TEST(Executor, NegativeDelayThrows) {
  auto m = make_manual();
  auto t = Manual<>::Ex::make_timer([] {});
  EXPECT_THROW(m->ex.schedule(t, Duration::nanoseconds(-1)), std::invalid_argument);
  EXPECT_EQ(t->state(), TimerState::kIdle);
}

}  // namespace
}  // namespace tlab
