// models/model_timer_source.h: ModelTimerSource, the TimerSource the sync models
// run the shipped Waiter (and everything built on it) against.
//
// TEST SCAFFOLDING, not core code: it stands where TimerService stands in
// production, so that the models of waiter.h, sync/timed_mutex.h,
// sync/timed_wait_group.h and sync/timed_semaphore.h explore the code under test
// (Waiter, TimedMutex, ...) and not a timer thread's loop, which
// timer_service_model.cc checks on its own. It honours the TimerSource contract
// (timer_source.h) and nothing more:
//   schedule_at(deadline, cb)  records cb in the next slot (ids 0, 1, 2, ...)
//   cancel(id)                 true iff the slot was still queued (never taken)
//   run_timer_thread()         the TIMER THREAD of the model, run by one Relacy
//                              thread: takes the slots in id order as they appear,
//                              moves virtual time to each one's deadline (so an
//                              expiry is never early) and runs its callback
//                              outside the lock; returns once every client has
//                              called client_done() and every slot is settled.
//   set_fire_hooks(b, a)       b() runs on the timer thread right before each
//                              callback, a() right after: where a model checks
//                              the primitive's invariants and whether the expiry
//                              about to win is deserved (ExpiryWitness below)
// Expiry therefore happens "as soon as Relacy schedules the timer thread", which
// is any point after schedule_at(): the scheduler decides whether expiry beats a
// canceller, exactly the race the models are about. A slot that is cancelled
// before the timer thread takes it never runs (the cancel won).
//
// Cost: every operation is one model mutex section; nothing allocates but the
// std::function (inside the Relacy run, freed by its end).
//
// Ground rules: construct inside the Relacy run (a test_suite member). Any number
// of client threads; exactly one thread runs run_timer_thread(). Every client
// thread calls client_done() when it will schedule nothing more, or the timer
// thread waits for it forever (a DEADLOCK that names the model, not the code).
// Memory ordering: mu_ orders everything; the callback runs after the timer thread
// released mu_, so it may call cancel() (the Waiter's drain does).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

#include "model_runner.h"
#include "tlab/clock.h"

namespace tlab::models {

class ModelTimerSource {
 public:
  using TimerId = int;
  using Callback = std::function<void()>;
  static constexpr int kMaxTimers = 6;

  // clients: how many threads will call client_done().
  explicit ModelTimerSource(int clients) : clients_(clients) {}

  Instant now() const { return clock_.now(); }
  RelacyClock& clock() { return clock_; }

  TimerId schedule_at(Instant deadline, Callback cb) {
    RelacyPlatform::Lock lock(mu_);
    TLAB_MODEL_CHECK(count_ < kMaxTimers, "ModelTimerSource: too many timers for the model");
    Slot& s = slots_[count_];
    s.state = kQueued;
    s.deadline = deadline;
    s.cb = std::move(cb);
    RelacyPlatform::notify_all(cv_);
    return count_++;
  }

  bool cancel(TimerId id) {
    RelacyPlatform::Lock lock(mu_);
    TLAB_MODEL_CHECK(id >= 0 && id < count_, "ModelTimerSource: cancel of an unknown id");
    if (slots_[id].state != kQueued) return false;
    slots_[id].state = kCancelled;
    slots_[id].cb = nullptr;
    ++cancelled_;
    return true;
  }

  // Hooks around every callback (file comment). Set them in the suite's before().
  void set_fire_hooks(std::function<void()> before, std::function<void()> after) {
    before_fire_ = std::move(before);
    after_fire_ = std::move(after);
  }

  // A client thread will schedule nothing more.
  void client_done() {
    RelacyPlatform::Lock lock(mu_);
    --clients_;
    RelacyPlatform::notify_all(cv_);
  }

  // The timer thread (see the file comment).
  void run_timer_thread() {
    for (int next = 0;; ++next) {
      Callback cb;
      Instant deadline;
      {
        RelacyPlatform::Lock lock(mu_);
        while (next >= count_ && clients_ > 0) RelacyPlatform::wait(cv_, lock);
        if (next >= count_) return;
        Slot& s = slots_[next];
        if (s.state != kQueued) continue;  // cancelled first: the canceller won
        s.state = kTaken;
        cb = std::move(s.cb);
        s.cb = nullptr;
        deadline = s.deadline;
      }
      if (clock_.now() < deadline) clock_.set(deadline);
      if (before_fire_) before_fire_();
      cb();
      if (after_fire_) after_fire_();
      RelacyPlatform::Lock lock(mu_);
      slots_[next].state = kFired;
      ++fired_;
    }
  }

