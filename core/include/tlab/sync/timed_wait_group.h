// tlab/sync/timed_wait_group.h: a wait group whose wait can time out (seed 002).
//
// add(n) announces n tasks, each task calls done() once, and wait_for(timers, d)
// blocks until all are done (returns true) or d has passed (returns false). The
// timeout *completes* the group, as Go's TimedWaitGroup does, so every later wait
// returns at once, and a done() that arrives after the timeout must be harmless.
// Tuned for fan-out/fan-in with a deadline: done() is one CAS, no lock unless it
// is the last one.
//
// The counter is seed 002's single 64-bit word, split in two 32-bit halves:
//
//   bits 63..32  `pending`: decremented by done() and zeroed by the timeout
//   bits 31..0   `unfinished`: decremented only by done()
//
//   add(n):     both halves += n                              (one fetch_add)
//   done():     if pending > 0: CAS (p, u) -> (p - 1, u - 1)  (loop); else nothing
//   time_out(): if pending > 0: CAS (p, u) -> (0, u)          (loop)
//   complete:   pending == 0;  all done in time: the whole word == 0
//
// A done() after a timeout finds pending == 0 and does nothing, so no half ever goes
// below zero: that is the point of the split (a plain counter that the timeout
// zeroes goes negative on the straggler's done(); mutant kWaitGroupPlainCounter).
//
// Cost: add = one fetch_add; done = one CAS (retried under contention), plus one
// lock + notify_all for the done() that completes the group; wait_for = one
// lock, one schedule_at, one park (O(1) link/unlink of its record), one cancel(id).
// time_out = one CAS + lock + notify_all. check_invariants = O(parked waiters).
//
// Departs from seed 002: Go embeds a sync.WaitGroup for the blocking part and lets
// a time.AfterFunc run the timeout; here the blocking part is P::Mutex + CondVar
// (a waiter sleeps until pending == 0) and the timeout is a TimerSource callback,
// removed lazily and drained (as in waiter.h) so a wait_for() never returns while
// its callback might still run. Several threads may wait_for() at once; the first
// deadline to pass completes the group for all of them. add() follows Go (both
// halves grow); after a timeout that starts a round that can only report false,
// because the old stragglers stay in `unfinished` (their done() is absorbed).
// done() without a matching add() throws std::logic_error.
//
// Invariant (check_invariants(), under mu_): pending <= unfinished, and no waiter is
// parked on the group past a completion it was not woken for. Every waiter that
// parks registers a record (the completion count it waits past, `seen`, and the
// notify count when it parked) in an intrusive list under mu_; every completion
// bumps completions_ and notifies in one mu_ section. So at every release of mu_,
// for each parked record: completions_ == seen (nothing to wake for yet), or a
// notify_all came after it parked. The counter word reaching pending == 0 is not
// part of the statement: done()'s CAS publishes it outside mu_, just before
// wake_all(), and the waiter's loop reads both. A parked waiter whose deadline fires
// therefore had no completion to see: its timeout is deserved. A lost wakeup
// (mutant kWaitGroupParkWithoutRecheck) is a record parked after the completion it
// waits for, with no notify since: only its timer wakes it.
//
// Ground rules: add/done/time_out/wait_for from any thread. The group must outlive
// every wait_for() and every done() in flight.
//
// Memory ordering: done()'s CAS is acq_rel and wait_for()'s final load is acquire,
// so a true return sees every task's writes made before its done(). The wait
// itself re-reads the word under mu_, and every completer takes mu_ before
// notifying, so no wakeup is lost.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/platform.h"
#include "tlab/timer_source.h"

namespace tlab {

template <class P>
class TimedWaitGroup {
 public:
  TimedWaitGroup() = default;
  TimedWaitGroup(const TimedWaitGroup&) = delete;
  TimedWaitGroup& operator=(const TimedWaitGroup&) = delete;

