// tlab/platform/std_platform.h: the production Platform.
//
// Every concurrent algorithm in core/ is a template over a Platform that supplies
// what depends on the environment: atomics, mutex and condition variable, the
// fault hook, the mutant switch and the clock. This one is production: std types,
// and fault()/mutated() are constexpr no-ops, so instrumented code compiles to the
// same machine code as uninstrumented code (the static_asserts at the bottom pin
// that down; tests/bench/platform_overhead_bench.cc measures it).
//
//   member            BasicStdPlatform<C>
//   Atomic<T>         std::atomic<T>
//   Mutex, CondVar    StdMutex (std::mutex), std::condition_variable
//   Lock              StdLock (std::unique_lock<std::mutex>)
//   Clock             C (SteadyClock in production, ManualClock in unit tests)
//   fault(p)          constexpr no-op
//   mutated(m)        constexpr false
//
// Waiting goes through wait()/wait_until()/notify_*() so that RelacyPlatform can
// route the same calls to rl::condition_variable with debug info. StdMutex and
// StdLock are the std types plus clang thread-safety attributes (std_mutex.h), so
// `clang -Wthread-safety` checks every TLAB_GUARDED_BY field of a core template
// instantiated on this platform.
#pragma once

#include <condition_variable>
#include <thread>

#include "tlab/clock.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"
#include "tlab/platform/platform.h"
#include "tlab/platform/std_mutex.h"

namespace tlab {

template <Clock C>
struct BasicStdPlatform {
  template <class T>
  using Atomic = std::atomic<T>;
  using Mutex = StdMutex;
  using CondVar = std::condition_variable;
  using Lock = StdLock;
  using Clock = C;

  static constexpr std::string_view kName = "std";

  static constexpr void fault(FaultPoint) noexcept {}
  static constexpr bool mutated(Mutant) noexcept { return false; }
  static void yield() noexcept { std::this_thread::yield(); }

  static void wait(CondVar& cv, Lock& lock) { cv.wait(lock.native()); }
  // Blocks until notified, spuriously woken, or (real clocks only) `deadline` on
  // `clock` has passed. A virtual clock never times out on its own: whoever moves
  // virtual time must notify (TimerService::wake() does).
  static void wait_until(CondVar& cv, Lock& lock, const Clock& clock, Instant deadline) {
    if constexpr (Clock::kVirtual) {
      (void)clock;
      (void)deadline;
      cv.wait(lock.native());
    } else {
      cv.wait_until(lock.native(), SteadyClock::to_time_point(deadline));
    }
  }
  static void notify_one(CondVar& cv) noexcept { cv.notify_one(); }
  static void notify_all(CondVar& cv) noexcept { cv.notify_all(); }
};

using StdPlatform = BasicStdPlatform<SteadyClock>;
using ManualStdPlatform = BasicStdPlatform<ManualClock>;

// Zero cost, checked at compile time: in production, mutants are constant false
// and fault points are constant expressions, so `if (P::mutated(..))` is folded
// away by the front end, not merely by the optimiser.
static_assert(!StdPlatform::mutated(Mutant::kTokenFlagOnly));
static_assert((StdPlatform::fault(FaultPoint::kTokenBeforeResolveCas), true));
static_assert(Platform<StdPlatform>);
static_assert(Platform<ManualStdPlatform>);

}  // namespace tlab
