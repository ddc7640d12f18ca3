// Property tests of the no-lost-wakeup invariants of the timed primitives, under
// deterministic simulation (SimPlatform: cooperative tasks, every operation a
// scheduling point, virtual time on which timed waits really expire).
//
// A lost wakeup in a timed wait does not hang: the waiter leaves through its
// timeout and reports "timed out". What tells it from a deserved timeout is the
// primitive's check_invariants(), observed atomically under its lock:
//
//   | primitive       | invariant (header)                                       | mutant it catches                 |
//   |-----------------|----------------------------------------------------------|-----------------------------------|
//   | TimedMutex      | a free lock has no queued waiter                         | mutex_enqueue_after_retry         |
//   | TimedSemaphore  | a free permit never coexists with a queued waiter        | semaphore_count_after_empty_check |
//   | Pool            | free == permits + in transit; no unclaimed object while  | pool_signal_on_empty_only         |
//   |                 | a borrower is queued                                     |                                   |
//   | TimedWaitGroup  | no waiter parked past a completion it was not woken for  | wait_group_park_without_recheck   |
//   | Event           | a set Event has no coroutine registered on it            | coro_event_register_after_check   |
//
// rapidcheck draws a workload (when each actor starts, how long each wait lasts,
// when each release comes, in whole virtual milliseconds so that actors collide at
// the same instant) and a schedule seed; one simulation runs it on the shipped code
// with a TimerService (or EventLoop) on virtual time. Every actor calls
// check_invariants() after each of its operations, and a checker task calls it
// every virtual millisecond, so a lost-wakeup state, which lasts until the waiter's
// deadline, is seen at rest. A run must also complete (no deadlock, no livelock).
//
// A broken invariant is a TLAB_CHECK, which aborts: the mutant tests run the
// property in a death-test child, and the check's message is the counterexample
// (as queue_property_test.cc's FindsWheelBitmapClearOnCancel does). Each mutant
// test records its mutant for `tlab mutants` (kill matrix, layer property).
//
// Bounds: 150 workloads per clean property (up to 2000 for a mutant, stopping at
// the first abort), each at most 4 actors plus a checker over 25 virtual ms; every
// count is an operation count, never wall-clock time.
#include <gtest/gtest.h>

#include <rapidcheck.h>

#include <array>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "support/mutant_platform.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/task.h"
#include "tlab/coro/with_timeout.h"
#include "tlab/platform/sim_platform.h"
#include "tlab/platform/sim_scheduler.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/sync/pool.h"
#include "tlab/sync/timed_mutex.h"
#include "tlab/sync/timed_semaphore.h"
#include "tlab/sync/timed_wait_group.h"
#include "tlab/timer_service.h"

