// tests/property/time_arithmetic_property_test.cc: every time-arithmetic site of
// core/ against exact 128-bit arithmetic, over the whole int64 range.
//
// tlab's Instant and Duration are int64 nanoseconds and every sum saturates
// (clock.h). A site that does a plain add instead compiles, passes every test
// whose values stay near zero, and turns a huge delay or period into a deadline
// in the past: the timer fires at once, a periodic task runs back to back. These
// properties feed each kind of site values from the whole int64 range, a third
// of them on or next to a limit (INT64_MIN, INT64_MAX, +/-1, +/-tick, max - period
// ...), and compare with a model in __int128 clamped to the int64 range, which
// shares no code with clock.h:
//
//   | kind of site         | where (core/)                          | mutant                  |
//   |----------------------|----------------------------------------|-------------------------|
//   | Instant/Duration ops | clock.h sat_add/sub/mul                | none (hand-checked)     |
//   | delay to deadline    | clock.h deadline_after, called by      | delay_overflow_wraps    |
//   |                      | TimerService, Waiter (lock_for,        |                         |
//   |                      | acquire_for, ...), TimedWaitGroup,     |                         |
//   |                      | Executor, sleep_for,                   |                         |
//   |                      | with_timeout                           |                         |
//   | deadline plus period | timer_service.h fixed-delay next       | timer_fixed_delay_wraps |
//   | fixed-rate catch-up  | timer_service.h fixed-rate next        | timer_fixed_rate_wraps  |
//   | lateness             | timer_service.h run_locked (late_max)  | timer_lateness_wraps    |
//   | tick conversion      | queue/tick_grid.h due_tick (wheels and | tick_conversion_wraps   |
//   |                      | the Executor)                          |                         |
//
// Engines: TimerService in driver mode (run_due on a ManualClock: nothing sleeps)
// on every queue strategy (QueueTypes, tick 1 ns so wheels are exact), Waiter and
// TimedMutex::lock_for and TimedWaitGroup::wait_for on a ManualTimerSource, the Executor (manual
// metronome and worker), sleep_for and with_timeout on an EventLoop, and TickGrid directly. A wheel
// never fires a deadline more than TickGrid::kLastTick ticks after its start (tick_grid.h); the
// models say so. Periodic tasks get periods next to Duration::max(); a callback cancels its own
// task after kRunCap runs, so a wrapped (past) next deadline shows up as extra runs instead of an
// endless catch-up loop.
//
// A periodic series saturated at Instant::max() ends with its run there
// (timer_service.h), so run_due(Instant::max()) returns; timer_service_periodic_test.cc
// shows it on every strategy.
//
// This file holds clock.h, the sync primitives, the Executor and the coroutines;
// TimerService on every strategy is in time_arithmetic_service_property_test.cc, and
// what both share in time_arithmetic_support.h.
//
// The mutant tests run the same properties on a platform with one mutant compiled
// in and expect a counterexample (as queue_property_test.cc does); they live in
// suites named *Mutant* and record the mutant's name, which is how `tlab mutants`
// (layer property) counts them. Set RC_PARAMS="seed=N" to replay.
#include "time_arithmetic_support.h"

