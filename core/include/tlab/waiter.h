// tlab/waiter.h: a parked thread waiting on its RFC 0014 TimeoutToken.
//
// A Waiter is the C++ stand-in for the RFC's Fiber: one thread at a time parks in
// timeout(timers, d, before_suspend) and is unparked by whoever wins resolve() on
// the token it armed, either a canceller (a mutex's unlock, a semaphore's release,
// a test) through cancel(token), or the timer it scheduled on a TimerSource. The
// winner, and only the winner, resumes it; timeout() then returns kCanceled or
// kExpired. Tuned for the sync/ primitives: one arming per wait, lazy removal of
// the timer entry, no allocation beyond what the TimerSource does.
//
// Cost: timeout() = one token arm (load + store), one schedule_at, one park
// (mutex + condition variable), and, when a canceller won, one cancel(id).
// cancel(token) = one CAS; the winner adds one lock/notify/unlock.
// Expiry = the same as cancel, run by the TimerSource's thread.
//
// Follows Crystal RFC 0014 (seed 000): `Fiber.timeout(duration, &before_suspend)`
// and `Fiber#resolve_timeout?`. Departs from it in two places:
//   - Parking is a mutex + condition variable (P::wait), not a fiber switch.
//   - Lazy removal is *drained*: the RFC says the timer event is removed "before it
//     goes out of scope". timeout() goes one step further and does not return while
//     its timer callback may still touch *this: if cancel(id) reports that the
//     callback has already been taken by the TimerSource, timeout() waits until the
//     callback has finished (a short, bounded wait: the callback only does one CAS
//     and, if it wins, one lock). So after timeout() returns, nothing from that
//     arming touches the Waiter but stale cancellers, which the owner controls.
//
// State machine of one arming (all transitions of `signals_`, `in_timeout_`,
// `timers_outstanding_` under mu_; the token word is the RFC's):
//
//   | state              | event                              | next               |
//   |--------------------|------------------------------------|--------------------|
//   | idle               | timeout(): arm, schedule           | armed              |
//   | armed              | before_suspend(token) returns      | parked             |
//   | armed / parked     | cancel(t) wins resolve             | resumed(CANCELED)  |
//   | armed / parked     | timer callback wins resolve        | resumed(EXPIRED)   |
//   | armed / parked     | cancel(t) / callback loses         | unchanged          |
//   | resumed(CANCELED)  | cancel(id) true, or callback done  | idle, returns      |
//   | resumed(EXPIRED)   | (callback finished when it resumed)| idle, returns      |
//
// A resume that arrives while already resumed, or with no arming live, is a double
// resume (a bug: only the kWaiterResumeOnLostResolve mutant or a broken token can
// cause one). It is counted, and its signal is left pending so that it surfaces the
// way it does in a real runtime: the next timeout() returns at once with a stale
// result. If the waiter then finds its own token still armed it disarms it itself
// (counted as a stale wakeup) so that the token's state machine stays intact.
//
// Ground rules:
//   - timeout() only from one thread at a time (the owner); a Waiter waits on one
//     timeout at a time, as the RFC's fiber does.
//   - cancel(token) from any thread, any number of times, with any token.
//   - Lifetime: a Waiter must outlive every timer it armed and every canceller that
//     may still call cancel() on it. timeout() itself guarantees the first half (the
//     drain above) for any TimerSource that honours its contract, i.e. runs every
//     callback for which cancel(id) returned false. Cancellers are the caller's
//     business: the sync/ primitives resolve under their list lock and a waiter
//     takes itself off the list under that lock before returning, so no canceller
//     can hold a Waiter* past its wait.
//   - this_thread_waiter<P, Bits>() is the per-thread Waiter the sync/ primitives
//     use when the caller does not pass one; it is safe because of the drain.
//
// Memory ordering: the winner of resolve() (acq_rel CAS, timeout_token.h) delivers
// the result under mu_, and the waiter reads it under mu_; so everything the winner
// did before cancel() (releasing a lock, granting a permit) happens-before
// timeout() returns. The per-waiter counters are guarded by mu_.
#pragma once

#include <cstdint>
#include <utility>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/platform.h"
#include "tlab/timeout_token.h"
#include "tlab/timer_source.h"

namespace tlab {

template <class P, unsigned Bits = 32>
class Waiter {
 public:
  using TokenWord = TimeoutToken<P, Bits>;
  using Token = typename TokenWord::Token;

  // What happened to this waiter so far. A healthy waiter, when idle, has
  // resumes == armings == cancels + expiries and no double resumes or stale
  // wakeups; the stress runner reads these to report double resume and lost
  // wakeup (parked() with armings > resumes and no timer left to fire).
  struct Counters {
    std::uint64_t armings = 0;         // timeout() calls that armed the token
    std::uint64_t resumes = 0;         // unparks delivered (winners + buggy losers)
    std::uint64_t cancels = 0;         // resumes carrying kCanceled
    std::uint64_t expiries = 0;        // resumes carrying kExpired
    std::uint64_t lost_resolves = 0;   // cancel()/expiry calls that lost resolve
    std::uint64_t double_resumes = 0;  // resumes of an already-resumed or dead arming
    std::uint64_t stale_wakeups = 0;   // timeout() returned on a signal not its own
  };

