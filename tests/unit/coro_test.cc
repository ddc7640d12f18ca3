// Tests for the coroutine loop (coro/): Task, EventLoop, sleep_for, Event and
// with_timeout, typed over every timer-queue strategy on a ManualClock. Nothing
// here sleeps or starts a thread; cross-thread races are in coro_threads_test.cc.
//
// Leaks are checked with counters: FrameProbe counts live coroutine frames (each
// test coroutine holds one as a local, so it dies exactly when its frame does),
// and the loop reports pending timers, live root tasks and races in flight.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/coro_loops.h"
#include "support/mutant_platform.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/sleep_for.h"
#include "tlab/coro/task.h"
#include "tlab/coro/with_timeout.h"
#include "tlab/platform/std_platform.h"

namespace tlab {
namespace {

Duration ms(std::int64_t n) { return Duration::milliseconds(n); }
Instant at_ms(std::int64_t n) { return Instant::from_ns(0) + ms(n); }

// Live coroutine frames: one probe per test coroutine, as its first local.
struct FrameProbe {
  static inline long live = 0;
  FrameProbe() { ++live; }
  ~FrameProbe() { --live; }
  FrameProbe(const FrameProbe&) = delete;
  FrameProbe& operator=(const FrameProbe&) = delete;
};

template <class Tag>
class CoroTest : public ::testing::Test {
 protected:
  using Loop = typename Tag::template Loop<ManualStdPlatform>;

  void SetUp() override { FrameProbe::live = 0; }
  // Every test ends with nothing left behind, in the loop or in memory.
  void TearDown() override {
    loop_.check_invariants();
    EXPECT_EQ(loop_.live_tasks(), 0u);
    EXPECT_EQ(loop_.pending_timers(), 0u);
    EXPECT_EQ(loop_.races_in_flight(), 0u);
    EXPECT_EQ(FrameProbe::live, 0);
  }

  // Runs the loop to idle, then moves the manual clock in 1 ms steps, running the
  // loop to idle after each.
  void advance_ms(std::int64_t n) {
    loop_.run_until_idle();
    for (std::int64_t i = 0; i < n; ++i) {
      clock_.advance(ms(1));
      loop_.run_until_idle();
    }
  }

