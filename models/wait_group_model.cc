// models/wait_group_model.cc: Relacy model of TimedWaitGroup, done() racing the timeout.
//
// Property checked (seed 002): the split counter never goes below zero, and
// wait_for() returns the right result. Concretely, at the end of a run:
//   - pending() >= 0 and pending() <= unfinished() (the invariant of the split word:
//     the timeout only lowers `pending`, done() lowers both);
//   - the group is complete (pending == 0): every wait_for() returned only after
//     a completion, by the last done() or by a deadline;
//   - every wait_for() returned true iff every done() landed before the group
//     completed, i.e. iff unfinished() == 0 (a done() after the timeout is absorbed
//     and leaves its task in `unfinished` for good);
//   - every expiry timer wait_for() scheduled was cancelled or ran, and wait_for()
//     returned only after that (the drain).
//   - invariants at every quiescent point: TimedWaitGroup::check_invariants()
//     (pending <= unfinished; no waiter parked past a completion it was not woken
//     for) after each operation of each thread, on the timer thread right before
//     and after each expiry callback, and at the end.
// A lost wakeup (a waiter parked while the group completes) does not hang: the
// deadline's callback wakes it, and wait_for() even returns true. The check right
// before the callback is the undeserved-timeout oracle here: a waiter still parked
// when its deadline fires must have had no completion to see.
//
// Core code instantiated: core/include/tlab/sync/timed_wait_group.h, the shipped
// TimedWaitGroup<RelacyPlatform>::add(), ::done(), ::time_out() (run by the
// timer's callback) and ::wait_for(), unchanged. The TimerSource is
// ModelTimerSource (model_timer_source.h, test scaffolding): its timer thread, a
// Relacy thread, runs wait_for()'s expiry callback.
//
// Threads (static; add(Tasks) happens in before(), so every thread sees it):
//   0 .. Waiters-1   waiter: r = wait_for(timers, 10 ms)
//   next             the timer thread (ModelTimerSource::run_timer_thread)
//   the rest         Tasks workers: done()
//
// Tests (name: waiters, tasks; expected outcome):
//   done_vs_timeout   1 waiter, 1 task   pass
//   two_tasks         1 waiter, 2 tasks  pass: a straggler after a partial count
//   two_waiters       2 waiters, 1 task  pass: the first deadline completes both
//   *_deserved        the same three with the quiescent-point checks: pass
//                     (separate tests, so the originals' searches stay as measured)
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   wait_group_plain_counter  every test: a done() after the timeout zeroed
//                             `pending` drives it to -1 (pending() < 0).
//   wait_group_park_without_recheck
//                             the *_deserved tests: the waiter sees the group incomplete,
//                             drops mu_, the last done() completes it and notifies
//                             nobody, the waiter parks: check_invariants fails.
//
// Bounds: 3 or 4 threads, no spin loops (every wait blocks).
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1 and 2 exhaust every test (bound 2 of two_tasks and
//           two_waiters under label slow; counts in models/README.md).
//   full    only for the mutant (stops at the first failure).
// Measured rates and detection iterations: models/README.md.
#include <array>

#include "model_runner.h"
#include "model_timer_source.h"
#include "tlab/sync/timed_wait_group.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;

constexpr Duration kDelay = Duration::milliseconds(10);

// Checks: the *_deserved tests (see "Tests" above). Off, the run is the original
// test's, step for step, so its measured searches and kills stay as they were.
template <int Waiters, int Tasks, bool Checks>
struct WaitGroupModel
    : rl::test_suite<WaitGroupModel<Waiters, Tasks, Checks>, Waiters + 1 + Tasks> {
  ModelTimerSource timers_{/*clients=*/Waiters};
  TimedWaitGroup<P> group_;
  std::array<bool, Waiters> result_{};  // result_[i]: waiter i's wait_for(); its own

  void before() {
    group_.add(Tasks);
    if (!Checks) return;
    timers_.set_fire_hooks([this] { group_.check_invariants(); },
                           [this] { group_.check_invariants(); });
  }

  void thread(unsigned index) {
    const int i = static_cast<int>(index);
    if (i < Waiters) {
      result_[i] = group_.wait_for(timers_, kDelay);
      if (Checks) group_.check_invariants();
      TLAB_MODEL_CHECK(group_.complete(), "wait_for() returned before the group completed");
      timers_.client_done();
    } else if (i == Waiters) {
      timers_.run_timer_thread();
    } else {
      group_.done();
      if (Checks) group_.check_invariants();
    }
  }

  void after() {
    group_.check_invariants();
    const std::int64_t pending = group_.pending();
    const std::uint32_t unfinished = group_.unfinished();
    TLAB_MODEL_CHECK(pending >= 0, "the split counter went below zero");
    TLAB_MODEL_CHECK(pending <= std::int64_t{unfinished}, "pending > unfinished");
    TLAB_MODEL_CHECK(pending == 0, "the group never completed");
    for (int i = 0; i < Waiters; ++i) {
      TLAB_MODEL_CHECK(result_[i] == (unfinished == 0),
                       "wait_for() returned true with a task unfinished, or false with all done");
    }
    TLAB_MODEL_CHECK(timers_.all_settled(), "every expiry timer was cancelled or ran (the drain)");
  }
};

template <int Waiters, int Tasks, bool Checks = false>
bool simulate_wait_group(rl::test_params& params) {
  return rl::simulate<WaitGroupModel<Waiters, Tasks, Checks>>(params);
}

constexpr ModelTest kTests[] = {
    {"done_vs_timeout",
     "1 waiter, 1 task: done() races the timeout",
     &simulate_wait_group<1, 1>,
     "wait_group_plain_counter",
     CleanRun::kPasses,
     {.bound_quick = 2}},
    {"two_tasks",
     "1 waiter, 2 tasks: the timeout lands between the two done() calls",
     &simulate_wait_group<1, 2>,
     "wait_group_plain_counter",
     CleanRun::kPasses,
     {.bound_quick = 1, .bound_slow = 2}},
    {"two_waiters",
     "2 waiters, 1 task: the first deadline completes the group for both",
     &simulate_wait_group<2, 1>,
     "wait_group_plain_counter",
     CleanRun::kPasses,
     {.bound_quick = 1, .bound_slow = 2}},
    {"done_vs_timeout_deserved",
     "done_vs_timeout + invariants at every quiescent point (the timer's included)",
     &simulate_wait_group<1, 1, true>,
     "wait_group_park_without_recheck:bound",
     CleanRun::kPasses,
     {.bound_quick = 2}},
    {"two_tasks_deserved",
     "two_tasks + invariants at every quiescent point (the timer's included)",
     &simulate_wait_group<1, 2, true>,
     "wait_group_park_without_recheck:bound",
     CleanRun::kPasses,
     {.bound_quick = 1}},
    {"two_waiters_deserved",
     "two_waiters + invariants at every quiescent point (the timer's included)",
     &simulate_wait_group<2, 1, true>,
     "wait_group_park_without_recheck:bound",
     CleanRun::kPasses,
     {.bound_quick = 1}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("wait_group", tlab::models::kTests, argc, argv);
}