  Waiter() = default;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  ~Waiter() {
    typename P::Lock lk(mu_);
    TLAB_CHECK(!in_timeout_, "Waiter destroyed inside timeout()");
  }

  // tlab::Waiter::timeout
  // Arms the token, schedules the expiry at deadline_after(timers.now(), d), calls
  // before_suspend(token) so the caller can publish (this, token), parks until a
  // resolver wins, removes the timer entry (drained, see above), and returns who won.
  // Requires: d >= 0 (else std::invalid_argument, nothing armed); the calling thread
  // owns this Waiter and is not already inside timeout().
  // Ensures: returns exactly once per arming, after exactly one winning resolve;
  // kExpired no earlier than the deadline on timers.now(). When timeout() returns,
  // the timer callback has been cancelled or has finished.
  // Throws: what schedule_at() throws (nothing stays armed), or what before_suspend
  // throws (the token is resolved by the waiter itself or by whoever won first, and
  // the timer is drained before the exception propagates).
  template <TimerSource S, class BeforeSuspend>
  TimeoutResult timeout(S& timers, Duration d, BeforeSuspend&& before_suspend) {
    checked_delay(d, "Waiter::timeout");
    const Instant deadline = deadline_after<P>(timers.now(), d);
    const Token t = token_.arm();
    {
      typename P::Lock lk(mu_);
      TLAB_CHECK(!in_timeout_, "Waiter::timeout re-entered");
      in_timeout_ = true;
      current_ = t;
      resumed_current_ = false;
      ++armings_;
      ++timers_outstanding_;  // before schedule_at: the callback may run at once
    }
    typename S::TimerId id;
    try {
      id = timers.schedule_at(deadline, typename S::Callback([this, t] { on_timer(t); }));
    } catch (...) {
      // Nobody else has seen t (before_suspend has not run) and the source did not
      // take the callback, so this resolve wins and the arming ends here.
      const bool won = token_.resolve(t);
      typename P::Lock lk(mu_);
      TLAB_CHECK(won, "Waiter::timeout: lost its own token after a failed schedule_at");
      --timers_outstanding_;
      --armings_;
      in_timeout_ = false;
      throw;
    }
    try {
      before_suspend(t);
    } catch (...) {
      cancel(t);  // wins unless someone already did; either way a resume is due
      park_and_finish(timers, id, t);
      throw;
    }
    P::fault(FaultPoint::kWaiterBeforeSuspend);
    return park_and_finish(timers, id, t);
  }

  // tlab::Waiter::cancel
  // Resolves the arming `t` and, iff that wins, resumes the waiter with kCanceled.
  // Returns whether it won. A stale or already-resolved token returns false and
  // changes nothing (the RFC: "On failure, the caller musn't [enqueue]").
  // Thread safety: any thread. Requires: *this is alive (see Ground rules).
  bool cancel(Token t) { return resolve_and_resume(t, TimeoutResult::kCanceled); }

  // tlab::Waiter::parked: true while the owner is blocked in timeout(). Snapshot.
  // Mutant kDataRacePlainFlag: the "cheap peek" that skips mu_ and reads the plain
  // bool the owner writes under mu_: a data race with no visible symptom on x86,
  // which ThreadSanitizer reports (the tlab TSan build's showcase).
  bool parked() const TLAB_NO_THREAD_SAFETY_ANALYSIS {
    if (P::mutated(Mutant::kDataRacePlainFlag)) return parked_;  // BUG (mutant)
    typename P::Lock lk(mu_);
    return parked_;
  }
  // tlab::Waiter::token_armed: snapshot of the token word's armed flag.
  bool token_armed() const noexcept { return token_.armed(); }

  Counters counters() const {
    typename P::Lock lk(mu_);
    return Counters{armings_,       resumes_,        cancels_,      expiries_,
                    lost_resolves_, double_resumes_, stale_wakeups_};
  }

  // tlab::Waiter::check_invariants: aborts (TLAB_CHECK, operands printed) on a
  // double resume, a stale wakeup, or counters that do not add up.
  void check_invariants() const {
    typename P::Lock lk(mu_);
    TLAB_CHECK(double_resumes_ == 0, "double resume: double_resumes=", double_resumes_);
    TLAB_CHECK(stale_wakeups_ == 0, "stale wakeup: stale_wakeups=", stale_wakeups_);
    TLAB_CHECK(resumes_ == cancels_ + expiries_, "resumes=", resumes_, " cancels=", cancels_,
               " expiries=", expiries_);
    TLAB_CHECK(resumes_ <= armings_, "resumes=", resumes_, " armings=", armings_);
    if (!in_timeout_) {
      TLAB_CHECK(resumes_ == armings_, "idle with resumes=", resumes_, " armings=", armings_);
      TLAB_CHECK(timers_outstanding_ == 0, "idle with timers_outstanding=", timers_outstanding_);
    }
  }

