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
//   - every expiry timer was cancelled or ran (the drain).
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
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   semaphore_lost_permit  both: release() pops a waiter whose timer won, loses
//                          its token and counts the permit as placed: it vanishes
//                          (conservation fails)
//   waiter_resume_on_lost_resolve, token_load_store_resolve
//                          release_vs_timeout: release() and the expiry both
//                          resume the waiter (double resume)
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
#include "tlab/sync/timed_semaphore.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using Semaphore = TimedSemaphore<P, 32>;

constexpr Duration kDelay = Duration::milliseconds(10);
constexpr std::uint32_t kInitial = 0;
constexpr std::uint32_t kReleased = 1;

template <int N>
struct SemaphoreModel : rl::test_suite<SemaphoreModel<N>, N + 2> {
  ModelTimerSource timers_{/*clients=*/N};
  Semaphore sem_{kInitial};
  std::array<Semaphore::WaiterT, N> waiters_;
  std::array<bool, N> acquired_{};  // acquired_[i]: waiter i's acquire_for(); its own

  void thread(unsigned index) {
    const int i = static_cast<int>(index);
    if (i == 0) {
      sem_.release(kReleased);
    } else if (i <= N) {
      acquired_[i - 1] = sem_.acquire_for(timers_, kDelay, waiters_[i - 1]);
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

template <int N>
bool simulate_semaphore(rl::test_params& params) {
  return rl::simulate<SemaphoreModel<N>>(params);
}

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
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("semaphore", tlab::models::kTests, argc, argv);
}
