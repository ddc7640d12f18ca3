// models/timed_mutex_model.cc: Relacy model of TimedMutex, unlock() racing the timeout.
//
// Property checked (RFC 0014's CancelableMutex with hand-off): the lock is never
// lost, mutual exclusion holds, and a waiter resumes exactly once. Concretely:
//   - mutual exclusion: every holder increments and decrements `holders_` and
//     writes `data_`, both rl::var, inside its critical section; a second holder
//     is a "two holders" failure or a Relacy DATA RACE on data_ (no happens-before
//     between the two critical sections);
//   - the lock is never lost: at the end the mutex is free, no waiter is listed,
//     and every lock_for() that returned true was followed by exactly one unlock();
//   - each waiter's Waiter: resumes == armings, no double resume, no stale wakeup;
//   - lock_for() returned false iff its timer won (the mutex counted a timeout),
//     and a waiter that returned false never entered the critical section;
//   - every expiry timer was cancelled or ran (the drain).
//   - (*) invariants at every quiescent point: TimedMutex::check_invariants() (a free
//     lock has no queued waiter) after each operation of each thread, on the timer
//     thread right before and after each expiry callback, and at the end;
//   - (*) every timeout is deserved (ExpiryWitness, model_timer_source.h): an expiry
//     that wins against a parked waiter finds the lock held.
// A lost wakeup (free lock, parked waiter) does not hang: the waiter leaves through
// its timeout. The two checks above tell it from a deserved timeout. A lost
// hand-off leaves the lock held at the end.
//
// Core code instantiated: core/include/tlab/sync/timed_mutex.h, the shipped
// TimedMutex<RelacyPlatform, 32>::try_lock(), ::lock_for(timers, d, waiter) and
// ::unlock(), with sync/wait_list.h's wait_on_list() and waiter.h's Waiter
// underneath, unchanged. Each waiter passes its own Waiter (this_thread_waiter()
// is thread_local, and Relacy's threads are fibers of one OS thread). The
// TimerSource is ModelTimerSource (model_timer_source.h, test scaffolding): its
// timer thread, a Relacy thread, runs the Waiter's expiry callbacks.
//
// Threads (static; the owner takes the lock in before(), so it holds it from the
// start):
//   0            owner: critical section, then unlock()
//   1 .. N       waiter i: if lock_for(timers, 10 ms, waiter_i): critical section,
//                unlock()
//   N + 1        the timer thread (ModelTimerSource::run_timer_thread)
//
// Tests (name: waiters N; expected outcome):
//   unlock_vs_timeout   N = 1  pass: unlock()'s resolve races the expiry
//   two_waiters         N = 2  pass: FIFO hand-off past an expired head waiter
//   unlock_vs_timeout_deserved, two_waiters_deserved
//                       the same with the checks marked (*) below: pass. Separate
//                       tests because the checks add scheduling points: on the
//                       original tests they pushed the full searches for
//                       waiter_resume_on_lost_resolve and token_load_store_resolve
//                       past ctest's timeout.
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   mutex_unlock_no_resolve        both: unlock() pops an expired waiter, loses its
//                                  token and returns anyway: nobody owns the lock
//                                  (held at the end: lock lost)
//   waiter_resume_on_lost_resolve  both: the losing resolver resumes the waiter too
//   token_load_store_resolve       both: unlock() and the expiry both win: the
//                                  waiter leaves with false while the lock was
//                                  handed to it (lock lost), or a double resume
//   mutex_enqueue_after_retry      both *_deserved: the waiter re-tries, drops the list lock,
//                                  the owner's unlock() frees the lock, the waiter
//                                  enqueues: free lock with a queued waiter
//                                  (check_invariants) and an undeserved timeout
//
// Bounds: 3 or 4 threads, no spin loops (every wait blocks).
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1 and 2 exhaust every test (bound 2 of two_waiters under
//           label slow; counts in models/README.md).
//   full    only for mutants (stops at the first failure).
// Measured rates and detection iterations: models/README.md.
#include <array>

#include "model_runner.h"
#include "model_timer_source.h"
#include "tlab/sync/timed_mutex.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using Mutex = TimedMutex<P, 32>;

constexpr Duration kDelay = Duration::milliseconds(10);

// Checks: the *_deserved tests (see "Tests" above). Off, the run is the original
// test's, step for step, so its measured searches and kills stay as they were.
template <int N, bool Checks>
struct TimedMutexModel : rl::test_suite<TimedMutexModel<N, Checks>, N + 2> {
  ModelTimerSource timers_{/*clients=*/N};
  Mutex mutex_;
  std::array<Mutex::WaiterT, N> waiters_;
  rl::var<int> holders_{0};         // protected by mutex_: threads inside the critical section
  rl::var<int> data_{0};            // protected by mutex_: written by every holder
  std::array<bool, N> acquired_{};  // acquired_[i]: waiter i's lock_for(); its own
  ExpiryWitness<Mutex::WaiterT, N> witness_{waiters_};  // timer thread only

  void before() {
    RL_ASSERT(mutex_.try_lock());
    if (!Checks) return;
    timers_.set_fire_hooks(
        [this] {
          mutex_.check_invariants();
          witness_.before([this] { return !mutex_.held(); });
        },
        [this] {
          witness_.after();
          mutex_.check_invariants();
        });
  }

  void thread(unsigned index) {
    const int i = static_cast<int>(index);
    if (i == 0) {
      critical_section(0);
      mutex_.unlock();
      quiescent();
    } else if (i <= N) {
      acquired_[i - 1] = mutex_.lock_for(timers_, kDelay, waiters_[i - 1]);
      quiescent();
      if (acquired_[i - 1]) {
        critical_section(i);
        mutex_.unlock();
        quiescent();
      }
      timers_.client_done();
    } else {
      timers_.run_timer_thread();
    }
  }

  // A thread between two operations: check the invariants (Checks only).
  void quiescent() {
    if (Checks) mutex_.check_invariants();
  }

  void critical_section(int who) {
    const int h = holders_(RL_INFO);
    TLAB_MODEL_CHECK(h == 0, "two holders of the mutex at once");
    holders_(RL_INFO) = h + 1;
    data_(RL_INFO) = data_(RL_INFO) * 4 + who + 1;
    holders_(RL_INFO) = holders_(RL_INFO) - 1;
  }

  void after() {
    mutex_.check_invariants();
    TLAB_MODEL_CHECK(!mutex_.held(), "the lock is held after every holder unlocked (lock lost)");
    TLAB_MODEL_CHECK(mutex_.waiting() == 0, "a waiter is still listed at the end");
    std::uint64_t timeouts = 0;
    for (int i = 0; i < N; ++i) {
      const Mutex::WaiterT::Counters c = waiters_[i].counters();
      check_resumed_once(c);
      // An arming ends CANCELED iff unlock() (or the waiter's own re-try) won it.
      TLAB_MODEL_CHECK(acquired_[i] || c.armings == 1, "lock_for() gave up without waiting");
      TLAB_MODEL_CHECK(acquired_[i] || c.expiries == 1,
                       "lock_for() returned false but its timer lost");
      if (!acquired_[i]) ++timeouts;
    }
    TLAB_MODEL_CHECK(mutex_.stats().timeouts == timeouts, "the mutex miscounted timeouts");
    TLAB_MODEL_CHECK(timers_.all_settled(), "every expiry timer was cancelled or ran (the drain)");
  }
};

template <int N, bool Checks = false>
bool simulate_mutex(rl::test_params& params) {
  return rl::simulate<TimedMutexModel<N, Checks>>(params);
}

constexpr ModelTest kTests[] = {
    {"unlock_vs_timeout",
     "1 waiter: unlock()'s hand-off races the waiter's expiry",
     &simulate_mutex<1>,
     "mutex_unlock_no_resolve:bound waiter_resume_on_lost_resolve token_load_store_resolve",
     CleanRun::kPasses,
     {.bound_quick = 2}},
    {"two_waiters",
     "2 waiters: hand-off skips an expired waiter, the lock is never lost",
     &simulate_mutex<2>,
     "mutex_unlock_no_resolve:bound waiter_resume_on_lost_resolve:bound "
     "token_load_store_resolve:bound",
     CleanRun::kPasses,
     {.bound_quick = 1, .bound_slow = 2}},
    {"unlock_vs_timeout_deserved",
     "unlock_vs_timeout + invariants at every quiescent point + the undeserved-timeout witness",
     &simulate_mutex<1, true>,
     "mutex_enqueue_after_retry:bound",
     CleanRun::kPasses,
     {.bound_quick = 2}},
    {"two_waiters_deserved",
     "two_waiters + invariants at every quiescent point + the undeserved-timeout witness",
     &simulate_mutex<2, true>,
     "mutex_enqueue_after_retry:bound",
     CleanRun::kPasses,
     {.bound_quick = 1}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("timed_mutex", tlab::models::kTests, argc, argv);
}