namespace tlab {
namespace {

using sim::Scheduler;

// One workload: two "releasers" (the owner's unlock, a release, a return, a
// done(), a set()) at release_ms, and up to two waiters starting at start_ms with
// a wait of wait_ms. Times are small so that actors meet at the same instant.
struct Workload {
  std::uint64_t seed = 1;
  std::vector<int> release_ms;  // two entries
  std::vector<int> start_ms;
  std::vector<int> wait_ms;
};

rc::Gen<Workload> workloads() {
  return rc::gen::build<Workload>(
      rc::gen::set(&Workload::seed, rc::gen::inRange<std::uint64_t>(1, 1u << 30)),
      rc::gen::set(&Workload::release_ms, rc::gen::container<std::vector<int>>(
                                              2, rc::gen::inRange(0, 3))),
      rc::gen::set(&Workload::start_ms, rc::gen::container<std::vector<int>>(
                                            2, rc::gen::inRange(0, 3))),
      rc::gen::set(&Workload::wait_ms, rc::gen::container<std::vector<int>>(
                                           2, rc::gen::inRange(1, 6))));
}

// Sleeps the calling task `ms` virtual milliseconds (nobody wakes `kSleep`).
void sleep_ms(int ms) {
  static const int kSleep = 0;
  if (ms > 0) Scheduler::block(&kSleep, Scheduler::now() + Duration::milliseconds(ms));
}

// Calls check() every virtual millisecond for 25 ms: longer than any wait.
template <class Check>
void checker(Check&& check) {
  for (int k = 0; k < 25; ++k) {
    sleep_ms(1);
    check();
  }
}

// Runs `body` as the main task of one simulation with `w.seed`; the run must
// complete.
template <class Body>
void simulate(const Workload& w, Body&& body) {
  sim::Options o;
  o.seed = w.seed;
  o.max_steps = 2'000'000;
  Scheduler s(o);
  s.spawn("main", [&] { body(); });
  const sim::Outcome out = s.run();
  RC_ASSERT(out.end == sim::End::kCompleted);
}

template <class P>
void joined(std::vector<typename P::Thread>& ts) {
  for (auto& t : ts) t.join();
}

// TimedMutex: the main task holds the lock until release_ms[0]; two waiters
// lock_for() from start_ms for wait_ms, holding it for release_ms[1] if they get it.
template <class P>
void mutex_run(const Workload& w) {
  simulate(w, [&] {
    const typename P::Clock clock;
    TimerServiceOn<BinaryHeapQueue, P> svc(clock);
    TimedMutex<P> mu;
    std::deque<typename TimedMutex<P>::WaiterT> waiters(w.start_ms.size());
    TLAB_CHECK(mu.try_lock(), "the mutex starts free");
    std::vector<typename P::Thread> ts;
    ts.push_back(P::spawn([&] {
      sleep_ms(w.release_ms[0]);
      mu.unlock();
      mu.check_invariants();
    }));
    for (std::size_t i = 0; i < w.start_ms.size(); ++i) {
      ts.push_back(P::spawn([&, i] {
        sleep_ms(w.start_ms[i]);
        const bool got = mu.lock_for(svc, Duration::milliseconds(w.wait_ms[i]), waiters[i]);
        mu.check_invariants();
        if (got) {
          sleep_ms(w.release_ms[1]);
          mu.unlock();
          mu.check_invariants();
        }
      }));
    }
    ts.push_back(P::spawn([&] { checker([&] { mu.check_invariants(); }); }));
    joined<P>(ts);
    mu.check_invariants();
  });
}

// TimedSemaphore (0 permits): releases of one permit at release_ms[0] and [1];
// two waiters acquire_for() from start_ms for wait_ms.
template <class P>
void semaphore_run(const Workload& w) {
  simulate(w, [&] {
    const typename P::Clock clock;
    TimerServiceOn<BinaryHeapQueue, P> svc(clock);
    TimedSemaphore<P> sem(0);
    std::deque<typename TimedSemaphore<P>::WaiterT> waiters(w.start_ms.size());
    std::vector<typename P::Thread> ts;
    for (int r : w.release_ms) {
      ts.push_back(P::spawn([&, r] {
        sleep_ms(r);
        sem.release();
        sem.check_invariants();
      }));
    }
    for (std::size_t i = 0; i < w.start_ms.size(); ++i) {
      ts.push_back(P::spawn([&, i] {
        sleep_ms(w.start_ms[i]);
        (void)sem.acquire_for(svc, Duration::milliseconds(w.wait_ms[i]), waiters[i]);
        sem.check_invariants();
      }));
    }
    ts.push_back(P::spawn([&] { checker([&] { sem.check_invariants(); }); }));
    joined<P>(ts);
    sem.check_invariants();
  });
}

// Pool of 2, both leased by the main task and returned at release_ms[0] and [1];
// two borrowers checkout_for() from start_ms for wait_ms and return at once.
template <class P>
void pool_run(const Workload& w) {
  simulate(w, [&] {
    const typename P::Clock clock;
    TimerServiceOn<BinaryHeapQueue, P> svc(clock);
    Pool<int, P> pool(std::vector<int>{1, 2});
    std::deque<typename Pool<int, P>::WaiterT> waiters(w.start_ms.size());
    std::array<std::optional<typename Pool<int, P>::Lease>, 2> out{pool.try_checkout(),
                                                                  pool.try_checkout()};
    std::vector<typename P::Thread> ts;
    for (std::size_t r = 0; r < out.size(); ++r) {
      ts.push_back(P::spawn([&, r] {
        sleep_ms(w.release_ms[r]);
        out[r]->reset();
        pool.check_invariants();
      }));
    }
    for (std::size_t i = 0; i < w.start_ms.size(); ++i) {
      ts.push_back(P::spawn([&, i] {
        sleep_ms(w.start_ms[i]);
        auto lease = pool.checkout_for(svc, Duration::milliseconds(w.wait_ms[i]), waiters[i]);
        pool.check_invariants();
        lease.reset();
        pool.check_invariants();
      }));
    }
    ts.push_back(P::spawn([&] { checker([&] { pool.check_invariants(); }); }));
    joined<P>(ts);
    pool.check_invariants();
  });
}

// TimedWaitGroup of 2 tasks, done() at release_ms[0] and [1]; two waiters
// wait_for() from start_ms for wait_ms.
template <class P>
void wait_group_run(const Workload& w) {
  simulate(w, [&] {
    const typename P::Clock clock;
    TimerServiceOn<BinaryHeapQueue, P> svc(clock);
    TimedWaitGroup<P> group;
    group.add(2);
    std::vector<typename P::Thread> ts;
    for (int r : w.release_ms) {
      ts.push_back(P::spawn([&, r] {
        sleep_ms(r);
        group.done();
        group.check_invariants();
      }));
    }
    for (std::size_t i = 0; i < w.start_ms.size(); ++i) {
      ts.push_back(P::spawn([&, i] {
        sleep_ms(w.start_ms[i]);
        (void)group.wait_for(svc, Duration::milliseconds(w.wait_ms[i]));
        group.check_invariants();
      }));
    }
    ts.push_back(P::spawn([&] { checker([&] { group.check_invariants(); }); }));
    joined<P>(ts);
    group.check_invariants();
  });
}

template <class Loop>
Task<void> await_event(Loop& loop, Event<int, Loop>& ev, int wait_ms) {
  (void)co_await with_timeout(loop, ev, Duration::milliseconds(wait_ms));
  ev.check_invariants();
}

// Event on an EventLoop run by the main task: a coroutine awaits it under
// with_timeout(wait_ms[0]); another task set()s it at release_ms[0].
template <class P>
void event_run(const Workload& w) {
  simulate(w, [&] {
    using Loop = EventLoop<BinaryHeapQueue, P>;
    const typename P::Clock clock;
    Loop loop(clock);
    Event<int, Loop> ev(loop);
    loop.spawn(await_event(loop, ev, w.wait_ms[0]));
    std::vector<typename P::Thread> ts;
    ts.push_back(P::spawn([&] {
      sleep_ms(w.release_ms[0]);
      (void)ev.set(1);
      ev.check_invariants();
      loop.wake();
    }));
    ts.push_back(P::spawn([&] { checker([&] { ev.check_invariants(); }); }));
    loop.run();
    joined<P>(ts);
    ev.check_invariants();
  });
}

// Runs `run` over up to `budget` of rapidcheck's workloads; true iff every one
// held.
template <void (*Run)(const Workload&)>
bool holds(const std::string& what, int budget = 150) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = budget;
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [] { Run(*workloads()); }, rc::detail::TestMetadata{what, what}, params);
  std::cerr << "- " << what << ": ";
  rc::detail::printResultMessage(result, std::cerr);
  std::cerr << std::endl;
  return result.template is<rc::detail::SuccessResult>();
}

