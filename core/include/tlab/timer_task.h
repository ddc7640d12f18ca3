// tlab/timer_task.h: TimerTask, the unit of work a TimerService runs (java.util.TimerTask).
//
// A TimerTask is a callable plus one atomic state word. It is shared
// (std::shared_ptr, TimerTaskPtr<P>) between the code that scheduled it and the
// service's queue, so either side may drop it first. A task is scheduled AT MOST
// ONCE in its life, on one service, exactly as in Java: to run something again,
// make a new task. That one-shot life is what lets cancel() be a single atomic
// step that needs no lock and cannot be confused by a later scheduling.
//
// State machine (cells: new state, and what cancel() returns):
//
//   | state      | schedule*()  | cancel()          | the timer takes it when due        |
//   |------------|--------------|-------------------|------------------------------------|
//   | kVirgin    | kScheduled   | kCancelled, false | n/a (not queued)                   |
//   | kScheduled | logic_error  | kCancelled, true  | one-shot: kExecuted, runs          |
//   |            |              |                   | periodic: stays, re-queued, runs   |
//   | kExecuted  | logic_error  | unchanged, false  | n/a (it ran, or is running)        |
//   | kCancelled | logic_error  | unchanged, false  | skipped (counted), never runs      |
//
// cancel() is task->cancel() or service.cancel(task); they differ only in the
// queue entry: task->cancel() leaves it as a tombstone (no lock, so it cannot touch
// the queue); service.cancel(task) removes it, and removes a tombstone it finds.
//
// Shutdown retires what is still pending (timer_service.h has the table): a task it
// hands back unrun goes kScheduled -> kCancelled; a periodic task whose last run
// happens in shutdown()'s drain goes kScheduled -> kExecuted after that run.
//
// cancel() returns true iff it moved the word out of kScheduled: for a one-shot task,
// iff it prevented the run (the timer's kScheduled -> kExecuted CAS and cancel's
// CAS cannot both win); for a periodic task, iff it prevented every FUTURE run (a
// run already started finishes). Java's TimerTask.cancel() has the same contract.
//
// Where this departs from Java: cancel() on an executed one-shot task leaves it
// kExecuted (Java overwrites it with CANCELLED; the result, false, is the same), so
// state() keeps telling what happened.
//
// Cost: cancel() is one CAS loop on an uncontended word (two iterations at most:
// the word only ever leaves kVirgin/kScheduled, never returns). state() is a load.
//
// Ground rules: callback_ is immutable after construction. state_ and owner_ may be
// touched by anyone, atomically. Every other field belongs to the owning service
// and is read or written only under that service's mutex (or, for
// last_deadline_, on the thread running the task).
//
// Memory ordering: every atomic operation here is seq_cst. The word is touched a
// few times per task life, always next to a mutex operation, so weaker orders would
// buy nothing measurable; seq_cst keeps the exclusivity argument above a one-liner.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#include "tlab/clock.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

enum class TaskState : std::uint32_t { kVirgin, kScheduled, kExecuted, kCancelled };

constexpr const char* name_of(TaskState s) {
  switch (s) {
    case TaskState::kVirgin:
      return "virgin";
    case TaskState::kScheduled:
      return "scheduled";
    case TaskState::kExecuted:
      return "executed";
    case TaskState::kCancelled:
      return "cancelled";
  }
  return "?";
}

// How a scheduled task repeats. Java encodes this in the sign of `period`.
enum class TaskKind : std::uint8_t {
  kOnce,        // runs once at its deadline
  kFixedDelay,  // next deadline = the instant the run was taken + period (no catch-up)
  kFixedRate,   // next deadline = previous deadline + period (catches up when late)
  kFixedRateSkip,  // next deadline = the first grid point after the run (missed_tick.h)
};

template <class Q, class P>
class TimerService;

template <class P>
class TimerTask : public std::enable_shared_from_this<TimerTask<P>> {
 public:
  using Callback = std::function<void()>;

  // tlab::TimerTask::TimerTask
  // Requires: fn is not empty (else std::invalid_argument).
  explicit TimerTask(Callback fn) : callback_(std::move(fn)) {
    if (!callback_) throw std::invalid_argument("TimerTask: empty callback");
  }
  TimerTask(const TimerTask&) = delete;
  TimerTask& operator=(const TimerTask&) = delete;

  // tlab::TimerTask::make: std::make_shared<TimerTask>(fn).
  static std::shared_ptr<TimerTask> make(Callback fn) {
    return std::make_shared<TimerTask>(std::move(fn));
  }

  // tlab::TimerTask::cancel
  // Ensures: the task never starts another run; returns true iff it was kScheduled
  // (one-shot: the run was prevented; periodic: future runs were prevented). A
  // virgin task becomes kCancelled and can then never be scheduled.
  // Does NOT remove the queue entry: it stays as a tombstone until it comes due
  // (skipped) or purge()/service.cancel() removes it. Use TimerService::cancel to
  // free the entry at once.
  // Thread safety: any thread, any time, no lock; safe after the service is gone.
  bool cancel() noexcept {
    std::uint32_t cur = state_.load();
    while (cur == raw(TaskState::kVirgin) || cur == raw(TaskState::kScheduled)) {
      if (state_.compare_exchange_strong(cur, raw(TaskState::kCancelled))) {
        return cur == raw(TaskState::kScheduled);
      }
    }
    return false;
  }

  TaskState state() const noexcept { return static_cast<TaskState>(state_.load()); }

  // tlab::TimerTask::scheduled_time: the deadline of the most recent run, started
  // or finished (Java's scheduledExecutionTime()); Instant::min() before the first.
  // A fixed-rate task in catch-up sees each missed deadline in turn here.
  // Thread safety: any thread.
  Instant scheduled_time() const noexcept {
    return Instant::from_ns(static_cast<std::int64_t>(last_deadline_.load()));
  }

 private:
  template <class, class>
  friend class TimerService;

  static constexpr std::uint32_t raw(TaskState s) noexcept { return static_cast<std::uint32_t>(s); }
  static constexpr std::size_t kNotQueued = std::numeric_limits<std::size_t>::max();

  // CAS from -> to; true iff it won.
  bool transition(TaskState from, TaskState to) noexcept {
    std::uint32_t expected = raw(from);
    return state_.compare_exchange_strong(expected, raw(to));
  }

  const Callback callback_;
  typename P::template Atomic<std::uint32_t> state_{raw(TaskState::kVirgin)};
  // The owning service's address, claimed once by CAS from 0 (schedule*()).
  typename P::template Atomic<std::uint64_t> owner_{0};
  // Written by the thread running the task before each run.
  typename P::template Atomic<std::uint64_t> last_deadline_{
      static_cast<std::uint64_t>(Instant::min().ns())};

  // --- owned by the service's mutex ---
  TaskKind kind_ = TaskKind::kOnce;
  Duration period_;
  Instant deadline_;                       // current queue deadline (while queued)
  TimerHandle handle_;                     // queue handle (while queued)
  std::size_t queued_index_ = kNotQueued;  // position in the service's queued_ list
  std::uint64_t armed_seq_ = 0;            // the service's arm_seq_ at its latest (re)schedule
};

template <class P>
using TimerTaskPtr = std::shared_ptr<TimerTask<P>>;

}  // namespace tlab