  ManualClock clock_;
  Loop loop_{clock_};
};

TYPED_TEST_SUITE(CoroTest, testing::CoroLoopStrategies, testing::CoroLoopName);

// A spawned task does not start until the loop runs, then runs to completion.
TYPED_TEST(CoroTest, SpawnIsLazyAndRunsToCompletion) {
  int steps = 0;
  this->loop_.spawn([](int& s) -> Task<void> {
    FrameProbe probe;
    ++s;
    co_return;
  }(steps));
  EXPECT_EQ(steps, 0);
  EXPECT_EQ(this->loop_.live_tasks(), 1u);
  this->loop_.run_until_idle();
  EXPECT_EQ(steps, 1);
}

// Sleepers wake in deadline order, each in the first pass at or after its deadline.
TYPED_TEST(CoroTest, SleepsWakeInDeadlineOrderNeverEarly) {
  using Loop = typename TestFixture::Loop;
  std::vector<std::pair<int, Instant>> woke;
  for (int d : {30, 10, 50, 20, 40}) {
    this->loop_.spawn([](Loop& loop, int d, auto& out) -> Task<void> {
      FrameProbe probe;
      co_await sleep_for(loop, ms(d));
      out.emplace_back(d, loop.now());
    }(this->loop_, d, woke));
  }
  this->loop_.run_until_idle();
  EXPECT_EQ(this->loop_.pending_timers(), 5u);
  this->advance_ms(9);
  EXPECT_TRUE(woke.empty());
  this->advance_ms(1);
  ASSERT_EQ(woke.size(), 1u);
  this->advance_ms(40);
  ASSERT_EQ(woke.size(), 5u);
  for (std::size_t i = 0; i < woke.size(); ++i) {
    const int d = static_cast<int>(10 * (i + 1));
    EXPECT_EQ(woke[i].first, d);
    EXPECT_EQ(woke[i].second, at_ms(d)) << "woke late or early";
  }
}

// sleep_until an instant in the past resumes in the next pass.
TYPED_TEST(CoroTest, SleepUntilPastResumesNextPass) {
  using Loop = typename TestFixture::Loop;
  this->clock_.advance(ms(5));
  bool done = false;
  this->loop_.spawn([](Loop& loop, bool& d) -> Task<void> {
    FrameProbe probe;
    co_await sleep_until(loop, at_ms(1));
    d = true;
  }(this->loop_, done));
  this->loop_.run_until_idle();
  EXPECT_TRUE(done);
}

// A zero sleep suspends and goes through the queue: two zero-sleepers interleave.
TYPED_TEST(CoroTest, ZeroSleepIsAFairYield) {
  using Loop = typename TestFixture::Loop;
  std::string trace;
  auto body = [](Loop& loop, char name, std::string& t) -> Task<void> {
    FrameProbe probe;
    for (int i = 0; i < 3; ++i) {
      t += name;
      co_await sleep_for(loop, Duration::zero());
    }
  };
  this->loop_.spawn(body(this->loop_, 'a', trace));
  this->loop_.spawn(body(this->loop_, 'b', trace));
  this->loop_.run_once();
  EXPECT_EQ(trace, "ab");
  EXPECT_EQ(this->loop_.pending_timers(), 2u);
  this->loop_.run_until_idle();
  EXPECT_EQ(trace, "ababab");
}

// Duration::max() saturates to Instant::max(): the sleeper never wakes, and
// destroying the loop destroys its frame and withdraws its timer.
TYPED_TEST(CoroTest, MaxSleepNeverFiresAndLoopTeardownFreesIt) {
  using Loop = typename TestFixture::Loop;
  bool woke = false;
  {
    Loop loop(this->clock_);
    loop.spawn([](Loop& l, bool& w) -> Task<void> {
      FrameProbe probe;
      co_await sleep_for(l, Duration::max());
      w = true;
    }(loop, woke));
    loop.run_until_idle();
    this->clock_.advance(Duration::seconds(3600LL * 24 * 365));
    loop.run_until_idle();
    EXPECT_FALSE(woke);
    EXPECT_EQ(loop.pending_timers(), 1u);
    EXPECT_EQ(loop.live_tasks(), 1u);
    EXPECT_EQ(FrameProbe::live, 1);
  }
  EXPECT_FALSE(woke);
  EXPECT_EQ(FrameProbe::live, 0);
}

// A negative delay throws std::invalid_argument from the sleep_for / with_timeout
// call inside the co_await expression; nothing is registered.
TYPED_TEST(CoroTest, NegativeDelayThrowsFromTheCoAwait) {
  using Loop = typename TestFixture::Loop;
  int caught = 0;
  this->loop_.spawn([](Loop& loop, int& c) -> Task<void> {
    FrameProbe probe;
    try {
      co_await sleep_for(loop, Duration::nanoseconds(-1));
    } catch (const std::invalid_argument&) {
      ++c;
    }
    try {
      auto r = co_await with_timeout(loop, sleep_for(loop, ms(1)), -ms(1));
      (void)r;
    } catch (const std::invalid_argument&) {
      ++c;
    }
    EXPECT_EQ(loop.pending_timers(), 0u);
  }(this->loop_, caught));
  this->loop_.run_until_idle();
  EXPECT_EQ(caught, 2);
}

Task<int> depth(int n) {
  FrameProbe probe;
  if (n == 0) co_return 0;
  co_return 1 + co_await depth(n - 1);
}

// Tasks return values through a deep chain of nested awaits, without suspending
// on the loop (symmetric transfer all the way down and back).
TYPED_TEST(CoroTest, TaskValueThroughDeepChain) {
  int result = -1;
  this->loop_.spawn([](int& r) -> Task<void> {
    FrameProbe probe;
    r = co_await depth(5000);
  }(result));
  EXPECT_EQ(this->loop_.run_once(), 1u);  // one resume does all of it
  EXPECT_EQ(result, 5000);
}

Task<int> throws_after(auto& loop, Duration d, const char* what) {
  FrameProbe probe;
  co_await sleep_for(loop, d);
  throw std::runtime_error(what);
}

// An exception crosses co_await of a Task; one escaping a spawned task is counted
// and kept by the loop, which keeps running.
TYPED_TEST(CoroTest, ExceptionsPropagateThroughTasks) {
  using Loop = typename TestFixture::Loop;
  std::string seen;
  this->loop_.spawn([](Loop& loop, std::string& s) -> Task<void> {
    FrameProbe probe;
    try {
      (void)co_await throws_after(loop, ms(1), "inner");
    } catch (const std::runtime_error& e) {
      s = e.what();
    }
  }(this->loop_, seen));
  this->loop_.spawn([](Loop& loop) -> Task<void> {
    (void)co_await throws_after(loop, ms(2), "escaped");
  }(this->loop_));
  this->advance_ms(2);
  EXPECT_EQ(seen, "inner");
  EXPECT_EQ(this->loop_.stats().unhandled_exceptions, 1u);
  std::exception_ptr e = this->loop_.take_unhandled_exception();
  ASSERT_TRUE(e);
  EXPECT_THROW(std::rethrow_exception(e), std::runtime_error);
  EXPECT_FALSE(this->loop_.take_unhandled_exception());
}

Task<int> value_after(auto& loop, Duration d, int v) {
  FrameProbe probe;
  co_await sleep_for(loop, d);
  co_return v;
}

// The task finishing first wins: its value comes back, and its timer is cancelled
// at once (the queue is empty right after the co_await).
TYPED_TEST(CoroTest, WithTimeoutTaskWins) {
  using Loop = typename TestFixture::Loop;
  std::optional<int> got;
  std::size_t pending_after = 99;
  this->loop_.spawn([](Loop& loop, auto& g, std::size_t& p) -> Task<void> {
    FrameProbe probe;
    Timed<int> r = co_await with_timeout(loop, value_after(loop, ms(10), 7), ms(50));
    p = loop.pending_timers();
    if (r) g = *r;
  }(this->loop_, got, pending_after));
  this->advance_ms(10);
  ASSERT_EQ(got, 7);
  EXPECT_EQ(pending_after, 0u) << "the losing timer was not cancelled";
  EXPECT_EQ(this->clock_.now(), at_ms(10));
}

// The timer firing first wins: the waiter resumes timed out at the deadline; the
// task keeps running detached, finishes later, and its result is dropped.
TYPED_TEST(CoroTest, WithTimeoutTimerWinsAndTaskFinishesDetached) {
  using Loop = typename TestFixture::Loop;
  bool timed_out = false;
  bool inner_finished = false;
  this->loop_.spawn([](Loop& loop, bool& t, bool& f) -> Task<void> {
    FrameProbe probe;
    auto inner = [](Loop& l, bool& fin) -> Task<int> {
      FrameProbe p;
      co_await sleep_for(l, ms(50));
      fin = true;
      co_return 1;
    };
    Timed<int> r = co_await with_timeout(loop, inner(loop, f), ms(10));
    t = r.timed_out();
    EXPECT_EQ(loop.now(), at_ms(10));
  }(this->loop_, timed_out, inner_finished));
  this->advance_ms(10);
  EXPECT_TRUE(timed_out);
  EXPECT_FALSE(inner_finished);
  EXPECT_EQ(this->loop_.live_tasks(), 1u);  // the detached runner
  EXPECT_EQ(this->loop_.races_in_flight(), 0u);
  this->advance_ms(40);
  EXPECT_TRUE(inner_finished);
}

// A zero timeout still lets a task that never suspends win; a task that suspends
// loses to it in the next pass.
TYPED_TEST(CoroTest, WithTimeoutZero) {
  using Loop = typename TestFixture::Loop;
  std::vector<bool> completed;
  this->loop_.spawn([](Loop& loop, auto& c) -> Task<void> {
    FrameProbe probe;
    auto now_task = []() -> Task<int> { co_return 3; };
    Timed<int> a = co_await with_timeout(loop, now_task(), Duration::zero());
    c.push_back(a.completed());
    Timed<int> b = co_await with_timeout(loop, value_after(loop, ms(1), 4), Duration::zero());
    c.push_back(b.completed());
  }(this->loop_, completed));
  this->advance_ms(1);
  EXPECT_EQ(completed, (std::vector<bool>{true, false}));
}

// An exception thrown by a winning task is rethrown from co_await with_timeout; one
// thrown by a task that already lost is dropped and counted.
TYPED_TEST(CoroTest, WithTimeoutExceptions) {
  using Loop = typename TestFixture::Loop;
  std::string first;
  bool second_timed_out = false;
  this->loop_.spawn([](Loop& loop, std::string& f, bool& s) -> Task<void> {
    FrameProbe probe;
    try {
      (void)co_await with_timeout(loop, throws_after(loop, ms(5), "won"), ms(50));
    } catch (const std::runtime_error& e) {
      f = e.what();
    }
    Timed<int> r = co_await with_timeout(loop, throws_after(loop, ms(50), "lost"), ms(5));
    s = r.timed_out();
  }(this->loop_, first, second_timed_out));
  this->advance_ms(100);
  EXPECT_EQ(first, "won");
  EXPECT_TRUE(second_timed_out);
  EXPECT_EQ(this->loop_.stats().discarded_exceptions, 1u);
  EXPECT_EQ(this->loop_.stats().unhandled_exceptions, 0u);
}

// Nested races resolve independently: an inner timeout inside an outer one that
// is longer, and an outer timeout that fires while the inner race is still open.
TYPED_TEST(CoroTest, NestedWithTimeout) {
  using Loop = typename TestFixture::Loop;
  auto middle = [](Loop& loop, Duration inner_timeout) -> Task<int> {
    FrameProbe probe;
    Timed<int> r = co_await with_timeout(loop, value_after(loop, ms(100), 1), inner_timeout);
    co_return r ? 1 : 2;
  };
  std::vector<std::pair<bool, int>> results;
  std::vector<Instant> when;
  this->loop_.spawn([](Loop& loop, auto mid, auto& res, auto& w) -> Task<void> {
    FrameProbe probe;
    Timed<int> a = co_await with_timeout(loop, mid(loop, ms(20)), ms(50));
    res.emplace_back(a.completed(), a ? *a : 0);
    w.push_back(loop.now());
    Timed<int> b = co_await with_timeout(loop, mid(loop, ms(40)), ms(10));
    res.emplace_back(b.completed(), b ? *b : 0);
    w.push_back(loop.now());
  }(this->loop_, middle, results, when));
  this->advance_ms(300);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], std::make_pair(true, 2));  // inner timed out at 20, outer got 2
  EXPECT_EQ(when[0], at_ms(20));
  EXPECT_FALSE(results[1].first);  // outer timed out at 20 + 10
  EXPECT_EQ(when[1], at_ms(30));
}

