// models/executor_model.cc: Relacy model of the seed 003 Executor: cross-thread
// cancel against the worker's poll, and worker stop against cancel and merge.
//
// Property checked: per arming of a timer handle, exactly one of {it fires, a
// cancel() returns true, shutdown abandons it}; a timer fires only once its LIVE
// arming is due (never an old arming's entry, never before the deadline); and a
// stopping worker loses none of its timers, including those scheduled by work
// posted to it just before its stop (the stop window). Concretely:
//   - every callback checks that the clock has reached the deadline of the arming
//     that is live when it runs (an entry of a cancelled-and-re-armed handle that
//     fires is early for the new arming);
//   - at the end: fires + successful cancels + abandoned == armings, per timer;
//     a timer whose cancel() returned true did not fire for that arming;
//     Executor::check_invariants() (every pending arming has exactly one live
//     entry; stopped workers hold nothing; counts conserve), a core/ TLAB_CHECK
//     that fails the Relacy run through relacy_platform.h's check hook.
//
// Core code instantiated: core/include/tlab/executor.h with
// executor/timer_handle.h (the (generation, state) word: arm, cancel, try_fire,
// migrate_out, adopt, abandon), executor/merge_queue.h, executor/striped_counter.h
// and queue/per_worker_wheel.h, all unchanged: Executor<RelacyPlatform> in its
// manual mode (worker_threads = false, metronome_thread = false), driven through
// its public API: schedule_at(), cancel(), post(), tick_once() (the metronome's
// step), run_worker_once() (one worker run: adopt inbox, run tasks, poll, scrub)
// and stop_worker() (the worker's retire, inline). Relacy threads play the worker,
// the metronome and the cancellers; no std::thread is started.
//
// Model constraint (not a core change): Executor marks "this thread is running
// worker w" in a thread_local (CurrentWorker, executor/worker.h), and schedule_at()
// called on a worker takes the local path straight into that worker's wheel.
// Relacy's threads are fibers of ONE OS thread and share every thread_local, so a
// schedule_at() from another model thread while the worker fiber is inside a run
// would take the local path by mistake. Hence every schedule_at() here runs on the worker's own
// thread (in before(), or in a task posted to the worker), and only one model thread at a time is
// inside run_worker_once()/stop_worker(). cancel(), post() and tick_once() read no thread_local and
// run from any model thread.
//
// Tests:
//   cancel_vs_poll      1 worker. Timer T due now sits in worker 0's inbox.
//                       0 worker: run_worker_once(0)   1 canceller: cancel(T)
//                       pass: exactly one of fire / successful cancel
//   rearm_after_cancel  1 worker. T armed for 2 ms is in worker 0's wheel.
//                       0 worker: run_worker_once(0); once 1 and 2 are done,
//                         run_worker_once(0) again
//                       1 canceller: if cancel(T), post(0, re-arm T for 3 ms)
//                       2 metronome: time -> 2 ms, tick_once()
//                       pass: T's old entry (2 ms) never fires for the 3 ms
//                       arming (the generation check)
//   stop_vs_cancel      2 workers. T1 and T2, both due at 1 ms, sit in worker 0's
//                       wheel.
//                       0 stopper: stop_worker(0) (entries -> merge queue); once 1
//                         and 2 are done: tick_once(), run_worker_once(1)
//                       1 canceller: cancel(T1)
//                       2 metronome: time -> 1 ms, tick_once() (redistributes the
//                         merge queue to worker 1)
//                       pass: T2 fires exactly once (no timer lost); T1 fires iff
//                       its cancel() returned false
//   stop_window         2 workers. Timer-scheduling work posted into worker 0's stop.
//                       0 poster: post(0, task arming T1 at 1 ms and T2 at 5 ms):
//                         lands before the stop (the stop window: the stop runs
//                         it, worker 0 never runs again) or after (refused)
//                       1 stopper: stop_worker(0); once 0 and 2 are done:
//                         tick_once(), run_worker_once(1), shutdown()
//                       2 metronome: time -> 1 ms, tick_once()
//                       (stop_vs_cancel covers timers already in the wheel; the
//                       poster comes first so that every scheduler's first
//                       schedule is the window)
//                       pass: conservation per timer: T1 fired once per arming, T2
//                       (never due) returned by shutdown() once per arming; none
//                       left pending, none counted twice
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   executor_cancel_state_only  rearm_after_cancel: cancel() keeps the generation,
//                               so the re-arm reuses it and the old 2 ms entry fires
//                               for the 3 ms arming ("fired before the deadline of
//                               its live arming")
//   worker_drop_on_shutdown     stop_vs_cancel: the stopping worker drops its
//                               entries: T2 never fires ("a timer was lost");
//                               stop_window: T1 never fires
//   executor_stop_retires_wheel_early
//                               stop_window: the stop retires worker 0's wheel,
//                               then runs the posted task, whose timers land in
//                               the stopped worker's fresh wheel: T1 never fires,
//                               shutdown() does not return T2 ("a timer scheduled
//                               in the stop window was lost")
//   wheel_no_generation_check does NOT apply: the executor never cancels or
//   reschedules inside a wheel (cancel() only bumps the handle's word), so the
//   wheel's slot-generation check, the one the mutant removes, is never reached
//   from executor code; the per-worker wheel's own tests cover it.
//
// Bounds: 2 or 3 threads, 1 or 2 timers, 2 ticks, no spin loops.
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1 exhausts cancel_vs_poll (936k iterations, label slow);
//           rearm_after_cancel, stop_vs_cancel and stop_window do not finish in
//           minutes (the striped counter's 32 loads per scrub or stop multiply the
//           choices), so they get 10^6 random iterations under label slow instead.
//   full    mutants only (it stops at the first failure).
// Measured rates and detection iterations: models/README.md.
#include <array>

