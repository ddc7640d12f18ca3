// tlab/coro/with_timeout.h: `co_await with_timeout(loop, awaitable, d)`, a race
// between an awaitable and the loop's timer, decided by an RFC 0014 token.
//
// The result is a Timed<T>: either the awaitable's value (completed()) or
// timed_out(). Understood awaitables:
//   Task<T>              started at once (symmetric transfer) by a detached runner
//   Event<T, Loop>&      registered natively; set() may come from any thread
//   any other awaiter    (e.g. sleep_for(...), another with_timeout) wrapped in a
//                        Task and treated as one
//
// The race. The awaiting coroutine takes a slot from the loop's RacePool
// (coro/race_slot.h), records itself as the slot's waiter, arms the slot's token
// and inserts a timer entry carrying the token. Every party that can end the wait
// calls resolve(token): the timer entry when it fires (loop thread), the runner
// when the Task finishes (loop thread), Event::set (any thread). Exactly one
// resolve succeeds; ONLY that winner writes the outcome and schedules the waiter,
// so the waiter resumes exactly once. The losers do nothing else: their CAS fails
// and they never touch the waiter's frame.
//
//   | winner         | outcome   | the timer entry                   | the awaitable (loser side) |
//   |----------------|-----------|-----------------------------------|----------------------------------|
//   | Task finishes  | kCanceled | cancelled by the resumed waiter   | finished; value or exception
//   out | | Event::set     | kCanceled | cancelled by the resumed waiter   | set; value copied out
//   | | timer fires    | kExpired  | gone (fired)                      | see below |
//
// What happens to the loser when the timer wins:
//   - Task<T>: the task is NOT cancelled. Its runner is a detached root of the
//     loop: it keeps running to completion, then its value is dropped (an
//     exception is counted in LoopStats::discarded_exceptions), and its frames
//     are freed. run() waits for it like for any spawned task. Destroying a frame
//     at an arbitrary suspension point would need every awaitable to be
//     cancellation-safe; a detached run only needs the runner's late resolve to be
//     harmless, which the token makes it.
//   - Event: the waiter's registration is withdrawn (under the Event's mutex)
//     when the waiter resumes. A set() that took the registration first has
//     already lost its CAS and done nothing; a later set() just stores the value.
//   When the awaitable wins, the resumed waiter cancels its timer entry, so
//   pending_timers() returns to what it was (mutant kCoroTimerLeak skips this: the
//   entry stays queued until its deadline, then fires, loses its CAS and goes).
//
// No lost wakeup: an Event awaited under a timeout is registered (register_race)
// in the same Event::mu_ section that finds it unset, and set() takes the
// registration in the section that stores the value, so Event::check_invariants()
// ("a set Event has no coroutine registered") holds whenever mu_ is free, and a
// race the timer wins was one whose value had not come (a deserved timeout).
//
// Why the token and not a flag: a late loser (the runner after a timeout, a
// leaked timer) resolves with a token of an arming that is over; the slot's word
// has moved on (or been re-armed by another race) and the CAS fails. The slot is
// loop-owned and never freed, so a late loser never touches freed memory.
//
//   with_timeout(...)  O(1), nothing registered
//   co_await           slot acquire O(1) + arm + the strategy's insert
//   resolution         one CAS per resolver + O(1) schedule or post
//   resume             the strategy's cancel (awaitable won) + slot release O(1)
//
// Contract: d < 0 throws std::invalid_argument from the with_timeout call
// (checked_delay). d == 0 still starts a Task (it wins if it finishes without
// suspending) and an already-set Event wins without arming anything; otherwise
// the timer is due at once and wins in the next pass. An exception from the awaitable, when
// it wins, is rethrown from the co_await. (Mutant kCoroDueTimeoutInline lets an
// Event's already-due timeout win inline instead: a coroutine re-arming at 0 from
// its callback then never leaves the pass.)
//
// Ground rules: loop thread only (except Event::set). The awaiter is pinned once
// awaited; it lives in the awaiting frame.
//
// Memory ordering: see race_slot.h (arm release / resolve acq_rel) and
// EventLoop::post (mutex).
#pragma once

#include <concepts>
#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/race_slot.h"
#include "tlab/coro/task.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab {

// The result of a with_timeout: the awaitable's value, or "timed out".
template <class T>
class [[nodiscard]] Timed {
 public:
  static Timed expired() { return Timed(); }
  explicit Timed(T v) : value_(std::move(v)) {}

  bool completed() const noexcept { return value_.has_value(); }
  bool timed_out() const noexcept { return !value_.has_value(); }
  explicit operator bool() const noexcept { return completed(); }

  // Requires: completed().
  T& value() & {
    TLAB_CHECK(completed(), "Timed::value after a timeout");
    return *value_;
  }
  T&& value() && {
    TLAB_CHECK(completed(), "Timed::value after a timeout");
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  T* operator->() { return &value(); }

 private:
  Timed() = default;
  std::optional<T> value_;
};

template <>
class [[nodiscard]] Timed<void> {
 public:
  static Timed expired() noexcept { return Timed(false); }
  static Timed done() noexcept { return Timed(true); }
  bool completed() const noexcept { return completed_; }
  bool timed_out() const noexcept { return !completed_; }
  explicit operator bool() const noexcept { return completed_; }

