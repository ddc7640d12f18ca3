// tests/support/sync_test_util.h: small helpers for the multi-threaded sync tests.
//
//   spin_until(pred)   yields until pred() holds; false after a generous real-time
//                      bound (30 s), so a broken build fails instead of hanging.
//                      For "another thread has reached state X" hand-shakes only;
//                      it never asserts timing.
//   ScopedFaultPlan    installs StressPlatform fault plans for one test and resets
//                      the switchboard when it goes out of scope. Construct it
//                      before starting the test's threads (stress_control.h rule).
//   delay_plan(p, ..)  a plan that sleeps at point p (uniform in [min, max] ns).
//   releaser_meets_expired_waiter(...)
//                      the pinned race of the hand-off primitives (see below).
//   run_contention(...) workers x ops timed acquisitions on virtual time (below).
//   hold_past_timeouts(src)
//                      a holder's critical section in a run_contention body.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/manual_timer_source.h"
#include "tlab/platform/stress_control.h"
#include "tlab/waiter.h"

namespace tlab::testing {

template <class Pred>
bool spin_until(Pred&& pred) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

using FaultPlans = std::array<stress::FaultPlan, kFaultPointCount>;

inline FaultPlans delay_plan(FaultPoint p, std::uint64_t min_ns, std::uint64_t max_ns,
                             double probability = 1.0) {
  FaultPlans plans{};
  plans[static_cast<std::size_t>(p)] = {stress::FaultAction::kDelay, probability, min_ns, max_ns};
  return plans;
}

class ScopedFaultPlan {
 public:
  explicit ScopedFaultPlan(const FaultPlans& plans) { stress::configure(std::nullopt, plans); }
  ScopedFaultPlan(const ScopedFaultPlan&) = delete;
  ScopedFaultPlan& operator=(const ScopedFaultPlan&) = delete;
  ~ScopedFaultPlan() { stress::reset(); }
};

// The race the RFC warns about, pinned, for any hand-off primitive (TimedMutex,
// TimedSemaphore): thread A parks with a 10 ms timeout via acquire(src, wa); once
// waiting() == 1, a timer thread fires A's timer, which wins A's token and then
// sleeps 50 ms at kWaiterAfterResolve before resuming A. Meanwhile this thread
// calls release(), which pops A's entry and must lose its resolve. Returns whether
// the round was valid: A still unresumed when release() returned, i.e. release()
// really met the expired entry. Expects A's acquire to have failed.
// Requires: P is a StressPlatform (the delay is a fault plan); no plan installed.
template <class P, class Acquire, class Waiting, class Release>
bool releaser_meets_expired_waiter(Acquire&& acquire, Waiting&& waiting, Release&& release) {
  ScopedFaultPlan plan(delay_plan(FaultPoint::kWaiterAfterResolve, 50'000'000, 50'000'000));
  ManualTimerSource src;
  Waiter<P> wa;
  std::atomic<int> got{-1};
  std::thread a([&] { got = acquire(src, wa) ? 1 : 0; });
  EXPECT_TRUE(spin_until([&] { return waiting() == 1; }));
  std::thread timer([&] {
    src.advance(Duration::milliseconds(10));
    src.fire_due();
  });
  EXPECT_TRUE(
      spin_until([] { return stress::stats(FaultPoint::kWaiterAfterResolve).injected >= 1; }));
  release();
  const bool valid = wa.counters().resumes == 0;
  timer.join();
  a.join();
  EXPECT_EQ(got, 0);
  return valid;
}

// The longest timeout run_contention draws.
inline constexpr Duration kLongestContentionTimeout = Duration::milliseconds(2);

// hold_past_timeouts: what a run_contention body does while it holds what it
// acquired: yields until the driver has moved virtual time past the longest
// timeout, so a thread that starts waiting while every resource has a fresh
// holder times out whatever the machine's speed. With a hold of a few yields the
// "both outcomes happen" checks failed on a loaded TSan run (no timeout at all).
inline void hold_past_timeouts(ManualTimerSource& src) {
  const Instant until = src.now() + kLongestContentionTimeout + Duration::microseconds(100);
  EXPECT_TRUE(spin_until([&] { return src.now() >= until; }));
}

// `workers` threads each run `ops` times body(k, d, waiter_k), where d is a
// timeout of 0.1-2 ms of virtual time, while a ManualTimerDriver moves time in
// 100 us steps and fires what is due. Expiry winners linger 20-60 us at
// kWaiterAfterResolve (probability 0.5), so releasers regularly meet waiters whose
// timer has already won. Returns the summed Waiter counters of all workers.
// Requires: P is a StressPlatform; `src` is not driven by anyone else meanwhile.
template <class P, class Body>
typename Waiter<P>::Counters run_contention(ManualTimerSource& src, int workers, int ops,
                                            Body&& body) {
  ScopedFaultPlan plan(delay_plan(FaultPoint::kWaiterAfterResolve, 20'000, 60'000, 0.5));
  std::vector<std::unique_ptr<Waiter<P>>> waiters;
  for (int k = 0; k < workers; ++k) waiters.push_back(std::make_unique<Waiter<P>>());
  {
    ManualTimerDriver driver(src, Duration::microseconds(100));
    std::vector<std::thread> threads;
    for (int k = 0; k < workers; ++k) {
      threads.emplace_back([&, k] {
        stress::seed_thread(static_cast<std::uint64_t>(k) + 7);
        for (int op = 0; op < ops; ++op) {
          body(k, Duration::microseconds(100 * (1 + (op * 7 + k * 3) % 20)),
               *waiters[static_cast<std::size_t>(k)]);
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  typename Waiter<P>::Counters sum;
  for (const auto& w : waiters) {
    const auto c = w->counters();
    sum.armings += c.armings;
    sum.resumes += c.resumes;
    sum.cancels += c.cancels;
    sum.expiries += c.expiries;
    sum.lost_resolves += c.lost_resolves;
    sum.double_resumes += c.double_resumes;
    sum.stale_wakeups += c.stale_wakeups;
  }
  return sum;
}

}  // namespace tlab::testing