template <Mutant M>
using MP = testing::MutantPlatform<SimPlatform, M>;

// The shipped code keeps every invariant at every quiescent point of every workload.
TEST(SyncLostWakeupProperty, MutexInvariantsHold) {
  EXPECT_TRUE(holds<&mutex_run<SimPlatform>>("timed_mutex"));
}
TEST(SyncLostWakeupProperty, SemaphoreInvariantsHold) {
  EXPECT_TRUE(holds<&semaphore_run<SimPlatform>>("timed_semaphore"));
}
TEST(SyncLostWakeupProperty, PoolInvariantsHold) {
  EXPECT_TRUE(holds<&pool_run<SimPlatform>>("pool"));
}
TEST(SyncLostWakeupProperty, WaitGroupInvariantsHold) {
  EXPECT_TRUE(holds<&wait_group_run<SimPlatform>>("timed_wait_group"));
}
TEST(SyncLostWakeupProperty, EventInvariantsHold) {
  EXPECT_TRUE(holds<&event_run<SimPlatform>>("event"));
}

// Runs the property on mutant M in a death-test child: the invariant's TLAB_CHECK
// aborts with `message`. Budget: the narrowest window (mutex, semaphore) is hit by
// about 1 workload in 100 (150 workloads missed it in 2 of 10 runs), so the child
// may draw up to kMutantWorkloads; it stops at the first abort, so a kill costs
// what it takes to find, and a miss is about 1 in 10^9.
constexpr int kMutantWorkloads = 2000;
template <Mutant M, void (*Run)(const Workload&)>
void expect_invariant_breaks(const char* message) {
  ::testing::Test::RecordProperty("mutant", std::string(name_of(M)));
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)holds<Run>(std::string(name_of(M)), kMutantWorkloads), message);
}

