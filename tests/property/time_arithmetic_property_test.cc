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
// Instants stay below Instant::max() wherever time is advanced: at now ==
// Instant::max() a periodic task saturated at Instant::max() is due forever on the
// exact strategies, and run_due would never return (left to the lead: see the
// report of branch `overflow`).
//
// The mutant tests run the same properties on a platform with one mutant compiled
// in and expect a counterexample (as queue_property_test.cc does); they live in
// suites named *Mutant* and record the mutant's name, which is how `tlab mutants`
// (layer property) counts them. Set RC_PARAMS="seed=N" to replay.
#include <gtest/gtest.h>

#include <rapidcheck.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "support/manual_timer_source.h"
#include "support/mutant_platform.h"
#include "tlab/clock.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/sleep_for.h"
#include "tlab/coro/with_timeout.h"
#include "tlab/executor.h"
#include "tlab/queue/strategy.h"
#include "tlab/queue/tick_grid.h"
#include "tlab/sync/timed_mutex.h"
#include "tlab/sync/timed_wait_group.h"
#include "tlab/timer_service.h"
#include "tlab/waiter.h"

namespace tlab {
namespace {

using I64 = std::int64_t;
__extension__ typedef __int128 i128;  // exact model arithmetic, no saturation

constexpr I64 kMax = std::numeric_limits<I64>::max();
constexpr I64 kMin = std::numeric_limits<I64>::min();

// The exact value clamped to int64: what every saturating site must return.
I64 clamp(i128 v) {
  if (v > kMax) return kMax;
  if (v < kMin) return kMin;
  return static_cast<I64>(v);
}

// ---- Generators --------------------------------------------------------------

// A uniform uint64 (rapidcheck scales integer ranges by size; size 100 is the
// whole range).
std::uint64_t any_u64() {
  return *rc::gen::resize(
      100, rc::gen::inRange<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()));
}

// A value in [lo, hi]: a third of the time one of the values on or next to a
// limit (of the range or of int64) or to zero, a sixth near either end, the
// rest uniform over the range.
I64 gen_in(I64 lo, I64 hi) {
  const int kind = *rc::gen::inRange(0, 6);
  if (kind <= 1) {
    const std::vector<i128> edges{kMin,
                                  i128{kMin} + 1,
                                  i128{kMin} + 2,
                                  -1,
                                  0,
                                  1,
                                  i128{kMax} - 2,
                                  i128{kMax} - 1,
                                  kMax,
                                  i128{kMax} / 2,
                                  i128{kMax} / 2 + 1,
                                  lo,
                                  i128{lo} + 1,
                                  hi,
                                  i128{hi} - 1};
    const i128 e = edges[*rc::gen::inRange<std::size_t>(0, edges.size())];
    return static_cast<I64>(std::clamp<i128>(e, lo, hi));
  }
  if (kind == 2) {
    const i128 off = *rc::gen::inRange<I64>(0, 2'000'000);
    return static_cast<I64>(*rc::gen::arbitrary<bool>() ? std::min<i128>(i128{lo} + off, hi)
                                                        : std::max<i128>(i128{hi} - off, lo));
  }
  const std::uint64_t width = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const std::uint64_t u = any_u64();
  const std::uint64_t r = width == std::numeric_limits<std::uint64_t>::max() ? u : u % (width + 1);
  return static_cast<I64>(static_cast<std::uint64_t>(lo) + r);
}
I64 gen_any() { return gen_in(kMin, kMax); }

// A period: positive, most often next to Duration::max() (the periods nothing
// drove before), sometimes small.
I64 gen_period() {
  if (*rc::gen::inRange(0, 3) == 0) return gen_in(1, 1'000'000);
  return gen_in(1, kMax);
}

// ---- Running a property ---------------------------------------------------------

// Runs `prop` (RC_ASSERTs inside) with bounded effort and prints rapidcheck's
// report (on failure: the seed and the shrunk counterexample).
template <class F>
rc::detail::TestResult run_property(const std::string& what, F prop, int runs = 300) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;  // RC_PARAMS seed
  params.maxSuccess = runs;
  const rc::detail::TestResult result =
      rc::detail::checkTestable(std::move(prop), rc::detail::TestMetadata{what, what}, params);
  std::cerr << "- " << what << ": ";
  rc::detail::printResultMessage(result, std::cerr);
  std::cerr << std::endl;
  return result;
}

template <class F>
void expect_holds(const std::string& what, F prop, int runs = 300) {
  EXPECT_TRUE(run_property(what, std::move(prop), runs).template is<rc::detail::SuccessResult>());
}

// The recorded property names the mutant in --gtest_output: `tlab mutants` maps
// the test to it (tool/mutants_cmd.cc).
template <class F>
void expect_counterexample(Mutant m, const std::string& what, F prop, int runs = 300) {
  ::testing::Test::RecordProperty("mutant", std::string(name_of(m)));
  const auto result =
      run_property(what + " with mutant " + std::string(name_of(m)), std::move(prop), runs);
  EXPECT_TRUE(result.template is<rc::detail::FailureResult>())
      << "rapidcheck found no counterexample for mutant " << name_of(m);
}

