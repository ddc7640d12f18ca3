// tlab/sync/timed_semaphore.h: a counting semaphore with acquire_for(timeout).
//
// Permits plus a FIFO list of (Waiter*, token) pairs, built on Waiter and the RFC
// 0014 token the same way as TimedMutex: release() hands a permit directly to the
// first queued waiter whose token it wins; a waiter whose timer won instead leaves
// with false and never consumes a permit; a permit nobody wins goes back to the
// count. Tuned for pools (pool.h): short lists, FIFO service, no permit ever lost.
//
// Cost: try_acquire() = one lock. acquire_for() = one lock, then, when no permit
// is free, Waiter::timeout() (arm, schedule, park). release(n) = one lock plus one
// resolve per dequeued entry until n permits are placed.
//
// Follows the RFC's CancelableMutex pattern (seed 000), generalised from one owner
// to n permits; same hand-off choice and same lost-wakeup fix as timed_mutex.h
// (the enqueue re-checks the count under the lock).
//
// State (count and list under wl_.mu):
//
//   | permits_ | list      | acquire_for()              | release()                       |
//   |----------|-----------|----------------------------|---------------------------------|
//   | > 0      | empty     | take one, return true      | permits_ + 1                    |
//   | 0        | empty     | enqueue, park              | permits_ + 1                    |
//   | 0        | non-empty | enqueue at the tail, park  | pop until a resolve wins; the   |
//   |          |           |                            | permit goes to the winner       |
//   | > 0      | non-empty | impossible (invariant)     |                                 |
//
// Invariant (check_invariants(), under wl_.mu): permits_ > 0 implies the list is
// empty. It holds at every release of wl_.mu (release() places each permit and
// acquire_for() re-checks and enqueues in one section each), so any thread may
// check it at any time, and a queued waiter whose expiry fires finds no permit: its
// timeout is deserved. A lost wakeup (mutant kSemaphoreCountAfterEmptyCheck) is a
// free permit with a queued waiter that only its timer will wake.
//
// Conservation: initial + released == available() + acquired (by the callers'
// count); check_invariants() checks the structural half, tests check the sum.
// stats().granted counts permits taken (from the count or by hand-off), so a layer
// above (pool.h) can account for permits in transit.
//
// Where waiters live: as in timed_mutex.h, acquire_for(timers, d, waiter) takes the
// caller's Waiter and acquire_for(timers, d) uses this_thread_waiter<P, Bits>().
//
// Ground rules: everything under wl_.mu; popped tokens are resolved under wl_.mu and a
// timed-out waiter removes itself under wl_.mu, so release() never touches a Waiter
// that has left acquire_for(). Lock order: wl_.mu -> a Waiter's mutex.
//
// Memory ordering: all state is under wl_.mu; a hand-off is published through the
// token's acq_rel resolve and the Waiter's mutex (waiter.h).
#pragma once

#include <cstdint>
#include <limits>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/platform.h"
#include "tlab/sync/wait_list.h"
#include "tlab/timer_source.h"
#include "tlab/waiter.h"

namespace tlab {

template <class P, unsigned Bits = 32>
class TimedSemaphore {
 public:
  using WaiterT = Waiter<P, Bits>;
  using Token = typename WaiterT::Token;

  struct Stats {
    std::uint64_t handoffs = 0;      // permits given straight to a queued waiter
    std::uint64_t skipped = 0;       // dequeued entries whose resolve lost (timed out)
    std::uint64_t timeouts = 0;      // acquire_for() calls that returned false
    std::uint64_t lost_permits = 0;  // only the kSemaphoreLostPermit mutant adds here
    std::uint64_t granted = 0;       // permits taken from the count or handed off
    std::uint32_t available = 0;     // permits free, in the same snapshot
    std::size_t waiting = 0;         // queued waiters, in the same snapshot
  };

  explicit TimedSemaphore(std::uint32_t initial) : permits_(initial) {}
  TimedSemaphore(const TimedSemaphore&) = delete;
  TimedSemaphore& operator=(const TimedSemaphore&) = delete;
  ~TimedSemaphore() {
    typename P::Lock lk(wl_.mu);
    TLAB_CHECK(wl_.list.empty(), "TimedSemaphore destroyed with waiters=", wl_.list.size());
  }