// Any awaiter can be raced: a sleep wrapped as a Task<void> yields Timed<void>, and
// a with_timeout nests inside another one.
TYPED_TEST(CoroTest, WithTimeoutOnPlainAwaiter) {
  using Loop = typename TestFixture::Loop;
  std::vector<bool> completed;
  this->loop_.spawn([](Loop& loop, auto& c) -> Task<void> {
    FrameProbe probe;
    Timed<void> a = co_await with_timeout(loop, sleep_for(loop, ms(30)), ms(10));
    c.push_back(a.completed());
    Timed<void> b = co_await with_timeout(loop, sleep_for(loop, ms(5)), ms(10));
    c.push_back(b.completed());
    // A with_timeout is itself an awaiter: the outer 10 ms fires before the inner
    // 20 ms, which keeps running detached and then fires too.
    Timed<Timed<void>> n =
        co_await with_timeout(loop, with_timeout(loop, sleep_for(loop, ms(30)), ms(20)), ms(10));
    c.push_back(n.completed());
  }(this->loop_, completed));
  this->advance_ms(100);
  EXPECT_EQ(completed, (std::vector<bool>{false, true, false}));
}

// A plain co_await on an Event suspends until set() and returns the value; set()
// reports that it resumed a waiter; awaiting a set Event does not suspend.
TYPED_TEST(CoroTest, EventPlainAwait) {
  using Loop = typename TestFixture::Loop;
  Event<int, Loop> ev(this->loop_);
  std::vector<int> got;
  this->loop_.spawn([](Event<int, Loop>& e, auto& g) -> Task<void> {
    FrameProbe probe;
    g.push_back(co_await e);
    g.push_back(co_await e);  // already set: immediate
  }(ev, got));
  this->loop_.run_until_idle();
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(ev.set(5));
  EXPECT_TRUE(got.empty());  // posted, not resumed inline
  this->loop_.run_until_idle();
  EXPECT_EQ(got, (std::vector<int>{5, 5}));
  EXPECT_EQ(this->loop_.stats().posts, 1u);
}

