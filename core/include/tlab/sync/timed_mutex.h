// tlab/sync/timed_mutex.h: the RFC 0014 CancelableMutex, with lock_for(timeout).
//
// A mutual-exclusion lock whose lock_for(timers, d) gives up after `d`. Waiters
// queue as (Waiter*, token) pairs, exactly as the RFC's worked example does; the
// timer that bounds each wait lives on a TimerSource. Tuned for correctness under
// the cancel-vs-expiry race, FIFO fairness among waiters, and an uncontended fast
// path that never touches the list.
//
// Cost: try_lock() = one CAS. Uncontended lock_for() = one CAS. Contended
// lock_for() = one list lock + Waiter::timeout() (arm, schedule, park). unlock()
// with no waiters = one list lock + one store; with waiters = one list lock + one
// resolve per dequeued entry until one wins (entries whose timeout already expired
// are skipped) + one resume.
//
// Follows Crystal RFC 0014's CancelableMutex (seed 000) and departs from it twice:
//   - Hand-off, not wake-and-retry. When unlock() wins a waiter's token it does not
//     release the lock: ownership passes to that waiter, which returns true as soon
//     as it resumes with CANCELED. Why: (1) a woken waiter can never lose the lock
//     to a barging thread and then time out although it was woken, so "woken" means
//     "acquired" and waiters are served FIFO (no starvation); (2) lock_for() needs
//     no retry loop or remaining-time bookkeeping; (3) the mutex's own safety then
//     rests on the RFC rule "only the winner of resolve enqueues the fiber": a
//     double resume hands the lock to two threads, which the contention tests see
//     as overlapping holders. The cost is the classic hand-off convoy: a handed-over
//     lock is idle until its new owner is scheduled. (The RFC's retry design would
//     have to re-check remaining time on every CANCELED; ours returns.)
//   - The RFC's example has a lost wakeup: a waiter whose try fails, then enqueues
//     after an unlock() has already found the list empty, sleeps until its timeout
//     although the lock is free. Here the enqueue step re-tries the lock under the
//     list lock, and unlock() releases the lock under the same list lock only when
//     the list is empty, so "lock free and a waiter queued" can never be observed
//     under the list lock (check_invariants() checks exactly that).
//
// State (word held_ plus the list, both changed under wl_.mu except the
// fast-path CAS 0 -> 1, which needs no list because it only succeeds when free):
//
//   | held_ | list      | lock_for()                         | unlock()                     |
//   |-------|-----------|------------------------------------|------------------------------|
//   | 0     | empty     | CAS 0->1, returns true              | caller bug (TLAB_CHECK)      |
//   | 1     | empty     | enqueue (waiter, token), park       | held_ = 0                    |
//   | 1     | non-empty | enqueue at the tail, park           | pop until a resolve wins;    |
//   |       |           |                                     | winner owns it (held_ stays) |
//   | 0     | non-empty | impossible (invariant)              |                              |
//
// Invariant (check_invariants(), under wl_.mu): held_ == 0 implies the list is
// empty. It holds at every release of wl_.mu, not only at rest, so any thread may
// check it at any time. It is what makes a timeout deserved: a queued waiter whose
// expiry fires finds the lock held, so "timed out" means "the lock was taken for the
// whole time I was queued". A lost wakeup (mutant kMutexEnqueueAfterRetry) is a
// free lock with a queued waiter that only its timer will wake.
//
// Where waiters live: lock_for(timers, d, waiter) takes the caller's Waiter
// (Relacy models and the stress runner pass their own, so they can read its
// counters); lock_for(timers, d) uses this_thread_waiter<P, Bits>(), the calling
// thread's thread_local Waiter. Either way any thread may wait on the mutex.
//
// Ground rules: unlock() only by the owner. The list, and every resolve() of a
// listed token, happen under wl_.mu; a waiter whose timeout expired takes itself
// off the list under wl_.mu, so unlock() never touches a Waiter that has left
// lock_for(). Lock order: wl_.mu -> a Waiter's internal mutex; never the reverse.
//
// Memory ordering: try_lock's CAS is acquire and pairs with unlock's release store
// of held_ = 0. A hand-off publishes the critical section through the token's
// acq_rel resolve and the Waiter's mutex (waiter.h).
#pragma once

#include <cstdint>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/platform.h"
#include "tlab/sync/wait_list.h"
#include "tlab/timer_source.h"
#include "tlab/waiter.h"