 private:
  explicit Timed(bool c) noexcept : completed_(c) {}
  bool completed_;
};

namespace detail {

// The part every with_timeout awaiter shares: one slot, one armed token, one
// timer entry. Loop thread only.
template <class Loop>
class TimeoutRace {
 protected:
  using P = typename Loop::Platform;
  using Slot = typename Loop::Slot;

  TimeoutRace(Loop& loop, Instant deadline) noexcept : loop_(&loop), deadline_(deadline) {}
  TimeoutRace(TimeoutRace&& o) noexcept : loop_(o.loop_), deadline_(o.deadline_) {
    TLAB_CHECK(o.slot_ == nullptr, "with_timeout awaiter moved while suspended");
  }
  TimeoutRace(const TimeoutRace&) = delete;
  TimeoutRace& operator=(const TimeoutRace&) = delete;
  TimeoutRace& operator=(TimeoutRace&&) = delete;
  ~TimeoutRace() { abandon(); }

  // Takes a slot, records h as its waiter, arms the token, inserts the timer.
  void arm(std::coroutine_handle<> h) {
    slot_ = loop_->acquire_slot();
    slot_->waiter = h;  // before arm(): the winner reads it after its CAS
    token_ = slot_->token.arm();
    timer_ = loop_->add_timer(deadline_, LoopTimer{&on_timer, slot_, token_});
  }

  // Who won; valid once the waiter resumed (or after win_locally()).
  TimeoutResult winner() const noexcept { return slot_->outcome; }

  // The awaitable is known complete before anyone else can hold the token (an
  // Event set between await_ready and registration): win our own race.
  void win_locally() {
    const bool won = slot_->token.resolve(token_);
    TLAB_CHECK(won, "with_timeout: unshared token already resolved");
    slot_->outcome = TimeoutResult::kCanceled;
  }

  // The kCoroDueTimeoutInline mutant's shortcut: a timeout already due wins here,
  // in the awaiting coroutine's own resumption, instead of in the next pass's
  // expire (the contract above: "the timer is due at once and wins in the next
  // pass"). Returns true if it took the race.
  bool expire_if_due() {
    if (deadline_ > loop_->now()) return false;
    const bool won = slot_->token.resolve(token_);
    TLAB_CHECK(won, "with_timeout: unshared token already resolved");
    slot_->outcome = TimeoutResult::kExpired;
    loop_->cancel_timer(timer_);
    return true;
  }

  // tlab::detail::TimeoutRace::finish: after resuming. Cancels the timer entry if
  // the awaitable won, and returns the slot.
  void finish() {
    if (slot_->outcome == TimeoutResult::kCanceled) {
      if (P::mutated(Mutant::kCoroTimerLeak)) {
        // BUG (mutant): the losing timer stays queued until its deadline; it then
        // fires, loses its CAS (stale token) and goes. Memory-safe, but leaked.
      } else {
        loop_->cancel_timer(timer_);
      }
    }
    loop_->release_slot(slot_);
    slot_ = nullptr;
  }

  // Destroyed while suspended (only ~EventLoop does that): take the race over so
  // that nobody can schedule this frame, withdraw the timer, return the slot.
  void abandon() {
    if (slot_ == nullptr) return;
    (void)slot_->token.resolve(token_);  // win, or someone already won: either way over
    loop_->cancel_timer(timer_);
    loop_->release_slot(slot_);
    slot_ = nullptr;
  }

  // The timer entry's fire(): loop thread, inside expire().
  static void on_timer(void* loop, void* target, CoroToken t) {
    auto* s = static_cast<Slot*>(target);
    // Lost: the awaitable won (or this is a stale, leaked entry whose slot moved on).
    if (!s->token.resolve(t)) return;
    s->outcome = TimeoutResult::kExpired;
    P::fault(FaultPoint::kCoroBeforeResume);
    static_cast<Loop*>(loop)->schedule(s->waiter);
  }