  // tlab::TimedWaitGroup::add: n more tasks to wait for.
  // Requires: `unfinished` + n < 2^32 (checked).
  void add(std::uint32_t n) {
    if (n == 0) return;
    // acq_rel: pairs with done()'s CAS like any other read-modify-write of the word.
    const std::uint64_t before = counter_.fetch_add(both(n), std::memory_order::acq_rel);
    TLAB_CHECK(std::uint64_t{low(before)} + n <= std::numeric_limits<std::uint32_t>::max(),
               "TimedWaitGroup::add overflows: unfinished=", low(before), " n=", n);
  }

  // tlab::TimedWaitGroup::done: one task finished. After a timeout this is a no-op.
  // Throws std::logic_error if there is no matching add() (both halves zero).
  // Memory ordering: acq_rel CAS, pairs with wait_for()'s acquire load.
  void done() {
    if (P::mutated(Mutant::kWaitGroupPlainCounter)) {
      // BUG: a plain counter: decrement unconditionally. After a timeout has zeroed
      // `pending`, the straggler's done() drives it below zero (wraps to 2^32 - 1).
      P::fault(FaultPoint::kWaitGroupBeforeCas);
      const std::uint64_t before = counter_.fetch_sub(both(1), std::memory_order::acq_rel);
      if (high(before) == 1) wake_all();
      return;
    }
    std::uint64_t c = counter_.load(std::memory_order::acquire);  // pairs with the CASes
    while (high(c) > 0) {
      P::fault(FaultPoint::kWaitGroupBeforeCas);
      if (counter_.compare_exchange_weak(c, c - both(1), std::memory_order::acq_rel,
                                         std::memory_order::acquire)) {
        if (high(c) == 1) wake_all();  // this done() completed the group
        return;
      }
    }
    if (low(c) == 0) throw std::logic_error("TimedWaitGroup::done without a matching add");
    // pending == 0 < unfinished: the group timed out; this straggler is absorbed.
  }

  // tlab::TimedWaitGroup::time_out: completes the group now, as its deadline does.
  // Returns true iff this call completed it (pending was > 0). wait_for()'s timer
  // calls this; callers may too (an explicit abort).
  bool time_out() {
    std::uint64_t c = counter_.load(std::memory_order::acquire);  // pairs with the CASes
    while (high(c) > 0) {
      P::fault(FaultPoint::kWaitGroupBeforeCas);
      if (counter_.compare_exchange_weak(c, std::uint64_t{low(c)}, std::memory_order::acq_rel,
                                         std::memory_order::acquire)) {
        wake_all();
        return true;
      }
    }
    return false;
  }

  // tlab::TimedWaitGroup::wait_for
  // Blocks until the group is complete (all done, or timed out by any deadline),
  // arming a timeout at deadline_after(timers.now(), d). Returns true iff every
  // task called done() before the group completed.
  // Requires: d >= 0 (else std::invalid_argument).
  // Ensures: on return the timer is cancelled or its callback has finished.
  // Thread safety: any number of threads at once.
  template <TimerSource S>
  bool wait_for(S& timers, Duration d) {
    checked_delay(d, "TimedWaitGroup::wait_for");
    // Wait for a completion that happens after this point, not merely for
    // pending == 0 at the moment we look: a waiter woken by a completion returns
    // even if add() has already begun a new round (or, under the plain-counter
    // mutant, a straggler has already driven the counter below zero).
    std::uint64_t seen;
    {
      typename P::Lock lk(mu_);
      seen = completions_;
    }
    if (high(counter_.load(std::memory_order::acquire)) == 0) return all_done();
    bool callback_finished = false;  // guarded by mu_; lives until the drain below
    const auto id = timers.schedule_at(
        deadline_after<P>(timers.now(), d), typename S::Callback([this, &callback_finished] {
          time_out();
          typename P::Lock lk(mu_);
          callback_finished = true;
          ++notifies_;
          P::notify_all(cv_);  // under mu_: wait_for may return right after
        }));
    typename P::Lock lk(mu_);
    Parked me{seen};
    if (P::mutated(Mutant::kWaitGroupParkWithoutRecheck) &&
        high(counter_.load(std::memory_order::acquire)) != 0 && completions_ == seen) {
      // BUG (mutant): decided "incomplete" in this section, parks in the next one
      // without looking again; a completion in between notified nobody, so only
      // the deadline wakes us.
      lk.unlock();
      P::fault(FaultPoint::kWaitGroupBeforePark);
      lk.lock();
      park_locked(me, lk);
    } else {
      P::fault(FaultPoint::kWaitGroupBeforePark);  // under mu_: no completion gets in
    }
    while (high(counter_.load(std::memory_order::acquire)) != 0 && completions_ == seen) {
      park_locked(me, lk);
    }
    lk.unlock();
    if (!timers.cancel(id)) {
      lk.lock();
      while (!callback_finished) P::wait(cv_, lk);  // the callback is running or ran
    }
    return all_done();
  }