  // Every scheduled callback was cancelled or has run (the Waiter's drain).
  bool all_settled() const {
    RelacyPlatform::Lock lock(mu_);
    return fired_ + cancelled_ == count_;
  }
  int scheduled() const {
    RelacyPlatform::Lock lock(mu_);
    return count_;
  }

 private:
  enum State { kEmpty, kQueued, kTaken, kFired, kCancelled };
  struct Slot {
    State state = kEmpty;
    Instant deadline;
    Callback cb;
  };

  RelacyClock clock_;
  mutable RelacyPlatform::Mutex mu_;
  RelacyPlatform::CondVar cv_;
  std::array<Slot, kMaxTimers> slots_{};  // guarded by mu_
  int count_ = 0;                         // guarded by mu_: slots used
  int clients_;                           // guarded by mu_: clients not done
  int fired_ = 0;                         // guarded by mu_
  int cancelled_ = 0;                     // guarded by mu_
  std::function<void()> before_fire_;     // set before the threads start; timer thread
  std::function<void()> after_fire_;      // same
};

// ExpiryWitness: the undeserved-timeout oracle of the Waiter-based models (timed
// mutex, semaphore, pool). A lost wakeup does not hang: the waiter leaves through
// its timeout and reports "timed out". This tells that apart from a deserved one.
//
// Rule. An expiry that wins against a waiter that was already PARKED (it had made
// its last check of the resource under the primitive's lock and enqueued) is
// deserved only if the resource was unavailable at that moment. Observed on the
// timer thread around each callback, in this order:
//   t1  before(): parked[i] = waiter i's parked(), and its expiry count;
//   t2  before(): available = the model's probe of the primitive (under its lock);
//   t3  the callback: it resolves waiter i's token;
//   t4  after(): waiter i's expiry count grew = the expiry won at t3.
// If the expiry won at t3, nobody resolved the arming before, so waiter i, parked at
// t1, was still parked at t2: a resource available then was available to a waiter
// that only its timer would wake. A waiter not yet parked at t1 is not judged: its
// own re-check (wait_on_list's try_take under the lock) still decides.
// Cost: one lock per waiter plus the probe, per expiry. Timer thread only.
template <class W, std::size_t N>
class ExpiryWitness {
 public:
  explicit ExpiryWitness(const std::array<W, N>& waiters) : waiters_(&waiters) {}

  // t1 and t2 (see above); `available` reads the primitive's state under its lock.
  template <class Available>
  void before(Available&& available) {
    for (std::size_t i = 0; i < N; ++i) {
      parked_[i] = (*waiters_)[i].parked();
      expiries_[i] = (*waiters_)[i].counters().expiries;
    }
    available_ = available();
  }

  // t4: fails the iteration on an undeserved timeout.
  void after() const {
    for (std::size_t i = 0; i < N; ++i) {
      const bool won = (*waiters_)[i].counters().expiries > expiries_[i];
      TLAB_MODEL_CHECK(!(won && parked_[i] && available_),
                       "undeserved timeout: a parked waiter's expiry won while the resource "
                       "was available (a lost wakeup hidden behind a timeout)");
    }
  }

 private:
  const std::array<W, N>* waiters_;
  std::array<bool, N> parked_{};
  std::array<std::uint64_t, N> expiries_{};
  bool available_ = false;
};

// The Waiter properties every sync model checks at the end of a run, on a
// Waiter<P>::Counters snapshot: each arming resumed its owner exactly once.
template <class Counters>
void check_resumed_once(const Counters& c) {
  TLAB_MODEL_CHECK(c.double_resumes == 0, "a waiter was resumed twice (double resume)");
  TLAB_MODEL_CHECK(c.stale_wakeups == 0, "a waiter woke on a signal that was not its own");
  TLAB_MODEL_CHECK(c.resumes == c.armings, "a waiter was not resumed exactly once");
}

}  // namespace tlab::models