  Loop* loop_;
  Instant deadline_;
  Slot* slot_ = nullptr;
  CoroToken token_{};
  TimerHandle timer_{};
};

// What the runner hands to the waiter when the task wins.
template <class T>
struct RaceOutcome {
  std::optional<T> value;
  std::exception_ptr error;
};
template <>
struct RaceOutcome<void> {
  std::exception_ptr error;
};

// The detached root that runs the raced Task. It owns the Task (and so its
// frames) until the task finishes, win or lose. Touches `out` and the slot's
// waiter only after winning the CAS; a loser touches nothing but the word.
template <class T, class Loop>
RootTask timeout_runner(Task<T> task, Loop* loop, typename Loop::Slot* slot, CoroToken token,
                        RaceOutcome<T>* out) {
  RaceOutcome<T> local;
  try {
    if constexpr (std::is_void_v<T>) {
      co_await std::move(task);
    } else {
      local.value.emplace(co_await std::move(task));
    }
  } catch (...) {
    local.error = std::current_exception();
  }
  if (slot->token.resolve(token)) {
    *out = std::move(local);
    slot->outcome = TimeoutResult::kCanceled;
    Loop::Platform::fault(FaultPoint::kCoroBeforeResume);
    loop->schedule(slot->waiter);
  } else if (local.error) {
    loop->note_discarded_exception();  // the timer won; the loser's failure is dropped
  }
}

template <class A>
using AwaiterResult = decltype(std::declval<A&>().await_resume());

// Wraps any awaiter in a Task so it can be raced like one.
template <class A>
Task<AwaiterResult<A>> as_task(A awaiter) {
  co_return co_await std::move(awaiter);
}

}  // namespace detail

// The awaiter of with_timeout(loop, Task<T>, d).
template <class T, class Loop>
class [[nodiscard]] TaskTimeout : detail::TimeoutRace<Loop> {
  using Base = detail::TimeoutRace<Loop>;

 public:
  TaskTimeout(Loop& loop, Task<T> task, Instant deadline)
      : Base(loop, deadline), task_(std::move(task)) {
    TLAB_CHECK(task_.valid(), "with_timeout: empty Task");
  }
  TaskTimeout(TaskTimeout&&) noexcept = default;

  bool await_ready() const noexcept { return false; }
  // Arms the race, then starts the task at once by symmetric transfer to its
  // runner; the waiter resumes when the runner or the timer wins.
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
    this->arm(h);
    return this->loop_->adopt(detail::timeout_runner<T, Loop>(
        std::move(task_), this->loop_, this->slot_, this->token_, &outcome_));
  }
  Timed<T> await_resume() {
    const TimeoutResult r = this->winner();
    this->finish();
    if (r == TimeoutResult::kExpired) return Timed<T>::expired();
    if (outcome_.error) std::rethrow_exception(outcome_.error);
    if constexpr (std::is_void_v<T>) {
      return Timed<void>::done();
    } else {
      return Timed<T>(std::move(*outcome_.value));
    }
  }

 private:
  Task<T> task_;
  detail::RaceOutcome<T> outcome_;
};

// The awaiter of with_timeout(loop, Event&, d).
template <class T, class Loop>
class [[nodiscard]] EventTimeout : detail::TimeoutRace<Loop> {
  using Base = detail::TimeoutRace<Loop>;

 public:
  EventTimeout(Loop& loop, Event<T, Loop>& event, Instant deadline)
      : Base(loop, deadline), event_(&event) {}
  EventTimeout(EventTimeout&&) noexcept = default;
  ~EventTimeout() {
    if (this->slot_ != nullptr) event_->withdraw_race(this->slot_, this->token_);
  }

  // Already set: the value wins without a race (no slot, no timer).
  bool await_ready() const { return event_->is_set(); }
  bool await_suspend(std::coroutine_handle<> h) {
    this->arm(h);
    if (Loop::Platform::mutated(Mutant::kCoroDueTimeoutInline) && this->expire_if_due()) {
      return false;
    }
    if (event_->register_race(this->slot_, this->token_)) return true;
    this->win_locally();  // set between await_ready and now: resume at once
    return false;
  }
  Timed<T> await_resume() {
    if (this->slot_ != nullptr) {
      const TimeoutResult r = this->winner();
      if (r == TimeoutResult::kExpired) event_->withdraw_race(this->slot_, this->token_);
      this->finish();
      if (r == TimeoutResult::kExpired) return Timed<T>::expired();
    }
    return Timed<T>(event_->value());
  }

 private:
  Event<T, Loop>* event_;
};

// tlab::with_timeout: races `task` against a timer of `d` on `loop`.
// Throws std::invalid_argument if d < 0.
template <class T, class Loop>
TaskTimeout<T, Loop> with_timeout(Loop& loop, Task<T> task, Duration d) {
  const Instant deadline =
      deadline_after<typename Loop::Platform>(loop.now(), checked_delay(d, "with_timeout"));
  return TaskTimeout<T, Loop>(loop, std::move(task), deadline);
}

// tlab::with_timeout: races `event` (settable from any thread) against a timer.
template <class T, class Loop>
EventTimeout<T, Loop> with_timeout(Loop& loop, Event<T, Loop>& event, Duration d) {
  const Instant deadline =
      deadline_after<typename Loop::Platform>(loop.now(), checked_delay(d, "with_timeout"));
  return EventTimeout<T, Loop>(loop, event, deadline);
}

// tlab::with_timeout: any other awaiter (sleep_for(...), a nested with_timeout),
// run as a Task: on timeout it keeps running detached, like a Task.
template <class A, class Loop>
requires requires(A& a) { a.await_resume(); }
auto with_timeout(Loop& loop, A&& awaiter, Duration d) {
  return with_timeout(loop, detail::as_task(std::forward<A>(awaiter)), d);
}

}  // namespace tlab