namespace tlab::time_arith {
namespace {

// ---- Properties ------------------------------------------------------------------

// Instant/Duration operators equal the clamped exact result; adding a
// non-negative span never moves an instant back.
void saturating_operators() {
  const I64 a = gen_any(), b = gen_any();
  const I64 k = *rc::gen::arbitrary<bool>() ? gen_in(-1'000'000'000, 1'000'000'000) : gen_any();
  const Instant ta = Instant::from_ns(a), tb = Instant::from_ns(b);
  const Duration da = Duration::nanoseconds(a), db = Duration::nanoseconds(b);
  RC_ASSERT((ta + db).ns() == clamp(i128{a} + b));
  RC_ASSERT((ta - db).ns() == clamp(i128{a} - b));
  RC_ASSERT((ta - tb).ns() == clamp(i128{a} - b));
  RC_ASSERT((da + db).ns() == clamp(i128{a} + b));
  RC_ASSERT((da - db).ns() == clamp(i128{a} - b));
  RC_ASSERT((-da).ns() == clamp(-i128{a}));
  RC_ASSERT((da * k).ns() == clamp(i128{a} * k));
  Duration acc = da;
  acc += db;
  RC_ASSERT(acc.ns() == clamp(i128{a} + b));
  acc = da;
  acc -= db;
  RC_ASSERT(acc.ns() == clamp(i128{a} - b));
  if (b >= 0) {
    RC_ASSERT(ta + db >= ta);
    RC_ASSERT(ta - db <= ta);
  }
  RC_ASSERT(((ta - tb) >= Duration::zero()) == (ta >= tb));
}

// deadline_after<P>: now + d clamped, never before now.
template <class P>
void delay_to_deadline() {
  const Instant now = Instant::from_ns(gen_any());
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  const Instant dl = deadline_after<P>(now, d);
  RC_ASSERT(dl.ns() == clamp(i128{now.ns()} + d.ns()));
  RC_ASSERT(dl >= now);
}

// Waiter::timeout, the lock_for/acquire_for/checkout_for path: the armed deadline
// is now + d clamped; only a deadline equal to now (d == 0, or now == max) expires
// at arming time.
template <class P>
void waiter_delay_to_deadline() {
  const Instant now = Instant::from_ns(gen_any());
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  testing::ManualTimerSource src(now);
  src.set_fire_inline_when_due(true);  // a due arming expires inside schedule_at
  Waiter<P> w;
  std::optional<Instant> armed;
  const TimeoutResult r = w.timeout(src, d, [&](typename Waiter<P>::Token t) {
    armed = src.next_deadline();
    w.cancel(t);
  });
  const I64 deadline = clamp(i128{now.ns()} + d.ns());
  if (deadline == now.ns()) {  // d == 0, or now is Instant::max(): due at arming
    RC_ASSERT(r == TimeoutResult::kExpired);
    return;
  }
  RC_ASSERT(r == TimeoutResult::kCanceled);
  RC_ASSERT(armed.has_value());
  RC_ASSERT(armed->ns() == deadline);
}

// TimedMutex::lock_for(d) on a held mutex: unless now + d (clamped) is now, the
// waiter parks until the owner unlocks and gets the lock; otherwise it gives up. (The timer fires
// inline when due, so a deadline in the past would make lock_for fail without parking.)
template <class P>
void lock_for_delay_to_deadline() {
  const Instant now = Instant::from_ns(gen_any());
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  testing::ManualTimerSource src(now);
  src.set_fire_inline_when_due(true);
  TimedMutex<P> m;
  RC_ASSERT(m.try_lock());
  std::atomic<int> result{-1};
  std::thread waiter([&] { result.store(m.lock_for(src, d) ? 1 : 0); });
  while (result.load() < 0 && src.pending() == 0) std::this_thread::yield();
  const bool parked = result.load() < 0;
  if (parked) m.unlock();  // hands the lock to the parked waiter
  waiter.join();
  if (result.load() == 1) m.unlock();
  if (!parked) m.unlock();
  const bool due_at_once = clamp(i128{now.ns()} + d.ns()) == now.ns();  // d == 0 or now == max
  RC_ASSERT(result.load() == (due_at_once ? 0 : 1));
}

// TimedWaitGroup::wait_for(d) on a group with one member left: unless now + d
// (clamped) is now, the waiter waits for done() and returns true; otherwise the
// timeout completes the group at once and it returns false.
template <class P>
void wait_group_delay_to_deadline() {
  const Instant now = Instant::from_ns(gen_any());
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  testing::ManualTimerSource src(now);
  src.set_fire_inline_when_due(true);
  TimedWaitGroup<P> g;
  g.add(1);
  std::atomic<int> result{-1};
  std::thread waiter([&] { result.store(g.wait_for(src, d) ? 1 : 0); });
  while (result.load() < 0 && src.pending() == 0) std::this_thread::yield();
  if (result.load() < 0) g.done();
  waiter.join();
  const bool due_at_once = clamp(i128{now.ns()} + d.ns()) == now.ns();
  RC_ASSERT(result.load() == (due_at_once ? 0 : 1));
}

// Executor::schedule(timer, d), or schedule_at(timer, any instant) (resolution
// 1 ns, one manual worker): the timer fires on the first tick at or after its
// deadline (now + d clamped), never before; past the grid's kLastTick, never.
template <class P>
void executor_deadline() {
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const bool by_delay = *rc::gen::arbitrary<bool>();
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  const I64 due = by_delay ? clamp(i128{start.ns()} + d.ns()) : gen_any();
  ManualClock clock(start);
  typename Executor<P>::Config c;
  c.workers = 1;
  c.resolution = Duration::nanoseconds(1);
  c.wheel_slots = 8;
  c.worker_threads = false;
  c.metronome_thread = false;
  Executor<P> ex(c, clock);
  int fired = 0;
  const auto timer = Executor<P>::make_timer([&] { ++fired; });
  if (by_delay) {
    ex.schedule(timer, d);
  } else {
    ex.schedule_at(timer, Instant::from_ns(due));
  }
  const auto step = [&](I64 t) {
    clock.set(Instant::from_ns(t));
    ex.tick_once();
    ex.run_worker_once(0);
  };
  step(start.ns());
  RC_ASSERT(fired == (due <= start.ns() ? 1 : 0));
  if (due <= start.ns()) return;
  step(due - 1);
  RC_ASSERT(fired == 0);
  if (due == kMax) return;
  step(due);
  RC_ASSERT(fired == (i128{due} - start.ns() <= TickGrid::kLastTick ? 1 : 0));
}

// sleep_for(loop, d) and with_timeout(loop, event, d) on an EventLoop: the sleeper
// wakes, or the timeout wins, at exactly now + d clamped, not before.
template <class P>
void coro_delay_to_deadline(bool via_timeout) {
  using Loop = EventLoop<BinaryHeapQueue, P>;
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  const I64 due = clamp(i128{start.ns()} + d.ns());
  ManualClock clock(start);
  Loop loop(clock);
  Event<int, Loop> ev(loop);
  bool woke = false;
  if (via_timeout) {
    loop.spawn([](Loop& l, Event<int, Loop>& e, Duration dd, bool& w) -> Task<void> {
      Timed<int> r = co_await with_timeout(l, e, dd);
      w = r.timed_out();
    }(loop, ev, d, woke));
  } else {
    loop.spawn([](Loop& l, Duration dd, bool& w) -> Task<void> {
      co_await sleep_for(l, dd);
      w = true;
    }(loop, d, woke));
  }
  const auto run_to = [&](I64 t) {
    clock.set(Instant::from_ns(t));
    loop.run_until_idle();
  };
  loop.run_until_idle();
  const bool at_once = woke;
  bool early = false, on_time = true;
  if (due != start.ns()) {
    run_to(due - 1);
    early = woke;
    if (due != kMax) {
      run_to(due);
      on_time = woke;
    }
  }
  ev.set(0);  // ends a race still pending; a set after the timeout just stores
  loop.run_until_idle();
  RC_ASSERT(at_once == (due == start.ns()));
  RC_ASSERT(!early);
  RC_ASSERT(on_time);
}

// BasicTickGrid<P>: due_tick = ceil((d - start) / tick) on the clamped difference
// (kNeverTick when it saturates high or passes kLastTick), monotone in d;
// elapsed_tick = floor((now - start) / tick) capped at kLastTick for now >= start,
// so it never reaches kNeverTick; instant_of(due_tick(d)) is never before d, and
// exact where no product saturates; an entry fires (due <= elapsed) only if its
// deadline has come.
template <class P>
void tick_conversion() {
  const Instant start = Instant::from_ns(gen_any());
  const I64 tick = *rc::gen::inRange(0, 3) == 0 ? gen_in(1, kMax) : gen_in(1, 1'000'000);
  const BasicTickGrid<P> g(start, Duration::nanoseconds(tick));
  const auto exact_ceil = [&](I64 x) {
    const i128 q = i128{x} / tick;
    return static_cast<I64>(q * tick < x ? q + 1 : q);
  };
  const auto exact_floor = [&](I64 x) {
    const i128 q = i128{x} / tick;
    return static_cast<I64>(q * tick > x ? q - 1 : q);
  };
  I64 d1 = gen_any(), d2 = gen_any();
  if (d1 > d2) std::swap(d1, d2);
  for (const I64 d : {d1, d2}) {
    const I64 diff = clamp(i128{d} - start.ns());
    const I64 k = g.due_tick(Instant::from_ns(d));
    const bool beyond = diff == kMax || exact_ceil(diff) > TickGrid::kLastTick;
    RC_ASSERT(k == (beyond ? TickGrid::kNeverTick : exact_ceil(diff)));
    const Instant due = g.instant_of(k);
    RC_ASSERT(due.ns() >= d);
    const i128 exact_due = i128{start.ns()} + i128{tick} * k;
    if (k != TickGrid::kNeverTick && i128{tick} * k <= kMax && i128{tick} * k >= kMin) {
      RC_ASSERT(due.ns() == clamp(exact_due));
    }
  }
  RC_ASSERT(g.due_tick(Instant::from_ns(d1)) <= g.due_tick(Instant::from_ns(d2)));
  const Instant now = Instant::from_ns(gen_in(start.ns(), kMax));
  const I64 elapsed = g.elapsed_tick(now);
  RC_ASSERT(elapsed ==
            std::min(exact_floor(clamp(i128{now.ns()} - start.ns())), TickGrid::kLastTick));
  for (const I64 d : {d1, d2}) {
    if (g.due_tick(Instant::from_ns(d)) <= elapsed) RC_ASSERT(d <= now.ns());
  }
}


// ---- Tests -----------------------------------------------------------------------

TEST(TimeArithmeticPropertyTest, SaturatingOperatorsMatchClampedExactArithmetic) {
  expect_holds(
      "Instant/Duration operators", [] { saturating_operators(); }, 1000);
}

TEST(TimeArithmeticPropertyTest, DeadlineAfterNeverWrapsIntoThePast) {
  expect_holds(
      "deadline_after", [] { delay_to_deadline<ManualStdPlatform>(); }, 1000);
}

TEST(TimeArithmeticPropertyTest, TickConversionIsExactMonotoneAndNeverEarly) {
  expect_holds(
      "TickGrid", [] { tick_conversion<ManualStdPlatform>(); }, 1000);
}

TEST(TimeArithmeticPropertyTest, WaiterArmsAtTheClampedDeadline) {
  expect_holds("Waiter::timeout", [] { waiter_delay_to_deadline<ManualStdPlatform>(); });
}

TEST(TimeArithmeticPropertyTest, LockForWithAHugeTimeoutWaitsForTheOwner) {
  expect_holds(
      "TimedMutex::lock_for", [] { lock_for_delay_to_deadline<ManualStdPlatform>(); }, 100);
}

TEST(TimeArithmeticPropertyTest, WaitGroupWithAHugeTimeoutWaitsForDone) {
  expect_holds(
      "TimedWaitGroup::wait_for", [] { wait_group_delay_to_deadline<ManualStdPlatform>(); }, 100);
}

TEST(TimeArithmeticPropertyTest, ExecutorFiresAtTheClampedDeadline) {
  expect_holds("Executor::schedule", [] { executor_deadline<ManualStdPlatform>(); });
}

TEST(TimeArithmeticPropertyTest, SleepForWakesAtTheClampedDeadline) {
  expect_holds("sleep_for", [] { coro_delay_to_deadline<ManualStdPlatform>(false); });
}

TEST(TimeArithmeticPropertyTest, WithTimeoutExpiresAtTheClampedDeadline) {
  expect_holds("with_timeout", [] { coro_delay_to_deadline<ManualStdPlatform>(true); });
}

// ---- Mutants: each kind of site, made to wrap, is caught ---------------------------

// delay_overflow_wraps: deadline_after wraps, so a huge delay lands in the past.
TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInDeadlineAfter) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, "deadline_after",
                        [] { delay_to_deadline<B>(); });
}