template <Mutant M>
using MP = testing::MutantPlatform<ManualStdPlatform, M>;

// Q<T0, P0> -> Q<T, P>: one typed suite over QueueTypes serves every platform.
template <class Q, class T, class P>
struct Rebind;
template <template <class, class> class Q, class T0, class P0, class T, class P>
struct Rebind<Q<T0, P0>, T, P> {
  using type = Q<T, P>;
};

template <class Q, class P>
using ServiceOn = TimerService<typename Rebind<Q, TimerTaskPtr<P>, P>::type, P>;

// Whether Q counts ticks on a TickGrid (the wheels): then a deadline past the
// grid's kLastTick never fires (tick_grid.h).
template <class Q>
inline constexpr bool kOnGrid = false;
template <class T, class P>
inline constexpr bool kOnGrid<HashedWheelQueue<T, P>> = true;
template <class T, class P>
inline constexpr bool kOnGrid<HierarchicalWheelQueue<T, P>> = true;
template <class T, class P>
inline constexpr bool kOnGrid<PerWorkerWheelQueue<T, P>> = true;

// A driver-mode service on a ManualClock that starts at `start`. Tick 1 ns: the
// wheels' due instants are the deadlines themselves, so one model fits all, except
// that on a wheel a deadline more than kLastTick ns after start never fires.
template <class Q, class P>
struct Driven {
  ManualClock clock;
  ServiceOn<Q, P> svc;
  I64 start_ns;
  explicit Driven(Instant start) : clock(start), svc(clock, options()), start_ns(start.ns()) {}
  static TimerServiceOptions options() {
    TimerServiceOptions o;
    o.start_thread = false;
    o.queue.tick = Duration::nanoseconds(1);
    o.queue.wheel_slots = 8;  // revolutions and rounds at every jump
    return o;
  }
  // Whether an entry at `deadline` fires once now reaches it.
  bool reachable(I64 deadline) const {
    return !kOnGrid<Q> || i128{deadline} - start_ns <= TickGrid::kLastTick;
  }
  std::size_t run_to(Instant t) {
    clock.set(t);
    return svc.run_due(t);
  }
};

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

// TimerService::schedule(task, d) on strategy Q: the task runs at exactly
// now + d (clamped), not a nanosecond earlier; a saturated one never before
// Instant::max().
template <class Q, class P>
void service_delay_to_deadline() {
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  const I64 due = clamp(i128{start.ns()} + d.ns());
  Driven<Q, P> s(start);
  int runs = 0;
  s.svc.schedule(TimerTask<P>::make([&] { ++runs; }), d);
  s.svc.run_due(start);
  RC_ASSERT(runs == (due == start.ns() ? 1 : 0));
  if (due == start.ns()) return;
  s.run_to(Instant::from_ns(due - 1));
  RC_ASSERT(runs == 0);
  if (due == kMax) return;  // Instant::max() is never reached (file comment)
  s.run_to(Instant::from_ns(due));
  RC_ASSERT(runs == (s.reachable(due) ? 1 : 0));
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

// Drives a fixed-delay or fixed-rate task with a period next to Duration::max()
// through a few time jumps and compares every run's deadline, and late_max, with
// the model: fixed-rate next = deadline + period, fixed-delay next = the pass's
// now + period, both clamped. Each pass runs exactly the runs whose deadline has
// come, in order, never earlier than the previous one.
template <class Q, class P>
void periodic(TaskKind kind) {
  constexpr std::size_t kRunCap = 64;
  const bool rate = kind == TaskKind::kFixedRate;
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Duration delay = Duration::nanoseconds(gen_in(0, kMax));
  const Duration period = Duration::nanoseconds(gen_period());
  Driven<Q, P> s(start);
  std::vector<Instant> runs;
  TimerTaskPtr<P> task;
  task = TimerTask<P>::make([&] {
    runs.push_back(task->scheduled_time());
    if (runs.size() >= kRunCap) s.svc.cancel(task);
  });
  if (rate) {
    s.svc.schedule_at_fixed_rate(task, delay, period);
  } else {
    s.svc.schedule_fixed_delay(task, delay, period);
  }
  std::vector<Instant> expected;
  I64 next = clamp(i128{start.ns()} + delay.ns());
  I64 late_max = 0;
  Instant now = start;
  const int passes = *rc::gen::inRange(1, 5);
  for (int i = 0; i < passes && expected.size() < kRunCap; ++i) {
    // Next stop: the model's next deadline, one before it, or anywhere ahead.
    i128 to;
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        to = next;
        break;
      case 1:
        to = i128{next} - 1;
        break;
      default:
        to = gen_in(now.ns(), kMax - 1);
        break;
    }
    to = std::clamp<i128>(to, now.ns(), kMax - 1);
    now = Instant::from_ns(static_cast<I64>(to));
    while (next <= to && s.reachable(next) && expected.size() < kRunCap) {
      expected.push_back(Instant::from_ns(next));
      late_max = std::max(late_max, clamp(to - next));
      next = clamp((rate ? i128{next} : to) + period.ns());
    }
    s.run_to(now);
    RC_ASSERT(runs == expected);
  }
  for (std::size_t i = 1; i < runs.size(); ++i) RC_ASSERT(runs[i - 1] <= runs[i]);
  RC_ASSERT(s.svc.stats().late_max.ns() == late_max);
  s.svc.cancel(task);
  task.reset();
}