// mutex_enqueue_after_retry: an unlock between the waiter's re-try and its enqueue
// frees the lock; the waiter parks with it free.
TEST(SyncLostWakeupPropertyMutantTest, FindsMutexEnqueueAfterRetry) {
  constexpr Mutant m = Mutant::kMutexEnqueueAfterRetry;
  expect_invariant_breaks<m, &mutex_run<MP<m>>>("free lock with waiters");
}

// semaphore_count_after_empty_check: a waiter enqueues between release()'s empty
// check and its count update; the permit lands in the count beside it.
TEST(SyncLostWakeupPropertyMutantTest, FindsSemaphoreCountAfterEmptyCheck) {
  constexpr Mutant m = Mutant::kSemaphoreCountAfterEmptyCheck;
  expect_invariant_breaks<m, &semaphore_run<MP<m>>>("permits=.* with waiters");
}

// pool_signal_on_empty_only: the second return releases no permit.
TEST(SyncLostWakeupPropertyMutantTest, FindsPoolSignalOnEmptyOnly) {
  constexpr Mutant m = Mutant::kPoolSignalOnEmptyOnly;
  expect_invariant_breaks<m, &pool_run<MP<m>>>("Pool: ");
}

// wait_group_park_without_recheck: the last done() lands between the waiter's
// check and its park; nobody wakes it but its deadline.
TEST(SyncLostWakeupPropertyMutantTest, FindsWaitGroupParkWithoutRecheck) {
  constexpr Mutant m = Mutant::kWaitGroupParkWithoutRecheck;
  expect_invariant_breaks<m, &wait_group_run<MP<m>>>("lost wakeup");
}

// coro_event_register_after_check: set() lands between the awaiter's check and its
// registration; the coroutine stays registered on a set Event.
TEST(SyncLostWakeupPropertyMutantTest, FindsCoroEventRegisterAfterCheck) {
  constexpr Mutant m = Mutant::kCoroEventRegisterAfterCheck;
  expect_invariant_breaks<m, &event_run<MP<m>>>("lost wakeup");
}

}  // namespace
}  // namespace tlab