// delay_overflow_wraps through Waiter::timeout (TimedMutex::lock_for's arming).
TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInWaiter) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, "Waiter::timeout",
                        [] { waiter_delay_to_deadline<B>(); });
}

// delay_overflow_wraps through lock_for: the timeout fires at once, no wait.
TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInLockFor) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(
      Mutant::kDelayOverflowWraps, "TimedMutex::lock_for", [] { lock_for_delay_to_deadline<B>(); },
      100);
}

// tick_conversion_wraps: a deadline far from start gets a tick in the past.
TEST(TimeArithmeticPropertyMutantTest, FindsTickConversionWrapsInTickGrid) {
  using B = MP<Mutant::kTickConversionWraps>;
  expect_counterexample(
      Mutant::kTickConversionWraps, "TickGrid", [] { tick_conversion<B>(); }, 1000);
}

// delay_overflow_wraps through TimedWaitGroup::wait_for: the group times out at once.
TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInWaitGroup) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(
      Mutant::kDelayOverflowWraps, "TimedWaitGroup::wait_for",
      [] { wait_group_delay_to_deadline<B>(); }, 100);
}

// delay_overflow_wraps through Executor::schedule.
TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInExecutor) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, "Executor::schedule",
                        [] { executor_deadline<B>(); });
}

// tick_conversion_wraps in the Executor's grid and its workers' wheels.
TEST(TimeArithmeticPropertyMutantTest, FindsTickConversionWrapsInExecutor) {
  using B = MP<Mutant::kTickConversionWraps>;
  expect_counterexample(Mutant::kTickConversionWraps, "Executor::schedule",
                        [] { executor_deadline<B>(); });
}

// delay_overflow_wraps through sleep_for and with_timeout.
TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInSleepFor) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, "sleep_for",
                        [] { coro_delay_to_deadline<B>(false); });
}

TEST(TimeArithmeticPropertyMutantTest, FindsDelayOverflowWrapsInWithTimeout) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, "with_timeout",
                        [] { coro_delay_to_deadline<B>(true); });
}

}  // namespace
}  // namespace tlab::time_arith
