// models/timer_service_model.cc: Relacy model of TimerService's timer thread (seed 001).
//
// Property checked: the timer thread never sleeps through work it was told about.
//   - earlier_task: a task scheduled EARLIER than the head while the timer thread
//     computes its wait (seed 001's race) is run; the later head is not run early.
//   - shutdown_wakes: shutdown() wakes a sleeping timer thread, which returns; a
//     task due at the call runs exactly once, a not-yet-due one never runs and is
//     handed back kCancelled.
//   - run_once_vs_schedule: run_once() (driver mode) racing schedule_at() and a
//     cross-thread cancel(): the task runs exactly once unless cancel() returned
//     true, and then never; never before its deadline.
//   - throwing_task: a task that throws does not stop the timer thread; a task
//     scheduled after it still runs.
// Time is virtual and RelacyPlatform::wait_until is UNTIMED (relacy_platform.h):
// a timer thread waiting for the head's deadline wakes only on a notify, exactly
// as a real one would not wake before that deadline. Every scenario moves the
// clock only to instants before any deadline the thread may be waiting for, so no
// wake-up is owed to time; a lost notify then leaves the thread asleep for ever
// while the scheduler waits for its task, and Relacy reports DEADLOCK.
//
// Core code instantiated: core/include/tlab/timer_service.h, the shipped
// TimerService<BinaryHeapQueue<TimerTaskPtr<P>, P>, P> with its TimerTask
// (timer_task.h), unchanged: schedule_at(), cancel(), shutdown(), shutdown_now(),
// run_once(), and the timer thread's own loop (loop_locked: step_locked +
// wait_locked) entered through TimerService::run_loop(), the seam that lets a
// Relacy thread be the timer thread (std::thread cannot be simulated).
//
// Threads (static):
//   earlier_task          0 timer thread: run_loop()
//                         1 scheduler: schedule late at 10 ms; move time to 5 ms;
//                           schedule early at 5 ms (due now, the new head); wait
//                           until early ran; shutdown_now() (returns late)
//   shutdown_wakes        0 timer thread: run_loop()
//                         1 scheduler: schedule started at 0 ms and wait until it
//                           ran (the loop is up, as a started thread is); schedule
//                           late at 10 ms and due_now at 0 ms; shutdown() (returns
//                           late; due_now runs exactly once, before or in the drain)
//   run_once_vs_schedule  0 driver: run_once(); once 1 and 2 are done, run_once()
//                         1 scheduler: schedule task at 0 ms (due now); hand over
//                         2 canceller: cancel(task) once it is scheduled
//   throwing_task         0 timer thread: run_loop() (an escaping exception ends it,
//                           as thread_main() does)
//                         1 scheduler: schedule thrower (due now); wait until it
//                           started; schedule early (due now); wait until it ran;
//                           shutdown_now()
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   timer_notify_without_lock     earlier_task: the thread decides its wait in one
//                                 critical section and waits in another; the
//                                 scheduler's notify lands in between: DEADLOCK
//   timer_no_notify_on_earlier    earlier_task: the new head wakes nobody: DEADLOCK
//   timer_sleep_not_wait          earlier_task, shutdown_wakes: the thread sleeps on
//                                 a condition variable nobody notifies: DEADLOCK
//   timer_shutdown_no_wake        shutdown_wakes: the sleeping thread is never
//                                 told to stop: DEADLOCK
//   timer_cancel_no_remove        run_once_vs_schedule: cancel() returns true and
//                                 the task runs anyway
//   timer_exception_kills_thread  throwing_task: the loop dies with the exception;
//                                 the next task never runs: DEADLOCK
//
// Bounds: 2 or 3 threads, one or two tasks, no spin loops (every wait blocks).
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1 exhausts run_once_vs_schedule and throwing_task;
//           earlier_task (10.5M iterations, ~1 CPU-minute) and
//           run_once_vs_schedule at bound 2 run under label slow; shutdown_wakes
//           does not finish in minutes (mutants only, where it stops early).
//   full    mutants only (it stops at the first failure).
// Measured rates and detection iterations: models/README.md.
#include <memory>
#include <stdexcept>
#include <vector>

#include "model_runner.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/timer_service.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using Service = TimerServiceOn<BinaryHeapQueue, P>;
using Task = TimerTask<P>;
using TaskPtr = TimerTaskPtr<P>;