#include "model_runner.h"
#include "tlab/executor.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using Exec = Executor<P>;

constexpr Instant at_ms(std::int64_t ms) { return Instant::from_ns(ms * 1'000'000); }

Exec::Config manual_config(std::size_t workers) {
  Exec::Config cfg;
  cfg.workers = workers;
  cfg.resolution = Duration::milliseconds(1);
  cfg.wheel_slots = 8;
  cfg.worker_threads = false;
  cfg.metronome_thread = false;
  return cfg;
}

// The shared harness: a virtual clock, the executor in manual mode, and up to two
// timers whose callbacks record their fires (on the worker's model thread) and
// check the deadline of the live arming.
template <class Derived, unsigned Threads, std::size_t Workers>
struct ExecutorSuite : rl::test_suite<Derived, Threads> {
  static constexpr int kTimers = 2;

  RelacyClock clock_;
  Exec exec_{manual_config(Workers), clock_};
  std::array<Exec::Timer, kTimers> timers_;
  // Per timer: the deadline of its live arming, written by whoever arms it BEFORE
  // schedule_at() (the arm publishes it to the firing worker: timer_handle.h's
  // acq_rel CAS), and read by the callback.
  std::array<rl::var<std::int64_t>, kTimers> armed_deadline_ns_;
  std::array<rl::var<int>, kTimers> fires_;  // written by callbacks only
  std::array<int, kTimers> armings_{};       // written by the arming thread only

  // Model-side monitor: threads report that they are done.
  P::Mutex mu_;
  P::CondVar cv_;
  int done_ = 0;  // guarded by mu_

  ExecutorSuite() {
    for (int i = 0; i < kTimers; ++i) {
      armed_deadline_ns_[i](RL_INFO) = 0;
      fires_[i](RL_INFO) = 0;
    }
  }