// with_timeout on an Event: set() before the deadline wins (and the timer is
// cancelled); after a timeout the registration is withdrawn, so a late set()
// resumes nobody and returns false; an Event set already wins without a timer.
TYPED_TEST(CoroTest, WithTimeoutOnEventBothOutcomes) {
  using Loop = typename TestFixture::Loop;
  Event<int, Loop> early(this->loop_);
  Event<int, Loop> late(this->loop_);
  std::vector<std::optional<int>> got;
  this->loop_.spawn([](Loop& loop, auto& e1, auto& e2, auto& g) -> Task<void> {
    FrameProbe probe;
    Timed<int> a = co_await with_timeout(loop, e1, ms(10));
    g.push_back(a ? std::optional<int>(*a) : std::nullopt);
    EXPECT_EQ(loop.pending_timers(), 0u);
    Timed<int> b = co_await with_timeout(loop, e2, ms(10));
    g.push_back(b ? std::optional<int>(*b) : std::nullopt);
    Timed<int> c = co_await with_timeout(loop, e1, ms(10));  // already set
    g.push_back(c ? std::optional<int>(*c) : std::nullopt);
  }(this->loop_, early, late, got));
  this->advance_ms(3);
  EXPECT_TRUE(early.set(1));
  this->advance_ms(15);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], std::nullopt);
  EXPECT_EQ(got[2], 1);
  EXPECT_FALSE(late.set(2));
  this->loop_.run_until_idle();
  EXPECT_EQ(this->loop_.stats().posts, 1u);  // the late set posted nothing
}