// A one-shot task at any instant, run at a later now: it runs iff its deadline
// has come, and late_max is now - deadline clamped (never a wrapped negative).
template <class Q, class P>
void lateness() {
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Instant deadline = Instant::from_ns(gen_any());
  const Instant now = Instant::from_ns(gen_in(start.ns(), kMax - 1));
  Driven<Q, P> s(start);
  int runs = 0;
  s.svc.schedule_at(TimerTask<P>::make([&] { ++runs; }), deadline);
  s.run_to(now);
  const bool fires = deadline <= now && s.reachable(deadline.ns());
  RC_ASSERT(runs == (fires ? 1 : 0));
  const I64 late = fires ? clamp(i128{now.ns()} - deadline.ns()) : 0;
  RC_ASSERT(s.svc.stats().late_max.ns() == late);
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

template <class Q>
class TimeArithmeticServiceTest : public ::testing::Test {};
using AllQueues = QueueTypes<int, ManualStdPlatform, ::testing::Types>;
TYPED_TEST_SUITE(TimeArithmeticServiceTest, AllQueues);

TYPED_TEST(TimeArithmeticServiceTest, ScheduleRunsAtTheClampedDeadline) {
  expect_holds(std::string(TypeParam::kName) + " schedule",
               [] { service_delay_to_deadline<TypeParam, ManualStdPlatform>(); });
}

TYPED_TEST(TimeArithmeticServiceTest, FixedDelayNextDeadlineSaturates) {
  expect_holds(std::string(TypeParam::kName) + " fixed delay",
               [] { periodic<TypeParam, ManualStdPlatform>(TaskKind::kFixedDelay); });
}

TYPED_TEST(TimeArithmeticServiceTest, FixedRateCatchUpSaturates) {
  expect_holds(std::string(TypeParam::kName) + " fixed rate",
               [] { periodic<TypeParam, ManualStdPlatform>(TaskKind::kFixedRate); });
}

TYPED_TEST(TimeArithmeticServiceTest, LatenessSaturates) {
  expect_holds(std::string(TypeParam::kName) + " lateness",
               [] { lateness<TypeParam, ManualStdPlatform>(); });
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

template <class Q>
class TimeArithmeticServiceMutantTest : public ::testing::Test {};
TYPED_TEST_SUITE(TimeArithmeticServiceMutantTest, AllQueues);

// delay_overflow_wraps through TimerService::schedule: the task runs at once.
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsDelayOverflowWraps) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, std::string(TypeParam::kName) + " schedule",
                        [] { service_delay_to_deadline<TypeParam, B>(); });
}

// timer_fixed_delay_wraps: run time + huge period lands in the past: extra runs.
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsFixedDelayWraps) {
  using B = MP<Mutant::kTimerFixedDelayWraps>;
  expect_counterexample(Mutant::kTimerFixedDelayWraps,
                        std::string(TypeParam::kName) + " fixed delay",
                        [] { periodic<TypeParam, B>(TaskKind::kFixedDelay); });
}

// timer_fixed_rate_wraps: deadline + huge period lands in the past: the catch-up
// never ends (the run cap cuts it).
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsFixedRateWraps) {
  using B = MP<Mutant::kTimerFixedRateWraps>;
  expect_counterexample(Mutant::kTimerFixedRateWraps, std::string(TypeParam::kName) + " fixed rate",
                        [] { periodic<TypeParam, B>(TaskKind::kFixedRate); });
}

// timer_lateness_wraps: an ancient deadline's lateness wraps negative.
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsLatenessWraps) {
  using B = MP<Mutant::kTimerLatenessWraps>;
  expect_counterexample(Mutant::kTimerLatenessWraps, std::string(TypeParam::kName) + " lateness",
                        [] { lateness<TypeParam, B>(); });
}

// tick_conversion_wraps in the wheels (the exact strategies have no grid): a
// deadline Instant::max() from a start below zero fires at once.
template <class Q>
class TimeArithmeticWheelMutantTest : public ::testing::Test {};
using Wheels = ::testing::Types<HashedWheelQueue<int, ManualStdPlatform>,
                                HierarchicalWheelQueue<int, ManualStdPlatform>,
                                PerWorkerWheelQueue<int, ManualStdPlatform>>;
TYPED_TEST_SUITE(TimeArithmeticWheelMutantTest, Wheels);

TYPED_TEST(TimeArithmeticWheelMutantTest, FindsTickConversionWraps) {
  using B = MP<Mutant::kTickConversionWraps>;
  expect_counterexample(Mutant::kTickConversionWraps, std::string(TypeParam::kName) + " lateness",
                        [] { lateness<TypeParam, B>(); });
}

}  // namespace
}  // namespace tlab
