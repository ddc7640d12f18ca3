// Tests for Executor (executor.h, seed 003): firing on the metronome's tick, cancel
// from any thread with exactly one winner against the fire, reschedule, worker
// stop/restart through the merge queue, stats, shutdown, and the executor mutants.
// Manual-mode tests drive the metronome and the workers step by step (no threads);
// the threaded ones use real worker threads on virtual time, plus one real-clock
// smoke test of the metronome thread.
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

// Remote cancels are reported through the striped counter and scrubbed from far
// buckets before they come due.
TEST(Executor, ScrubRemovesRemotelyCancelledEntries) {
  auto c = manual_config<HookPlatform>(1);
  c.scrub_garbage_threshold = 1;
  Manual<> m(c);
  std::vector<Manual<>::Ex::Timer> ts;
  for (int i = 0; i < 200; ++i) {
    ts.push_back(Manual<>::Ex::make_timer([] {}));
    m.ex.schedule(ts.back(), Duration::milliseconds(1000 + i % 50));
  }
  m.step(1);  // adopt into the wheel
  for (int i = 0; i < 200; i += 2) ASSERT_TRUE(m.ex.cancel(ts[i]));
  for (int i = 0; i < 64; ++i) m.ex.run_worker_once(0);  // 8 buckets per run: a full lap
  EXPECT_EQ(m.ex.stats().stale_skipped, 100u);
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

// ---- real threads on virtual time (label tsan) ----

using ThreadedEx = Executor<ManualStdPlatform>;

template <class P = ManualStdPlatform>
typename Executor<P>::Config threaded_config(std::size_t workers) {
  typename Executor<P>::Config c;
  c.workers = workers;
  c.resolution = kRes;
  c.wheel_slots = 64;
  c.worker_threads = true;
  c.metronome_thread = false;
  c.scrub_garbage_threshold = 16;
  return c;
}

struct Tally {
  explicit Tally(std::size_t n) : fired(n), cancelled(n) {}
  std::vector<std::atomic<int>> fired;
  std::vector<std::atomic<int>> cancelled;
};

// Ticks the metronome until every arming is resolved. Gives up (returns false) once
// time is well past every deadline and nothing has resolved for 20k rounds: a lost
// timer never resolves.
template <class P>
bool drive_until_resolved(ManualClock& clock, Executor<P>& ex, std::uint64_t expected) {
  std::uint64_t last = 0;
  int idle = 0;
  for (int ticks = 0; idle < 20'000; ++ticks) {
    const auto s = ex.stats();
    const std::uint64_t resolved = s.fired + s.cancelled;
    if (s.scheduled == expected && resolved == expected) return true;
    idle = resolved == last && ticks > 200 ? idle + 1 : 0;
    last = resolved;
    clock.advance(kRes);
    ex.tick_once();
    std::this_thread::yield();
  }
  return false;
}

// Cancellers on other threads race the workers' fires: per timer exactly one of
// {fired, cancel returned true}, and the counts conserve.
TEST(ExecutorThreads, CancelRacingFireHasExactlyOneWinner) {
  constexpr int kTimers = 20'000;
  ManualClock clock;
  ThreadedEx ex(threaded_config(3), clock);
  Tally tally(kTimers);
  std::vector<ThreadedEx::Timer> ts;
  ts.reserve(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    ts.push_back(ThreadedEx::make_timer([&tally, i] { tally.fired[i].fetch_add(1); }));
  }
  std::atomic<int> armed{0};
  std::thread scheduler([&] {
    for (int i = 0; i < kTimers; ++i) {
      ex.schedule(ts[i], Duration::milliseconds(i % 20));
      armed.store(i + 1, std::memory_order::release);
    }
  });
  std::vector<std::thread> cancellers;
  for (int c = 0; c < 2; ++c) {
    cancellers.emplace_back([&, c] {
      std::mt19937 rng(c);
      for (int k = 0; k < kTimers; ++k) {
        int limit;
        while ((limit = armed.load(std::memory_order::acquire)) == 0) std::this_thread::yield();
        const int i = static_cast<int>(rng() % static_cast<unsigned>(limit));
        if (ex.cancel(ts[i])) tally.cancelled[i].fetch_add(1);
      }
    });
  }
  // Time moves with the scheduler's progress (one tick per 500 armings), so that
  // cancellers find timers pending whatever the thread interleaving.
  std::thread driver([&] {
    int ticks = 0;
    for (int a = 0; a < kTimers; a = armed.load(std::memory_order::acquire)) {
      if (ticks < a / 500) {
        clock.advance(kRes);
        ex.tick_once();
        ++ticks;
      }
      std::this_thread::yield();
    }
  });
  scheduler.join();
  for (auto& c : cancellers) c.join();
  driver.join();
  ASSERT_TRUE(drive_until_resolved(clock, ex, kTimers));
  EXPECT_EQ(ex.shutdown(), 0u);
  int fired = 0, cancelled = 0;
  for (int i = 0; i < kTimers; ++i) {
    ASSERT_EQ(tally.fired[i].load() + tally.cancelled[i].load(), 1) << "timer " << i;
    fired += tally.fired[i].load();
    cancelled += tally.cancelled[i].load();
  }
  const auto s = ex.stats();
  EXPECT_EQ(s.scheduled, static_cast<std::uint64_t>(kTimers));
  EXPECT_EQ(s.fired, static_cast<std::uint64_t>(fired));
  EXPECT_EQ(s.cancelled, static_cast<std::uint64_t>(cancelled));
  EXPECT_EQ(s.scheduled, s.fired + s.cancelled + s.pending);
  EXPECT_GT(cancelled, 0);
  EXPECT_GT(fired, 0);
}

struct ChurnOutcome {
  int lost = 0;     // neither fired nor cancelled
  int doubled = 0;  // fired twice, or fired after a successful cancel
  std::uint64_t migrated = 0;
  std::size_t abandoned = 0;
};

// Workers stop and restart repeatedly while timers are scheduled (locally through
// worker tasks and remotely) and cancelled from another thread.
template <class P>
ChurnOutcome run_churn(int kTimers) {
  using Ex = Executor<P>;
  constexpr std::size_t kWorkers = 3;
  ManualClock clock;
  Ex ex(threaded_config<P>(kWorkers), clock);
  Tally tally(kTimers);
  std::vector<typename Ex::Timer> ts;
  ts.reserve(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    ts.push_back(Ex::make_timer([&tally, i] { tally.fired[i].fetch_add(1); }));
  }
  std::atomic<int> armed{0};
  std::atomic<bool> done{false};
  std::thread scheduler([&] {
    for (int i = 0; i < kTimers; ++i) {
      // Every fourth timer goes through a worker task (local path) when one accepts.
      const Duration d = Duration::milliseconds(5 + i % 40);
      if (i % 4 != 0 || !ex.post(i % kWorkers, [&ex, &ts, &armed, i, d] {
            ex.schedule(ts[i], d);
            armed.fetch_add(1, std::memory_order::acq_rel);
          })) {
        ex.schedule(ts[i], d);
        armed.fetch_add(1, std::memory_order::acq_rel);
      }
    }
  });
  std::thread canceller([&] {
    std::mt19937 rng(7);
    for (int k = 0; k < kTimers / 2; ++k) {
      const int i = static_cast<int>(rng() % kTimers);
      if (ex.cancel(ts[i])) tally.cancelled[i].fetch_add(1);
    }
  });
  std::thread churn([&] {
    std::mt19937 rng(11);
    // Churn during the run, then 20 rounds more while timers are certainly pending
    // (time stops when the scheduler is done), so some are migrated.
    for (int extra = 0; extra < 20; extra += done.load(std::memory_order::acquire) ? 1 : 0) {
      const std::size_t w = rng() % kWorkers;
      ex.stop_worker(w);
      std::this_thread::yield();
      ex.start_worker(w);
    }
  });
  std::thread driver([&] {  // one tick per 500 armings, as above
    int ticks = 0;
    while (!done.load(std::memory_order::acquire)) {
      if (ticks < armed.load(std::memory_order::acquire) / 500) {
        clock.advance(kRes);
        ex.tick_once();
        ++ticks;
      }
      std::this_thread::yield();
    }
  });
  scheduler.join();
  canceller.join();
  // Tasks posted to a worker that stopped ran during its stop; wait for all arms.
  while (armed.load(std::memory_order::acquire) < kTimers) std::this_thread::yield();
  done.store(true, std::memory_order::release);
  churn.join();
  driver.join();
  drive_until_resolved(clock, ex, static_cast<std::uint64_t>(kTimers));
  ChurnOutcome out;
  out.abandoned = ex.shutdown();
  out.migrated = ex.stats().migrated;
  for (int i = 0; i < kTimers; ++i) {
    const int n = tally.fired[i].load() + tally.cancelled[i].load();
    out.lost += n == 0 ? 1 : 0;
    out.doubled += n > 1 ? 1 : 0;
  }
  return out;
}

// Under churn every timer is resolved exactly once (fired xor cancelled), none is
// left pending, and some were migrated between workers.
TEST(ExecutorThreads, WorkerChurnLosesNoTimer) {
  const ChurnOutcome r = run_churn<ManualStdPlatform>(20'000);
  EXPECT_EQ(r.lost, 0);
  EXPECT_EQ(r.doubled, 0);
  EXPECT_EQ(r.abandoned, 0u);
  EXPECT_GT(r.migrated, 0u);
}

// The same churn run on the drop-on-shutdown mutant loses timers.
TEST(ExecutorThreads, WorkerChurnCatchesDropOnShutdown) {
  const ChurnOutcome r =
      run_churn<testing::MutantPlatform<ManualStdPlatform, Mutant::kWorkerDropOnShutdown>>(5'000);
  EXPECT_GT(r.lost, 0);
}

// The real metronome thread on the steady clock fires every timer (bounded by a
// generous cap; nothing about timing is asserted).
TEST(ExecutorThreads, RealMetronomeFiresEveryTimer) {
  constexpr int kTimers = 2'000;
  SteadyClock clock;
  Executor<StdPlatform>::Config c;
  c.workers = 2;
  c.resolution = Duration::microseconds(200);
  Executor<StdPlatform> ex(c, clock);
  std::atomic<int> fired{0};
  std::vector<Executor<StdPlatform>::Timer> ts;
  for (int i = 0; i < kTimers; ++i) {
    ts.push_back(Executor<StdPlatform>::make_timer([&] { fired.fetch_add(1); }));
    ex.schedule(ts.back(), Duration::microseconds(i % 2000));
  }
  const auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (fired.load() < kTimers && std::chrono::steady_clock::now() < cap) {
    std::this_thread::yield();
  }
  EXPECT_EQ(fired.load(), kTimers);
  EXPECT_EQ(ex.shutdown(), 0u);
  EXPECT_EQ(ex.stats().fired, static_cast<std::uint64_t>(kTimers));
}

}  // namespace
}  // namespace tlab
