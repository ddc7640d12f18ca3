// examples/sim/timed_latch/latch.h: a user's own timed primitive, templated over
// tlab's Platform as core/ is, so the same code runs in production (StdPlatform)
// and under tlab's deterministic simulation (SimPlatform).
//
// TimedLatch<P, Buggy>: open() once; wait_until(deadline) returns true once the
// latch is open, false if the deadline passes first. Buggy = true is a classic
// lost notify: the waiter reads `open_` and starts its wait in two critical
// sections, so an open() between them notifies nobody and the waiter sleeps to its
// deadline although the latch opened long before.
//
// Cost: one mutex and one condition variable. Memory ordering: everything under mu_.
#pragma once

#include <optional>

#include "tlab/clock.h"
#include "tlab/platform/platform.h"

template <class P, bool Buggy = false>
class TimedLatch {
 public:
  explicit TimedLatch(const typename P::Clock& clock) : clock_(clock) {}

  void open() {
    typename P::Lock lock(mu_);
    open_ = true;
    opened_at_ = clock_.now();
    P::notify_all(cv_);
  }

  // Whether the latch opened (true) or `deadline` passed first (false).
  bool wait_until(tlab::Instant deadline) {
    typename P::Lock lock(mu_);
    if constexpr (Buggy) {
      const bool seen = open_;
      lock.unlock();  // BUG: the check and the wait are two critical sections
      if (seen) return true;
      lock.lock();
      P::wait_until(cv_, lock, clock_, deadline);  // an open() in between is not seen
      return open_;
    }
    while (!open_) {
      if (clock_.now() >= deadline) return false;
      P::wait_until(cv_, lock, clock_, deadline);
    }
    return true;
  }

  // When open() ran (nullopt: not yet).
  std::optional<tlab::Instant> opened_at() {
    typename P::Lock lock(mu_);
    return open_ ? std::optional<tlab::Instant>(opened_at_) : std::nullopt;
  }

 private:
  const typename P::Clock& clock_;
  typename P::Mutex mu_;
  typename P::CondVar cv_;
  bool open_ = false;
  tlab::Instant opened_at_{};
};