constexpr Instant at_ms(std::int64_t ms) { return Instant::from_ns(ms * 1'000'000); }

// The parts every scenario shares: a virtual clock, the service in driver mode,
// and a model-side monitor through which task callbacks report that they ran.
template <class Derived, unsigned Threads>
struct ServiceSuite : rl::test_suite<Derived, Threads> {
  RelacyClock clock_;
  Service service_{clock_, TimerServiceOptions{.start_thread = false}};

  P::Mutex mu_;
  P::CondVar cv_;
  rl::var<int> runs_[3] = {0, 0, 0};  // guarded by mu_: runs_[i] counts task i's runs

  // A task that records its run, checks it is not early, and wakes the scheduler.
  TaskPtr make_task(int i, Instant deadline) {
    return Task::make([this, i, deadline] {
      TLAB_MODEL_CHECK(clock_.now() >= deadline, "a task ran before its deadline");
      P::Lock lock(mu_);
      runs_[i](RL_INFO) = runs_[i](RL_INFO) + 1;
      P::notify_all(cv_);
    });
  }
  void await_run(int i) {
    P::Lock lock(mu_);
    while (runs_[i](RL_INFO) == 0) P::wait(cv_, lock);
  }
  int runs(int i) {
    P::Lock lock(mu_);
    return runs_[i](RL_INFO);
  }
  void check_returned(const std::vector<TaskPtr>& returned, const TaskPtr& only) {
    TLAB_MODEL_CHECK(returned.size() == 1 && returned[0] == only,
                     "shutdown returned something other than the one not-yet-due task");
    TLAB_MODEL_CHECK(only->state() == TaskState::kCancelled, "a returned task is not kCancelled");
  }
};

// earlier_task: seed 001's race.
struct EarlierTask : ServiceSuite<EarlierTask, 2> {
  enum { kLate, kEarly };
  TaskPtr late_, early_;
  std::vector<TaskPtr> returned_;

  void before() {
    late_ = make_task(kLate, at_ms(10));
    early_ = make_task(kEarly, at_ms(5));
  }
  void thread(unsigned index) {
    if (index == 0) {
      service_.run_loop();
      return;
    }
    service_.schedule_at(late_, at_ms(10));
    clock_.set(at_ms(5));  // before late's deadline: a real clock wakes nobody here
    service_.schedule_at(early_, at_ms(5));
    await_run(kEarly);
    returned_ = service_.shutdown_now();
  }
  void after() {
    TLAB_MODEL_CHECK(runs(kEarly) == 1, "the earlier task ran other than once");
    TLAB_MODEL_CHECK(runs(kLate) == 0, "the later task ran before its deadline");
    check_returned(returned_, late_);
    service_.check_invariants();
  }
};

// shutdown_wakes: shutdown() wakes the sleeping thread.
struct ShutdownWakes : ServiceSuite<ShutdownWakes, 2> {
  enum { kStarted, kDueNow, kLate };
  TaskPtr started_, due_now_, late_;
  std::vector<TaskPtr> returned_;

  void before() {
    started_ = make_task(kStarted, at_ms(0));
    due_now_ = make_task(kDueNow, at_ms(0));
    late_ = make_task(kLate, at_ms(10));
  }
  void thread(unsigned index) {
    if (index == 0) {
      service_.run_loop();
      return;
    }
    // In production the thread exists from construction on; here the scheduler
    // first waits until the loop ran a task, so shutdown() meets a running loop
    // (asleep or not) rather than a driver-mode service.
    service_.schedule_at(started_, at_ms(0));
    await_run(kStarted);
    service_.schedule_at(late_, at_ms(10));
    service_.schedule_at(due_now_, at_ms(0));
    returned_ = service_.shutdown();
  }
  void after() {
    // The loop returned (or Relacy reported DEADLOCK), so shutdown's drain is over.
    TLAB_MODEL_CHECK(runs(kDueNow) == 1, "a task due at shutdown() did not run exactly once");
    TLAB_MODEL_CHECK(runs(kLate) == 0, "a task not yet due at shutdown() ran");
    check_returned(returned_, late_);
    TLAB_MODEL_CHECK(due_now_->state() == TaskState::kExecuted, "the due task is not kExecuted");
    service_.check_invariants();
  }
};

