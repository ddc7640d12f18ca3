// models/semaphore_model.cc: Relacy model of TimedSemaphore, release() racing the timeout.
//
// Property checked: no permit is ever lost or duplicated, and a waiter resumes
// exactly once. Concretely, at the end of a run:
//   - conservation: initial + released == available() + acquired, where
//     `acquired` counts the acquire_for() calls that returned true;
//   - no waiter is still listed, and free permits never coexist with a listed
//     waiter (TimedSemaphore::check_invariants, here a core/ TLAB_CHECK that fails
//     the Relacy run through relacy_platform.h's check hook);
//   - each waiter's Waiter: resumes == armings, no double resume, no stale wakeup;
//     acquire_for() returned false iff its timer won;
//   - every expiry timer was cancelled or ran (the drain);
//   - invariants at every quiescent point: check_invariants() after each operation
//     of each thread, on the timer thread right before and after each expiry
//     callback, and at the end (the *_deserved tests and pool_returns);
//   - every timeout is deserved (ExpiryWitness, model_timer_source.h): an expiry
//     that wins against a parked waiter finds no permit free (a lost wakeup does
//     not hang, the waiter leaves through its timeout; this tells them apart).
//
// The test pool_returns checks sync/pool.h on top (Pool<int, RelacyPlatform, 32>:
// checkout_for(), Lease::reset(), check_invariants(), unclaimed()): two objects,
// both leased in before(); two threads return one each while a borrower waits.
// Pool::check_invariants (free objects == permits available + in transit; no
// unclaimed object while a borrower is queued) at every quiescent point, and the
// witness with "an unclaimed object on the free list" as the resource.
//
// Core code instantiated: core/include/tlab/sync/timed_semaphore.h, the shipped
// TimedSemaphore<RelacyPlatform, 32>::acquire_for(timers, d, waiter) and
// ::release(), with sync/wait_list.h and waiter.h underneath, unchanged. The
// TimerSource is ModelTimerSource (model_timer_source.h, test scaffolding): its
// timer thread, a Relacy thread, runs the Waiter's expiry callbacks.
//
// Threads (static; the semaphore starts with 0 permits):
//   0            releaser: release(1)
//   1 .. N       waiter i: acquire_for(timers, 10 ms, waiter_i)
//   N + 1        the timer thread (ModelTimerSource::run_timer_thread)
//
// Tests (name: waiters N; expected outcome):
//   release_vs_timeout   N = 1  pass: release()'s hand-off races the expiry
//   two_waiters          N = 2  pass: the permit skips an expired waiter
//   release_vs_timeout_deserved, two_waiters_deserved
//                        the same with the quiescent-point checks and the witness:
//                        pass. Separate tests because the checks add scheduling
//                        points: on the original tests the random search missed
//                        semaphore_lost_permit and the full one timed out.
//   pool_returns         pool of 2, both out; 2 returners, 1 borrower: pass
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   semaphore_lost_permit  both: release() pops a waiter whose timer won, loses
//                          its token and counts the permit as placed: it vanishes
//                          (conservation fails)
//   waiter_resume_on_lost_resolve, token_load_store_resolve
//                          release_vs_timeout: release() and the expiry both
//                          resume the waiter (double resume)
//   semaphore_count_after_empty_check
//                          both *_deserved: release() finds no
//                          waiter, drops the lock, the waiter enqueues, the
//                          permit lands in the count: a free permit with a queued
//                          waiter (check_invariants) and an undeserved timeout
//   pool_signal_on_empty_only
//                          pool_returns: the second return finds the first
//                          object still on the free list and releases no permit
//                          (conservation fails; a waiting borrower times out)
//
// Bounds: 3 or 4 threads, no spin loops (every wait blocks).
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1 and 2 exhaust every test (bound 2 of two_waiters under
//           label slow; counts in models/README.md).
//   full    only for mutants (stops at the first failure).
// Measured rates and detection iterations: models/README.md.
#include <array>
#include <optional>
#include <vector>

#include "model_runner.h"
#include "model_timer_source.h"
#include "tlab/sync/pool.h"
#include "tlab/sync/timed_semaphore.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using Semaphore = TimedSemaphore<P, 32>;

constexpr Duration kDelay = Duration::milliseconds(10);
constexpr std::uint32_t kInitial = 0;
constexpr std::uint32_t kReleased = 1;

// Checks: the *_deserved tests (see "Tests" above). Off, the run is the original
// test's, step for step, so its measured searches and kills stay as they were.
template <int N, bool Checks>
struct SemaphoreModel : rl::test_suite<SemaphoreModel<N, Checks>, N + 2> {
  ModelTimerSource timers_{/*clients=*/N};
  Semaphore sem_{kInitial};
  std::array<Semaphore::WaiterT, N> waiters_;
  std::array<bool, N> acquired_{};  // acquired_[i]: waiter i's acquire_for(); its own
  ExpiryWitness<Semaphore::WaiterT, N> witness_{waiters_};  // timer thread only

  void before() {
    if (!Checks) return;
    timers_.set_fire_hooks(
        [this] {
          sem_.check_invariants();
          witness_.before([this] { return sem_.available() > 0; });
        },
        [this] {
          witness_.after();
          sem_.check_invariants();
        });
  }

  void thread(unsigned index) {
    const int i = static_cast<int>(index);
    if (i == 0) {
      sem_.release(kReleased);
      if (Checks) sem_.check_invariants();
    } else if (i <= N) {
      acquired_[i - 1] = sem_.acquire_for(timers_, kDelay, waiters_[i - 1]);
      if (Checks) sem_.check_invariants();
      timers_.client_done();
    } else {
      timers_.run_timer_thread();
    }
  }

  void after() {
    sem_.check_invariants();
    std::uint32_t acquired = 0;
    for (int i = 0; i < N; ++i) {
      const Semaphore::WaiterT::Counters c = waiters_[i].counters();
      check_resumed_once(c);
      TLAB_MODEL_CHECK(acquired_[i] || c.expiries == 1,
                       "acquire_for() returned false but its timer lost");
      if (acquired_[i]) ++acquired;
    }
    TLAB_MODEL_CHECK(kInitial + kReleased == sem_.available() + acquired,
                     "permits not conserved (a permit was lost or duplicated)");
    TLAB_MODEL_CHECK(sem_.waiting() == 0, "a waiter is still listed at the end");
    TLAB_MODEL_CHECK(timers_.all_settled(), "every expiry timer was cancelled or ran (the drain)");
  }
};

template <int N, bool Checks = false>
bool simulate_semaphore(rl::test_params& params) {
  return rl::simulate<SemaphoreModel<N, Checks>>(params);
}

// Threads: 0, 1 return lease 0, 1; 2 the borrower; 3 the timer thread.
struct PoolModel : rl::test_suite<PoolModel, 4> {
  using IntPool = Pool<int, P, 32>;
  ModelTimerSource timers_{/*clients=*/1};
  IntPool pool_{std::vector<int>{10, 20}};
  std::array<IntPool::WaiterT, 1> waiters_;
  std::array<std::optional<IntPool::Lease>, 2> out_;  // leased in before(); returner i's
  bool borrowed_ = false;                              // the borrower's
  ExpiryWitness<IntPool::WaiterT, 1> witness_{waiters_};  // timer thread only

  void before() {
    out_[0] = pool_.try_checkout();
    out_[1] = pool_.try_checkout();
    RL_ASSERT(out_[0] && out_[1]);
    timers_.set_fire_hooks(
        [this] {
          pool_.check_invariants();
          witness_.before([this] { return pool_.unclaimed() > 0; });
        },
        [this] {
          witness_.after();
          pool_.check_invariants();
        });
  }

  void thread(unsigned index) {
    if (index < 2) {
      out_[index]->reset();
      pool_.check_invariants();
    } else if (index == 2) {
      std::optional<IntPool::Lease> l = pool_.checkout_for(timers_, kDelay, waiters_[0]);
      pool_.check_invariants();
      borrowed_ = l.has_value();
      l.reset();
      pool_.check_invariants();
      timers_.client_done();
    } else {
      timers_.run_timer_thread();
    }
  }

  void after() {
    pool_.check_invariants();
    check_resumed_once(waiters_[0].counters());
    TLAB_MODEL_CHECK(borrowed_ || waiters_[0].counters().expiries == 1,
                     "checkout_for() returned nothing but its timer lost");
    TLAB_MODEL_CHECK(pool_.available() == 2, "an object did not come back");
    TLAB_MODEL_CHECK(pool_.semaphore().available() == 2, "a permit did not come back");
    TLAB_MODEL_CHECK(timers_.all_settled(), "every expiry timer was cancelled or ran (the drain)");
  }
};

bool simulate_pool(rl::test_params& params) { return rl::simulate<PoolModel>(params); }

constexpr ModelTest kTests[] = {
    {"release_vs_timeout",
     "1 waiter: release()'s hand-off races the waiter's expiry",
     &simulate_semaphore<1>,
     "semaphore_lost_permit waiter_resume_on_lost_resolve token_load_store_resolve",
     CleanRun::kPasses,
     {.bound_quick = 2}},
    {"two_waiters",
     "2 waiters: the permit skips an expired waiter and is never lost",
     &simulate_semaphore<2>,
     "semaphore_lost_permit:bound",
     CleanRun::kPasses,
     {.bound_quick = 1, .bound_slow = 2}},
    {"release_vs_timeout_deserved",
     "release_vs_timeout + invariants at every quiescent point + the undeserved-timeout witness",
     &simulate_semaphore<1, true>,
     "semaphore_count_after_empty_check",
     CleanRun::kPasses,
     {.bound_quick = 2}},
    {"two_waiters_deserved",
     "two_waiters + invariants at every quiescent point + the undeserved-timeout witness",
     &simulate_semaphore<2, true>,
     "semaphore_count_after_empty_check:bound",
     CleanRun::kPasses,
     {.bound_quick = 1}},
    {"pool_returns",
     "pool of 2, both out: two returns race a borrower's checkout and its expiry",
     &simulate_pool,
     "pool_signal_on_empty_only",
     CleanRun::kPasses,
     {.bound_quick = 1}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("semaphore", tlab::models::kTests, argc, argv);
}