  // Snapshots. pending() is signed so that a counter driven below zero (only the
  // plain-counter mutant can) shows as negative.
  std::int64_t pending() const {
    return static_cast<std::int32_t>(high(counter_.load(std::memory_order::acquire)));
  }
  std::uint32_t unfinished() const { return low(counter_.load(std::memory_order::acquire)); }
  bool complete() const { return high(counter_.load(std::memory_order::acquire)) == 0; }

  // tlab::TimedWaitGroup::check_invariants: pending <= unfinished (the timeout only
  // ever lowers pending; done() lowers both), which also means never negative; and
  // no parked waiter missed a completion (file comment), observed under mu_. Any
  // time, any thread.
  void check_invariants() const {
    typename P::Lock lk(mu_);
    const std::uint64_t c = counter_.load(std::memory_order::acquire);
    TLAB_CHECK(high(c) <= low(c), "pending=", high(c), " > unfinished=", low(c));
    for (const Parked* p = parked_; p != nullptr; p = p->next) {
      TLAB_CHECK(p->seen == completions_ || p->notifies != notifies_,
                 "a waiter parked past completion ", p->seen, " (completions=", completions_,
                 ") and no notify since it parked (notifies=", notifies_, "): a lost wakeup");
    }
  }

 private:
  static constexpr std::uint32_t high(std::uint64_t c) {
    return static_cast<std::uint32_t>(c >> 32);
  }
  static constexpr std::uint32_t low(std::uint64_t c) { return static_cast<std::uint32_t>(c); }
  static constexpr std::uint64_t both(std::uint32_t n) { return (std::uint64_t{n} << 32) | n; }

  bool all_done() const { return counter_.load(std::memory_order::acquire) == 0; }

  // A waiter's record while it sleeps in wait_for (see the invariant); on its stack.
  struct Parked {
    std::uint64_t seen;           // the completion count it waits to see move
    std::uint64_t notifies = 0;   // notifies_ when it parked
    Parked* next = nullptr;
    Parked* prev = nullptr;
  };

  // Registers `me`, sleeps once on cv_, unregisters. Requires: mu_ held by lk.
  void park_locked(Parked& me, typename P::Lock& lk) TLAB_REQUIRES(mu_) {
    me.notifies = notifies_;
    me.prev = nullptr;
    me.next = parked_;
    if (parked_ != nullptr) parked_->prev = &me;
    parked_ = &me;
    P::wait(cv_, lk);
    (me.prev != nullptr ? me.prev->next : parked_) = me.next;
    if (me.next != nullptr) me.next->prev = me.prev;
  }

  // Takes mu_ before notifying, so a waiter between its check and P::wait cannot
  // miss the wakeup.
  void wake_all() {
    typename P::Lock lk(mu_);
    ++completions_;
    ++notifies_;
    P::notify_all(cv_);
  }

  typename P::template Atomic<std::uint64_t> counter_{0};  // seed 002's split word
  mutable typename P::Mutex mu_;                           // the sleep/wake handshake
  typename P::CondVar cv_;
  std::uint64_t completions_ TLAB_GUARDED_BY(mu_) = 0;  // times pending reached 0
  std::uint64_t notifies_ TLAB_GUARDED_BY(mu_) = 0;     // notify_all calls on cv_
  Parked* parked_ TLAB_GUARDED_BY(mu_) = nullptr;       // waiters asleep in wait_for
};

}  // namespace tlab