// 10,000 coroutines sleeping random delays each wake at exactly their deadline (1 ms
// resolution), in deadline order, and leave no frame or timer behind.
TYPED_TEST(CoroTest, TenThousandSleepers) {
  using Loop = typename TestFixture::Loop;
  constexpr int kN = 10'000;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> delay(1, 1000);
  std::vector<std::int64_t> lateness;
  std::vector<int> order;
  lateness.reserve(kN);
  order.reserve(kN);
  for (int i = 0; i < kN; ++i) {
    this->loop_.spawn([](Loop& loop, int d, auto& late, auto& ord) -> Task<void> {
      FrameProbe probe;
      const Instant deadline = loop.now() + ms(d);
      co_await sleep_for(loop, ms(d));
      late.push_back((loop.now() - deadline).ns());
      ord.push_back(d);
    }(this->loop_, delay(rng), lateness, order));
  }
  this->loop_.run_until_idle();
  EXPECT_EQ(this->loop_.pending_timers(), static_cast<std::size_t>(kN));
  EXPECT_EQ(FrameProbe::live, kN);
  this->advance_ms(1000);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kN));
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(*std::max_element(lateness.begin(), lateness.end()), 0);
  EXPECT_EQ(*std::min_element(lateness.begin(), lateness.end()), 0);
}

// Destroying a loop with coroutines suspended in every kind of wait (sleep, plain
// Event, with_timeout on a Task and on an Event) frees every frame, withdraws every
// Event registration (the Events outlive the loop and check that on destruction)
// and never resumes anything.
TYPED_TEST(CoroTest, LoopTeardownFreesSuspendedCoroutines) {
  using Loop = typename TestFixture::Loop;
  int resumed = 0;
  auto loop = std::make_unique<Loop>(this->clock_);
  Event<int, Loop> e1(*loop);
  Event<int, Loop> e2(*loop);
  loop->spawn([](Loop& l, int& r) -> Task<void> {
    FrameProbe probe;
    co_await sleep_for(l, ms(100));
    ++r;
  }(*loop, resumed));
  loop->spawn([](Event<int, Loop>& e, int& r) -> Task<void> {
    FrameProbe probe;
    (void)co_await e;
    ++r;
  }(e1, resumed));
  loop->spawn([](Loop& l, Event<int, Loop>& e, int& r) -> Task<void> {
    FrameProbe probe;
    (void)co_await with_timeout(l, e, ms(100));
    ++r;
  }(*loop, e2, resumed));
  loop->spawn([](Loop& l, int& r) -> Task<void> {
    FrameProbe probe;
    (void)co_await with_timeout(l, value_after(l, ms(200), 1), ms(100));
    ++r;
  }(*loop, resumed));
  loop->run_until_idle();
  EXPECT_EQ(loop->pending_timers(), 4u);  // sleep, two race timers, the inner sleep
  EXPECT_EQ(loop->races_in_flight(), 2u);
  EXPECT_EQ(loop->live_tasks(), 5u);  // four spawned + one runner
  EXPECT_EQ(FrameProbe::live, 5);     // four spawned bodies + value_after
  loop->check_invariants();
  loop.reset();
  EXPECT_EQ(FrameProbe::live, 0);
  EXPECT_EQ(resumed, 0);
}