// run_once_vs_schedule: driver mode, run_once() racing schedule_at() and cancel().
struct RunOnceVsSchedule : ServiceSuite<RunOnceVsSchedule, 3> {
  enum { kTask };
  TaskPtr task_;
  int handed_ = 0;          // guarded by mu_: 1 once the task is scheduled
  int finished_ = 0;        // guarded by mu_: threads 1 and 2 that are done
  bool cancelled_ = false;  // thread 2's cancel() result; read in after()

  void before() { task_ = make_task(kTask, at_ms(0)); }
  void thread(unsigned index) {
    if (index == 0) {
      service_.run_once();
      {
        P::Lock lock(mu_);
        while (finished_ < 2) P::wait(cv_, lock);
      }
      service_.run_once();
    } else if (index == 1) {
      service_.schedule_at(task_, at_ms(0));
      P::Lock lock(mu_);
      handed_ = 1;
      ++finished_;
      P::notify_all(cv_);
    } else {
      {
        P::Lock lock(mu_);
        while (handed_ == 0) P::wait(cv_, lock);
      }
      cancelled_ = service_.cancel(task_);
      P::Lock lock(mu_);
      ++finished_;
      P::notify_all(cv_);
    }
  }
  void after() {
    const int ran = runs(kTask);
    TLAB_MODEL_CHECK(!(cancelled_ && ran > 0), "cancel() returned true but the task ran");
    TLAB_MODEL_CHECK(ran + (cancelled_ ? 1 : 0) == 1,
                     "the task neither ran exactly once nor was cancelled");
    TLAB_MODEL_CHECK(service_.pending() == 0, "an entry is left behind");
    service_.check_invariants();
  }
};

// throwing_task: a throwing task does not end the timer thread.
struct ThrowingTask : ServiceSuite<ThrowingTask, 2> {
  enum { kThrower, kEarly };
  TaskPtr thrower_, early_;
  std::vector<TaskPtr> returned_;

  void before() {
    thrower_ = Task::make([this] {
      {
        P::Lock lock(mu_);
        runs_[kThrower](RL_INFO) = runs_[kThrower](RL_INFO) + 1;
        P::notify_all(cv_);
      }
      throw std::runtime_error("model task throws");
    });
    early_ = make_task(kEarly, at_ms(0));
  }
  void thread(unsigned index) {
    if (index == 0) {
      try {
        service_.run_loop();
      } catch (const std::runtime_error&) {
        // The loop let a task's exception out (only the mutant does): the timer
        // thread is dead, as thread_main() would leave it.
      }
      return;
    }
    service_.schedule_at(thrower_, at_ms(0));
    await_run(kThrower);
    service_.schedule_at(early_, at_ms(0));
    await_run(kEarly);
    returned_ = service_.shutdown_now();
  }
  void after() {
    TLAB_MODEL_CHECK(runs(kThrower) == 1 && runs(kEarly) == 1, "a task did not run exactly once");
    TLAB_MODEL_CHECK(returned_.empty(), "shutdown_now() returned a task");
    TLAB_MODEL_CHECK(service_.stats().exceptions == 1, "the exception was not counted");
    service_.check_invariants();
  }
};

template <class Suite>
bool simulate(rl::test_params& params) {
  return rl::simulate<Suite>(params);
}

constexpr ModelTest kTests[] = {
    {"earlier_task",
     "an earlier task scheduled while the thread computes its wait is run",
     &simulate<EarlierTask>,
     "timer_notify_without_lock timer_no_notify_on_earlier timer_sleep_not_wait",
     CleanRun::kPasses,
     {.bound_slow = 1}},
    {"shutdown_wakes",
     "shutdown() wakes the sleeping timer thread; due tasks run once",
     &simulate<ShutdownWakes>,
     "timer_shutdown_no_wake:bound timer_sleep_not_wait:bound",
     CleanRun::kPasses,
     {}},
    {"run_once_vs_schedule",
     "run_once() racing schedule_at() and cancel(): run xor cancelled",
     &simulate<RunOnceVsSchedule>,
     "timer_cancel_no_remove",
     CleanRun::kPasses,
     {.bound_quick = 1, .bound_slow = 2}},
    {"throwing_task",
     "a throwing task does not stop the timer thread",
     &simulate<ThrowingTask>,
     "timer_exception_kills_thread",
     CleanRun::kPasses,
     {.bound_quick = 1}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("timer_service", tlab::models::kTests, argc, argv);
}