  // tlab::TimedSemaphore::try_acquire: takes a permit iff one is free. Never blocks.
  bool try_acquire() {
    typename P::Lock lk(wl_.mu);
    return take_locked();
  }

  // tlab::TimedSemaphore::acquire_for
  // Returns true with one permit, or false once `d` has passed on the timers' clock.
  // Requires: d >= 0 (else std::invalid_argument).
  // Ensures: false consumes no permit and leaves the caller off the list.
  // Thread safety: any thread; `self` must not be in use by another wait.
  template <TimerSource S>
  bool acquire_for(S& timers, Duration d) {
    return acquire_for(timers, d, this_thread_waiter<P, Bits>());
  }
  template <TimerSource S>
  bool acquire_for(S& timers, Duration d, WaiterT& self) {
    checked_delay(d, "TimedSemaphore::acquire_for");
    if (try_acquire()) return true;
    return wait_on_list<P>(timers, d, self, wl_, [this] {
      assume_held(wl_.mu);  // wait_on_list() calls try_take() under wl_.mu
      return take_locked();
    });
  }

  // tlab::TimedSemaphore::release
  // Gives back n permits: each goes to the first queued waiter whose token this
  // call wins, or to the count when the list runs out.
  // Requires: the count stays below 2^32.
  void release(std::uint32_t n = 1) {
    typename P::Lock lk(wl_.mu);
    for (std::uint32_t i = 0; i < n; ++i) {
      bool placed = false;
      while (auto e = wl_.list.pop()) {
        P::fault(FaultPoint::kSemaphoreBeforeResolve);
        if (e->waiter->cancel(e->token)) {
          ++handoffs_;
          ++granted_;
          placed = true;
          break;
        }
        if (P::mutated(Mutant::kSemaphoreLostPermit)) {
          // BUG: treats the timed-out waiter as served; its permit vanishes.
          ++lost_permits_;
          placed = true;
          break;
        }
        ++skipped_;  // its timer won: it leaves with false and takes nothing
      }
      if (!placed) {
        if (P::mutated(Mutant::kSemaphoreCountAfterEmptyCheck)) {
          // BUG (mutant): decided "nobody waits" in this section, adds the permit in
          // the next one; a waiter that enqueues in between (it found permits_ == 0)
          // sleeps until its timeout with this permit free.
          lk.unlock();
          P::fault(FaultPoint::kSemaphoreBeforeCount);
          lk.lock();
        } else {
          P::fault(FaultPoint::kSemaphoreBeforeCount);  // under wl_.mu: no waiter gets in
        }
        TLAB_CHECK(permits_ < std::numeric_limits<std::uint32_t>::max(),
                   "TimedSemaphore::release overflows permits=", permits_);
        ++permits_;
      }
    }
  }

  std::uint32_t available() const {
    typename P::Lock lk(wl_.mu);
    return permits_;
  }
  std::size_t waiting() const {
    typename P::Lock lk(wl_.mu);
    return wl_.list.size();
  }
  Stats stats() const {
    typename P::Lock lk(wl_.mu);
    return Stats{handoffs_,     skipped_, wl_.timeouts,    lost_permits_,
                 granted_,      permits_, wl_.list.size()};
  }

  // tlab::TimedSemaphore::check_invariants: free permits and queued waiters never
  // coexist (no lost wakeup), observed atomically under wl_.mu. Any time, any thread.
  void check_invariants() const {
    typename P::Lock lk(wl_.mu);
    TLAB_CHECK(permits_ == 0 || wl_.list.empty(), "permits=", permits_,
               " with waiters=", wl_.list.size());
  }

 private:
  bool take_locked() TLAB_REQUIRES(wl_.mu) {
    if (permits_ == 0) return false;
    --permits_;
    ++granted_;
    return true;
  }

  GuardedWaitList<P, WaiterT> wl_;  // wl_.mu guards everything below; also counts timeouts
  std::uint32_t permits_ TLAB_GUARDED_BY(wl_.mu);
  std::uint64_t handoffs_ TLAB_GUARDED_BY(wl_.mu) = 0;
  std::uint64_t skipped_ TLAB_GUARDED_BY(wl_.mu) = 0;
  std::uint64_t lost_permits_ TLAB_GUARDED_BY(wl_.mu) = 0;
  std::uint64_t granted_ TLAB_GUARDED_BY(wl_.mu) = 0;
};

}  // namespace tlab