// Runs one with_timeout whose task wins on a loop over platform P; returns the
// number of timers still pending right after the co_await. A stale timer firing
// later must not resume the waiter again.
template <class Tag, class P>
std::size_t pending_timers_after_won_race() {
  using Loop = typename Tag::template Loop<P>;
  ManualClock clock;
  Loop loop(clock);
  int resumes = 0;
  std::size_t pending = 99;
  loop.spawn([](Loop& l, int& r, std::size_t& p) -> Task<void> {
    Timed<int> t = co_await with_timeout(l, value_after(l, ms(1), 1), ms(10));
    ++r;
    EXPECT_TRUE(t.completed());
    p = l.pending_timers();
  }(loop, resumes, pending));
  for (int i = 0; i < 20; ++i) {
    clock.advance(ms(1));
    loop.run_until_idle();
  }
  EXPECT_EQ(resumes, 1) << "a stale timer resumed the waiter again";
  EXPECT_EQ(loop.pending_timers(), 0u);  // the leaked entry has fired and lost by now
  loop.check_invariants();
  return pending;
}

// The mutant kCoroTimerLeak (with_timeout does not cancel the losing timer) is
// caught by the pending-timer count right after a won race; the real code leaves
// none. The leaked entry is memory-safe when it fires: its token is stale.
TYPED_TEST(CoroTest, MutantTimerLeakIsDetected) {
  using MP = testing::MutantPlatform<ManualStdPlatform, Mutant::kCoroTimerLeak>;
  EXPECT_EQ((pending_timers_after_won_race<TypeParam, ManualStdPlatform>()), 0u);
  EXPECT_EQ((pending_timers_after_won_race<TypeParam, MP>()), 1u) << "kCoroTimerLeak survived";
}

// A coroutine whose callback re-arms at 0 three times: with_timeout(Event, 0)
// from inside a resumed coroutine. Returns the loop passes (run_once calls) at
// which its four timeouts won; each must win a pass after the one that armed it.
template <class Tag, class P>
std::vector<std::uint64_t> passes_of_a_zero_chain() {
  using Loop = typename Tag::template Loop<P>;
  ManualClock clock;
  Loop loop(clock);
  std::vector<std::uint64_t> won_at;
  loop.spawn([](Loop& l, std::vector<std::uint64_t>& out) -> Task<void> {
    for (int i = 0; i < 4; ++i) {
      Event<int, Loop> never(l);
      Timed<int> t = co_await with_timeout(l, never, i == 0 ? ms(1) : Duration::zero());
      EXPECT_TRUE(t.timed_out());
      out.push_back(l.stats().passes);
    }
  }(loop, won_at));
  for (int i = 0; i < 8; ++i) {
    clock.advance(ms(1));
    loop.run_once();
  }
  EXPECT_EQ(won_at.size(), 4u);
  return won_at;
}

// with_timeout's due timer wins in the next pass, never inline: the mutant
// kCoroDueTimeoutInline runs the whole chain inside one pass.
TYPED_TEST(CoroTest, ZeroTimeoutFromACallbackWinsInTheNextPass) {
  const std::vector<std::uint64_t> real = passes_of_a_zero_chain<TypeParam, ManualStdPlatform>();
  ASSERT_EQ(real.size(), 4u);
  for (std::size_t i = 1; i < real.size(); ++i) EXPECT_EQ(real[i], real[i - 1] + 1);
  using MP = testing::MutantPlatform<ManualStdPlatform, Mutant::kCoroDueTimeoutInline>;
  const std::vector<std::uint64_t> bad = passes_of_a_zero_chain<TypeParam, MP>();
  ASSERT_EQ(bad.size(), 4u);
  EXPECT_EQ(bad.front(), bad.back()) << "kCoroDueTimeoutInline survived";
}

}  // namespace
}  // namespace tlab
