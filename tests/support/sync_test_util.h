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
//   GatedPlatform<Base, p>
//                      Base with a gate at fault point p that holds threads there
//                      until the test opens it: a race window pinned open for as
//                      long as the test needs, whatever the machine's load.
//   releaser_meets_expired_waiter(...)
//                      the pinned race of the hand-off primitives (see below).
//   run_contention(...) workers x ops timed acquisitions on virtual time (below).
//   Contender::hold()  a holder's critical section in a run_contention body.
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

// FaultGate: where GatedPlatform holds threads. Starts open.
//   close()  the next threads to reach the gated point stop there; held() counts them
//   open()   lets every held thread go, and every later one pass
// A held thread gives up after spin_until's 30 s, so a test that never opens the
// gate fails instead of hanging.
// Thread safety: any thread. Memory ordering: open()'s release store pairs with
// pass()'s acquire load, so what the test did inside the window happens before
// the held thread goes on.
class FaultGate {
 public:
  void close() {
    held_.store(0, std::memory_order::relaxed);      // nobody is held while open
    open_.store(false, std::memory_order::release);  // pairs with pass()'s load
  }
  void open() { open_.store(true, std::memory_order::release); }       // pairs with pass()
  int held() const { return held_.load(std::memory_order::acquire); }  // pairs with pass()
  void pass() noexcept {
    if (open_.load(std::memory_order::acquire)) return;  // pairs with close()/open()
    held_.fetch_add(1, std::memory_order::acq_rel);
    (void)spin_until([&] { return open_.load(std::memory_order::acquire); });
  }

 private:
  std::atomic<bool> open_{true};
  std::atomic<int> held_{0};
};

// GatedPlatform<Base, kAt>: Base (a Platform), except that fault(kAt) runs
// Base::fault(kAt) and then stops at gate() while it is closed. A fault plan's
// delay widens a window only for as long as it lasts, which a loaded machine can
// outlast (a 50 ms delay once closed before the releaser ran); the gate closes the
// window when the test says so. One gate per GatedPlatform type: one test at a time.
template <class Base, FaultPoint kAt>
struct GatedPlatform : Base {
  static FaultGate& gate() {
    static FaultGate g;
    return g;
  }
  static void fault(FaultPoint p) noexcept {
    Base::fault(p);
    if (p == kAt) gate().pass();
  }
};

// The race the RFC warns about, pinned, for any hand-off primitive (TimedMutex,
// TimedSemaphore, Pool): thread A parks with a 10 ms timeout via acquire(src, wa);
// once waiting() == 1, a timer thread fires A's timer, which wins A's token and is
// then held at kWaiterAfterResolve by P's gate, before it resumes A. Meanwhile this
// thread calls release(), which pops A's entry and must lose its resolve; then the
// gate opens. So every call meets the expired entry (checked: A is still unresumed
// when release() returns). Expects A's acquire to have failed.
// Requires: P is GatedPlatform<Base, FaultPoint::kWaiterAfterResolve>, or a
// MutantPlatform over one; only the timer's win reaches that point here.
template <class P, class Acquire, class Waiting, class Release>
void releaser_meets_expired_waiter(Acquire&& acquire, Waiting&& waiting, Release&& release) {
  P::gate().close();
  ManualTimerSource src;
  Waiter<P> wa;
  std::atomic<int> got{-1};
  std::thread a([&] { got = acquire(src, wa) ? 1 : 0; });
  EXPECT_TRUE(spin_until([&] { return waiting() == 1; }));
  std::thread timer([&] {
    src.advance(Duration::milliseconds(10));
    src.fire_due();
  });
  EXPECT_TRUE(spin_until([] { return P::gate().held() == 1; })) << "the timer never won";
  release();
  EXPECT_EQ(wa.counters().resumes, 0u) << "release() did not meet the expired entry";
  P::gate().open();
  timer.join();
  a.join();
  EXPECT_EQ(got, 0);
}

// The longest timeout run_contention draws.
inline constexpr Duration kLongestContentionTimeout = Duration::milliseconds(2);

