// tlab/sync/wait_list.h: the RFC 0014 waiting list, (waiter, token) in FIFO order,
// and the timed wait on it.
//
// The list a sync/ primitive keeps of parked waiters, each with the token of the
// arming it is parked on (the RFC: "we need to save both the current fiber and the
// cancelation token to the mutex' waiting list"), and wait_on_list(), the acquire
// side of the RFC's worked example: arm a timeout, enqueue (waiter, token), park,
// and on EXPIRED dequeue yourself. TimedMutex and TimedSemaphore share both; their
// release sides differ (and carry different mutants), so each keeps its own.
// Tuned for short lists: a deque, so push/pop are O(1) and a waiter that timed out
// removes itself with a linear scan, which only that waiter pays.
//
// Cost: push O(1) amortised; pop O(1); remove(w) O(n). wait_on_list() = two list
// locks plus Waiter::timeout().
//
// Ground rules: not thread-safe on its own. The owning primitive keeps it in a
// GuardedWaitList, guarded by that struct's mutex, and also resolves popped tokens
// under that mutex (see timed_mutex.h),
// so an entry's Waiter* stays valid while the primitive uses it: a waiter leaves
// its wait only after remove()-ing itself under the same mutex. A waiter has at
// most one entry per list, because it waits on one thing at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "tlab/base/annotations.h"
#include "tlab/clock.h"
#include "tlab/timeout_token.h"
#include "tlab/timer_source.h"

namespace tlab {

template <class W>
class WaitList {
 public:
  struct Entry {
    W* waiter;
    typename W::Token token;
  };

  void push(W* w, typename W::Token t) { q_.push_back(Entry{w, t}); }

  // tlab::WaitList::pop: the oldest entry, or nullopt when empty.
  std::optional<Entry> pop() {
    if (q_.empty()) return std::nullopt;
    Entry e = q_.front();
    q_.pop_front();
    return e;
  }

  // tlab::WaitList::remove: drops w's entry if it is still listed; returns whether
  // it was (false: a releaser popped it already).
  bool remove(const W* w) {
    for (auto it = q_.begin(); it != q_.end(); ++it) {
      if (it->waiter == w) {
        q_.erase(it);
        return true;
      }
    }
    return false;
  }

  std::size_t size() const noexcept { return q_.size(); }
  bool empty() const noexcept { return q_.empty(); }

 private:
  std::deque<Entry> q_;
};

// tlab::GuardedWaitList: a primitive's WaitList, the mutex that guards it and the
// count of waits that ended EXPIRED: the state wait_on_list() shares with its
// primitive, kept in one struct so that clang's thread-safety analysis sees which
// mutex guards which field on both sides of the call (a reference to a bare
// guarded field handed to a function would escape the analysis).
template <class P, class W>
struct GuardedWaitList {
  mutable typename P::Mutex mu;
  WaitList<W> list TLAB_GUARDED_BY(mu);
  std::uint64_t timeouts TLAB_GUARDED_BY(mu) = 0;
};

// tlab::wait_on_list
// The contended acquire of a hand-off primitive. Arms `self` for `d`; in
// before_suspend, under `wl.mu`, calls try_take() once more (the resource may have
// come back since the caller's first try: without this re-check a release() that
// found the list empty would leave us parked until our timeout, a lost wakeup) and
// either takes the resource and ends the arming itself, or enqueues (self, token).
// A releaser that wins the token hands the resource over and resumes us CANCELED.
// Returns true iff the caller now holds the resource. On EXPIRED, removes self from
// the list (unless a releaser already popped it and lost) and counts a timeout.
// Requires: try_take() is called with `wl.mu` held (a lambda that touches fields
// guarded by it says so with assume_held()); d >= 0 (Waiter::timeout throws
// std::invalid_argument otherwise).
// `split_retry_and_enqueue` is a mutant switch the caller computes from its own
// P::mutated(...) (the list is shared, the bug belongs to the primitive); it is a
// constant false under StdPlatform. When set, the re-try and the enqueue run in two
// sections of wl.mu, the lost wakeup this function exists to prevent.
template <class P, class W, TimerSource S, class TryTake>
bool wait_on_list(S& timers, Duration d, W& self, GuardedWaitList<P, W>& wl, TryTake&& try_take,
                  bool split_retry_and_enqueue = false) {
  bool acquired_before_park = false;
  const TimeoutResult r = self.timeout(timers, d, [&](typename W::Token t) {
    {
      typename P::Lock lk(wl.mu);
      if (!try_take()) {
        if (split_retry_and_enqueue) {
          // BUG (mutant): decided "not available" in this section, enqueues in the
          // next one; a release in between finds the list empty and frees the
          // resource, and we park until our timeout with it free.
          lk.unlock();
          P::fault(FaultPoint::kWaitListBeforePush);
          lk.lock();
        } else {
          P::fault(FaultPoint::kWaitListBeforePush);  // under wl.mu: no release gets in
        }
        wl.list.push(&self, t);
        return;
      }
    }
    acquired_before_park = true;  // ours already: end the arming (wins unless expired)
    self.cancel(t);
  });
  if (acquired_before_park || r == TimeoutResult::kCanceled) return true;
  typename P::Lock lk(wl.mu);
  wl.list.remove(&self);  // may already be gone: a releaser popped us and lost
  ++wl.timeouts;
  return false;
}

}  // namespace tlab