  void make_timers() {
    for (int i = 0; i < kTimers; ++i) {
      timers_[i] = Exec::make_timer([this, i] {
        const std::int64_t due = armed_deadline_ns_[i](RL_INFO);
        TLAB_MODEL_CHECK(clock_.now().ns() >= due,
                         "a timer fired before the deadline of its live arming");
        fires_[i](RL_INFO) = fires_[i](RL_INFO) + 1;
      });
    }
  }
  // Requires: on a worker's thread, or before any thread runs (see the file comment).
  void arm(int i, Instant deadline) {
    armed_deadline_ns_[i](RL_INFO) = deadline.ns();
    ++armings_[i];
    exec_.schedule_at(timers_[i], deadline);
  }
  // The metronome thread's step: time moves to t, one tick_once(), then done.
  void metronome_to(Instant t) {
    clock_.set(t);
    exec_.tick_once();
    finished();
  }
  void finished() {
    P::Lock lock(mu_);
    ++done_;
    P::notify_all(cv_);
  }
  void await_finished(int n) {
    P::Lock lock(mu_);
    while (done_ < n) P::wait(cv_, lock);
  }
  int fires(int i) { return fires_[i](RL_INFO); }
};

// cancel_vs_poll: exactly one of fire / successful cancel.
struct CancelVsPoll : ExecutorSuite<CancelVsPoll, 2, 1> {
  bool cancelled_ = false;  // thread 1's; read in after()

  void before() {
    make_timers();
    arm(0, at_ms(0));   // due now: into worker 0's inbox (submission path)
    exec_.tick_once();  // publishes tick 0
  }
  void thread(unsigned index) {
    if (index == 0) {
      exec_.run_worker_once(0);
    } else {
      cancelled_ = exec_.cancel(timers_[0]);
    }
  }
  void after() {
    TLAB_MODEL_CHECK(fires(0) + (cancelled_ ? 1 : 0) == 1,
                     "not exactly one of fire / successful cancel");
    exec_.check_invariants();
    const Exec::Stats s = exec_.stats();
    TLAB_MODEL_CHECK(s.pending == 0 && s.fired + s.cancelled == 1, "the executor miscounted");
  }
};

// rearm_after_cancel: the generation bump of cancel() retires the old entry.
struct RearmAfterCancel : ExecutorSuite<RearmAfterCancel, 3, 1> {
  bool cancelled_ = false;  // thread 1's; read in after()
  bool posted_ = false;     // thread 1's

  void before() {
    make_timers();
    exec_.post(0, [this] { arm(0, at_ms(2)); });
    exec_.tick_once();         // publishes tick 0
    exec_.run_worker_once(0);  // the arming runs on worker 0: T's entry is in its wheel
  }
  void thread(unsigned index) {
    if (index == 0) {
      exec_.run_worker_once(0);
      await_finished(2);
      exec_.run_worker_once(0);
    } else if (index == 1) {
      cancelled_ = exec_.cancel(timers_[0]);
      // Re-arm on the worker (the local path), for a LATER deadline.
      if (cancelled_) posted_ = exec_.post(0, [this] { arm(0, at_ms(3)); });
      finished();
    } else {
      metronome_to(at_ms(2));
    }
  }
  void after() {
    TLAB_MODEL_CHECK(!cancelled_ || posted_, "post() to a running worker failed");
    // The 2 ms arming either fired (cancel lost) or was cancelled; the 3 ms arming
    // cannot be due: time never passes 2 ms.
    TLAB_MODEL_CHECK(fires(0) == (cancelled_ ? 0 : 1),
                     "a cancelled arming fired, or a live one was lost");
    exec_.check_invariants();
    const Exec::Stats s = exec_.stats();
    TLAB_MODEL_CHECK(s.fired + s.cancelled + s.pending == static_cast<std::uint64_t>(armings_[0]),
                     "the executor miscounted");
  }
};

// stop_vs_cancel: worker stop racing cancel and the metronome's merge.
struct StopVsCancel : ExecutorSuite<StopVsCancel, 3, 2> {
  bool cancelled_ = false;  // thread 1's; read in after()