namespace tlab {

template <class P, unsigned Bits = 32>
class TimedMutex {
 public:
  using WaiterT = Waiter<P, Bits>;
  using Token = typename WaiterT::Token;

  struct Stats {
    std::uint64_t handoffs = 0;  // unlock() passed the lock to a waiter
    std::uint64_t skipped = 0;   // dequeued entries whose resolve lost (already expired)
    std::uint64_t timeouts = 0;  // lock_for() calls that returned false
  };

  TimedMutex() = default;
  TimedMutex(const TimedMutex&) = delete;
  TimedMutex& operator=(const TimedMutex&) = delete;
  ~TimedMutex() {
    typename P::Lock lk(wl_.mu);
    TLAB_CHECK(wl_.list.empty(), "TimedMutex destroyed with waiters=", wl_.list.size());
  }

  // tlab::TimedMutex::try_lock: takes the lock iff it is free. Never blocks.
  // Memory ordering: acquire on success, pairs with unlock()'s release store.
  bool try_lock() {
    std::uint32_t expected = 0;
    return held_.compare_exchange_strong(expected, 1, std::memory_order::acquire,
                                         std::memory_order::relaxed);  // failure: no data read
  }

  // tlab::TimedMutex::lock_for
  // Returns true once the caller owns the lock, false if `d` passed first (on the
  // timers' clock). d == 0 means "try, then give up at the next timer pass".
  // Requires: d >= 0 (else std::invalid_argument); the caller does not own the lock.
  // Ensures: on false, the caller is not on the list and owns nothing.
  // Thread safety: any thread; `self` must not be in use by another wait.
  template <TimerSource S>
  bool lock_for(S& timers, Duration d) {
    return lock_for(timers, d, this_thread_waiter<P, Bits>());
  }
  template <TimerSource S>
  bool lock_for(S& timers, Duration d, WaiterT& self) {
    checked_delay(d, "TimedMutex::lock_for");
    if (try_lock()) return true;
    P::fault(FaultPoint::kMutexBeforeEnqueue);
    return wait_on_list<P>(timers, d, self, wl_, [this] { return try_lock(); },
                           P::mutated(Mutant::kMutexEnqueueAfterRetry));
  }

  // tlab::TimedMutex::unlock
  // Requires: the caller owns the lock.
  // Ensures: the first queued waiter whose token this call wins owns the lock and
  // is resumed; if none wins, the lock is free.
  void unlock() {
    typename P::Lock lk(wl_.mu);
    TLAB_CHECK(held_.load(std::memory_order::relaxed) == 1,  // owner-only read
               "TimedMutex::unlock of an unlocked mutex");
    while (auto e = wl_.list.pop()) {
      P::fault(FaultPoint::kMutexUnlockBeforeResolve);
      if (P::mutated(Mutant::kMutexUnlockNoResolve)) {
        // BUG: hands the lock to the first entry without checking that it won the
        // token. If that waiter already expired, nobody owns the lock any more.
        e->waiter->cancel(e->token);
        ++handoffs_;
        return;
      }
      if (e->waiter->cancel(e->token)) {
        ++handoffs_;  // held_ stays 1: ownership passes to the resumed waiter
        return;
      }
      ++skipped_;  // its timer won: it is leaving with false; try the next one
    }
    held_.store(0, std::memory_order::release);  // pairs with try_lock()'s acquire CAS
  }

  bool held() const noexcept { return held_.load(std::memory_order::acquire) != 0; }
  std::size_t waiting() const {
    typename P::Lock lk(wl_.mu);
    return wl_.list.size();
  }
  Stats stats() const {
    typename P::Lock lk(wl_.mu);
    return Stats{handoffs_, skipped_, wl_.timeouts};
  }

  // tlab::TimedMutex::check_invariants: a free lock has no waiters (the no-lost-
  // wakeup invariant), observed atomically under the list lock.
  void check_invariants() const {
    typename P::Lock lk(wl_.mu);
    const std::uint32_t h = held_.load(std::memory_order::relaxed);  // stable under wl_.mu
    TLAB_CHECK(h == 1 || wl_.list.empty(), "free lock with waiters=", wl_.list.size());
  }

 private:
  typename P::template Atomic<std::uint32_t> held_{0};  // 0 free, 1 owned
  GuardedWaitList<P, WaiterT> wl_;  // wl_.mu is the list lock; also counts timeouts
  std::uint64_t handoffs_ TLAB_GUARDED_BY(wl_.mu) = 0;
  std::uint64_t skipped_ TLAB_GUARDED_BY(wl_.mu) = 0;
};

}  // namespace tlab