// What run_contention's workers share: the source, their Waiters, and what
// Contender::hold() waits for.
template <class P>
class ContentionRun {
 public:
  ContentionRun(ManualTimerSource& src, int workers) : src_(src), workers_(workers) {
    for (int k = 0; k < workers; ++k) waiters_.push_back(std::make_unique<Waiter<P>>());
  }
  Waiter<P>& waiter(int k) const { return *waiters_[static_cast<std::size_t>(k)]; }
  // relaxed, as every count here: read only to decide when a holder stops holding;
  // nothing is published through them (the Waiters have their own locks).
  void finished() { finished_.fetch_add(1, std::memory_order::relaxed); }
  // hold: see Contender::hold.
  void hold() {
    const Instant until = src_.now() + kLongestContentionTimeout + Duration::microseconds(100);
    EXPECT_TRUE(spin_until([&] { return src_.now() >= until; }));
    if (someone_timed_out()) return;
    holding_.fetch_add(1, std::memory_order::relaxed);
    EXPECT_TRUE(spin_until([&] {
      return someone_timed_out() || finished_.load(std::memory_order::relaxed) +
                                            holding_.load(std::memory_order::relaxed) >=
                                        workers_;
    }));
    holding_.fetch_sub(1, std::memory_order::relaxed);
  }
  // The summed Waiter counters of all workers.
  typename Waiter<P>::Counters counters() const {
    typename Waiter<P>::Counters sum;
    for (const auto& w : waiters_) {
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

 private:
  bool someone_timed_out() {
    if (timed_out_.load(std::memory_order::relaxed)) return true;
    for (const auto& w : waiters_) {
      if (w->counters().expiries > 0) {
        timed_out_.store(true, std::memory_order::relaxed);  // a sticky hint, see finished()
        return true;
      }
    }
    return false;
  }

  ManualTimerSource& src_;
  const int workers_;
  std::vector<std::unique_ptr<Waiter<P>>> waiters_;
  std::atomic<int> finished_{0};  // workers done with all their operations
  std::atomic<int> holding_{0};   // workers in hold() waiting for the first timeout
  std::atomic<bool> timed_out_{false};
};

// One operation of a run_contention worker: its index k, the timeout to use (0.1-2
// ms of virtual time), its Waiter, and hold().
template <class P>
struct Contender {
  int k;
  Duration timeout;
  Waiter<P>& waiter;
  ContentionRun<P>& run;
  // Contender::hold: what the body does while it holds what it acquired. Yields
  // until the driver has moved virtual time past the longest timeout, so a thread
  // that starts waiting meanwhile times out whatever the machine's speed; and, until
  // some worker of the run has timed out, also until one has (or until every worker
  // that is not holding has finished). So both outcomes happen in every run, under
  // any schedule, as long as the workers outnumber what they contend for: the first
  // holders keep all of it until another worker, which can then only queue, gives
  // up. (A hold of a few yields saw no timeout on a loaded TSan run; a hold past the
  // timeouts alone still left it to the scheduler to start a waiter meanwhile.)
  void hold() const { run.hold(); }
};

// `workers` threads each run `ops` times body(contender), where contender.timeout
// is 0.1-2 ms of virtual time, while a ManualTimerDriver moves time in 100 us steps
// and fires what is due. Expiry winners linger 20-60 us at kWaiterAfterResolve
// (probability 0.5), so releasers now and then meet waiters whose timer has already
// won (how often depends on the machine: the pinned race is
// releaser_meets_expired_waiter). Returns the summed Waiter counters of all workers.
// Requires: P is a StressPlatform; `src` is not driven by anyone else meanwhile.
template <class P, class Body>
typename Waiter<P>::Counters run_contention(ManualTimerSource& src, int workers, int ops,
                                            Body&& body) {
  ScopedFaultPlan plan(delay_plan(FaultPoint::kWaiterAfterResolve, 20'000, 60'000, 0.5));
  ContentionRun<P> run(src, workers);
  {
    ManualTimerDriver driver(src, Duration::microseconds(100));
    std::vector<std::thread> threads;
    for (int k = 0; k < workers; ++k) {
      threads.emplace_back([&, k] {
        stress::seed_thread(static_cast<std::uint64_t>(k) + 7);
        for (int op = 0; op < ops; ++op) {
          const Contender<P> c{k, Duration::microseconds(100 * (1 + (op * 7 + k * 3) % 20)),
                               run.waiter(k), run};
          body(c);
        }
        run.finished();
      });
    }
    for (auto& t : threads) t.join();
  }
  return run.counters();
}

}  // namespace tlab::testing