 private:
  // Shared by cancel() and nothing else; the timer path is on_timer().
  bool resolve_and_resume(Token t, TimeoutResult r) {
    const bool won = token_.resolve(t);
    if (won) P::fault(FaultPoint::kWaiterAfterResolve);
    typename P::Lock lk(mu_);
    if (won) {
      deliver_locked(t, r);
    } else {
      ++lost_resolves_;
      if (P::mutated(Mutant::kWaiterResumeOnLostResolve)) {
        deliver_locked(t, r);  // BUG: a loser resumes the waiter anyway
      }
    }
    return won;
  }

  // The expiry path: what the TimerSource runs at the deadline. Same rule as
  // cancel(), plus the end of the callback's business with *this (the drain).
  void on_timer(Token t) {
    const bool won = token_.resolve(t);
    if (won) P::fault(FaultPoint::kWaiterAfterResolve);
    typename P::Lock lk(mu_);
    if (won) {
      deliver_locked(t, TimeoutResult::kExpired);
    } else {
      ++lost_resolves_;
      if (P::mutated(Mutant::kWaiterResumeOnLostResolve)) {
        deliver_locked(t, TimeoutResult::kExpired);  // BUG: a loser resumes anyway
      }
    }
    --timers_outstanding_;
    // Under mu_, so the owner cannot return and destroy *this before we unlock.
    P::notify_one(cv_);
  }

  // Requires: mu_ held. Records a resume and wakes the owner. Notifying under mu_
  // is what lets the owner destroy *this as soon as it has seen the signal.
  void deliver_locked(Token t, TimeoutResult r) TLAB_REQUIRES(mu_) {
    ++resumes_;
    (r == TimeoutResult::kCanceled ? cancels_ : expiries_) += 1;
    if (!in_timeout_ || t != current_ || resumed_current_) {
      ++double_resumes_;
    } else {
      resumed_current_ = true;
    }
    ++signals_;
    result_ = r;
    P::notify_one(cv_);
  }

  template <class S>
  TimeoutResult park_and_finish(S& timers, const typename S::TimerId& id, Token t) {
    typename P::Lock lk(mu_);
    parked_ = true;
    while (signals_ == 0) P::wait(cv_, lk);
    parked_ = false;
    --signals_;
    const TimeoutResult r = result_;
    if (token_.raw() == t.raw()) {
      // Woken while our own arming is still armed: the signal was not ours (a
      // double resume of an earlier arming). Disarm it ourselves; if we lose, a
      // legitimate resolver got there first and its signal stays pending.
      if (token_.resolve(t)) ++stale_wakeups_;
    }
    if (timers_outstanding_ > 0) {
      // Lazy removal (RFC): a canceller won, so the timer entry is still queued,
      // or the source has just taken it and the callback is running.
      lk.unlock();
      const bool removed = timers.cancel(id);
      lk.lock();
      if (removed) --timers_outstanding_;
      while (timers_outstanding_ > 0) P::wait(cv_, lk);  // on_timer() notifies
    }
    in_timeout_ = false;
    return r;
  }

  TokenWord token_;  // the RFC word; resolved by anyone, armed by owner
  mutable typename P::Mutex mu_;
  typename P::CondVar cv_;  // owner waits: for a signal, or for the drain
  Token current_ TLAB_GUARDED_BY(mu_){};
  bool in_timeout_ TLAB_GUARDED_BY(mu_) = false;
  bool resumed_current_ TLAB_GUARDED_BY(mu_) = false;
  bool parked_ TLAB_GUARDED_BY(mu_) = false;
  std::uint32_t signals_ TLAB_GUARDED_BY(mu_) = 0;  // delivered, not yet consumed
  TimeoutResult result_ TLAB_GUARDED_BY(mu_) = TimeoutResult::kExpired;
  std::uint32_t timers_outstanding_ TLAB_GUARDED_BY(mu_) = 0;  // callbacks not finished
  std::uint64_t armings_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t resumes_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t cancels_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t expiries_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t lost_resolves_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t double_resumes_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t stale_wakeups_ TLAB_GUARDED_BY(mu_) = 0;
};

// tlab::this_thread_waiter: the calling thread's Waiter for platform P and width
// Bits, created on first use and destroyed at thread exit. The sync/ primitives use
// it when the caller does not pass a Waiter. One per thread suffices because a
// thread waits on one thing at a time; destroying it at thread exit is safe because
// timeout() drains its timer before returning (see Ground rules).
template <class P, unsigned Bits = 32>
Waiter<P, Bits>& this_thread_waiter() {
  thread_local Waiter<P, Bits> w;
  return w;
}

}  // namespace tlab