  void before() {
    make_timers();
    exec_.post(0, [this] {
      arm(0, at_ms(1));
      arm(1, at_ms(1));
    });
    exec_.tick_once();         // publishes tick 0
    exec_.run_worker_once(0);  // both entries in worker 0's wheel
  }
  void thread(unsigned index) {
    if (index == 0) {
      exec_.stop_worker(0);
      await_finished(2);
      exec_.tick_once();  // a last metronome step: redistributes what is left
      exec_.run_worker_once(1);
    } else if (index == 1) {
      cancelled_ = exec_.cancel(timers_[0]);
      finished();
    } else {
      metronome_to(at_ms(1));
    }
  }
  void after() {
    TLAB_MODEL_CHECK(fires(1) == 1, "a timer was lost by the stopping worker (T2 never fired)");
    TLAB_MODEL_CHECK(fires(0) == (cancelled_ ? 0 : 1),
                     "T1 fired after a successful cancel, or was lost");
    exec_.check_invariants();
    const Exec::Stats s = exec_.stats();
    TLAB_MODEL_CHECK(s.pending == 0 && s.fired + s.cancelled == 2, "the executor miscounted");
  }
};

// stop_window: work posted right before a stop schedules timers; none is lost.
struct StopWindow : ExecutorSuite<StopWindow, 3, 2> {
  bool posted_ = false;       // thread 0's; read in after()
  std::size_t returned_ = 0;  // thread 1's: shutdown()'s count

  void before() {
    make_timers();
    exec_.tick_once();  // publishes tick 0
  }
  void thread(unsigned index) {
    if (index == 0) {
      posted_ = exec_.post(0, [this] {
        arm(0, at_ms(1));
        arm(1, at_ms(5));
      });
      finished();
    } else if (index == 1) {
      exec_.stop_worker(0);  // runs the task if it was posted first: the stop window
      await_finished(2);
      exec_.tick_once();  // redistributes worker 0's timers to worker 1
      exec_.run_worker_once(1);
      returned_ = exec_.shutdown();
    } else {
      metronome_to(at_ms(1));
    }
  }
  void after() {
    TLAB_MODEL_CHECK(armings_[0] == (posted_ ? 1 : 0), "a posted task ran other than once");
    // Conservation: fired + cancelled (none here) + returned == scheduled, per timer.
    TLAB_MODEL_CHECK(fires(0) == armings_[0],
                     "a timer scheduled in the stop window was lost (T1 due at 1 ms never fired)");
    TLAB_MODEL_CHECK(fires(1) == 0 && returned_ == static_cast<std::size_t>(armings_[1]),
                     "a timer scheduled in the stop window was lost (shutdown did not return T2)");
    exec_.check_invariants();
    const Exec::Stats s = exec_.stats();
    TLAB_MODEL_CHECK(s.pending == 0 && s.fired + s.abandoned == s.scheduled,
                     "the executor miscounted");
  }
};

template <class Suite>
bool simulate(rl::test_params& params) {
  return rl::simulate<Suite>(params);
}

constexpr ModelTest kTests[] = {
    {"cancel_vs_poll",
     "cancel() racing the worker's poll: exactly one of fire / cancel",
     &simulate<CancelVsPoll>,
     "",
     CleanRun::kPasses,
     {.bound_slow = 1}},
    {"rearm_after_cancel",
     "cancel + re-arm racing poll and tick: the old entry never fires",
     &simulate<RearmAfterCancel>,
     "executor_cancel_state_only",
     CleanRun::kPasses,
     {}},
    {"stop_vs_cancel",
     "worker stop racing cancel and merge: no timer lost, none after cancel",
     &simulate<StopVsCancel>,
     "worker_drop_on_shutdown",
     CleanRun::kPasses,
     {}},
    {"stop_window",
     "timer-scheduling work posted into a worker's stop: every timer fires or is returned",
     &simulate<StopWindow>,
     "executor_stop_retires_wheel_early worker_drop_on_shutdown",
     CleanRun::kPasses,
     {}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("executor", tlab::models::kTests, argc, argv);
}
