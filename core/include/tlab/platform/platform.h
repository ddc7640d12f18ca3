// tlab/platform/platform.h: the Platform concept.
//
// A Platform is a policy type with only static members and nested types. Core
// templates name what they need through it and nothing else, which is what lets
// the same algorithm run in production (StdPlatform), under the stress runner
// (StressPlatform: fault injection and mutants) and under the Relacy model checker
// (RelacyPlatform, models/relacy_platform.h). See docs/design.md, "The Platform policy".
#pragma once

#include <concepts>
#include <cstdint>
#include <thread>
#include <utility>

#include "tlab/clock.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab {

template <class P>
concept Platform = requires(typename P::CondVar& cv, typename P::Lock& lock,
                            const typename P::Clock& clock, Instant t) {
  typename P::template Atomic<std::uint32_t>;
  typename P::template Atomic<std::uint64_t>;
  typename P::Mutex;
  typename P::CondVar;
  typename P::Lock;
  requires Clock<typename P::Clock>;
  { P::mutated(Mutant::kTokenFlagOnly) } -> std::convertible_to<bool>;
  P::fault(FaultPoint::kTokenBeforeResolveCas);
  P::yield();
  P::wait(cv, lock);
  P::wait_until(cv, lock, clock, t);
  P::notify_one(cv);
  P::notify_all(cv);
};

// ThreadOf<P>, spawn_thread<P>(f): the threads a core template starts for itself
// (TimerService's timer thread, Executor's workers and metronome). A Platform may
// supply its own (`P::Thread` and `P::spawn(f)`: SimPlatform's are tasks of the
// simulation, which its scheduler must own); every other Platform gets
// std::thread. Either type has joinable(), join() and get_id().
template <class P>
struct ThreadTraits {
  using Thread = std::thread;
  template <class F>
  static Thread spawn(F&& f) {
    return std::thread(std::forward<F>(f));
  }
};
template <class P>
  requires requires { typename P::Thread; }
struct ThreadTraits<P> {
  using Thread = typename P::Thread;
  template <class F>
  static Thread spawn(F&& f) {
    return P::spawn(std::forward<F>(f));
  }
};
template <class P>
using ThreadOf = typename ThreadTraits<P>::Thread;
template <class P, class F>
ThreadOf<P> spawn_thread(F&& f) {
  return ThreadTraits<P>::spawn(std::forward<F>(f));
}

}  // namespace tlab
