// tlab/coro/sleep_for.h: `co_await sleep_for(loop, d)` and `sleep_until(loop, t)`.
//
// The coroutine counterpart of seed 004's TimerFuture. The seed spawns one OS
// thread per timer that sleeps and then wakes the future; here the awaiter puts
// one entry in the loop's timer queue, and the loop, when it expires that entry,
// pushes the suspended coroutine on its ready queue. No thread, no mutex, no
// shared state: the whole sleep happens on the loop thread.
//
//   sleep_for / sleep_until   O(1): computes the deadline, nothing registered yet
//   co_await                  the strategy's insert
//   wake-up                   the strategy's expire share + O(1) to schedule
//   destroyed while asleep    the strategy's cancel (the entry is withdrawn)
//
// Contract (clock.h's, the same everywhere in tlab):
//   - sleep_for(loop, d) with d < 0 throws std::invalid_argument from the
//     sleep_for call itself, which is part of the co_await expression, so the
//     exception surfaces in the awaiting coroutine before it suspends. Nothing is
//     registered.
//   - The deadline is fixed when sleep_for is called: loop.now() + d, saturating
//     (Duration::max() gives Instant::max(), a sleep that never ends while time
//     is finite; it is not an error).
//   - A zero (or past) deadline still suspends and goes through the queue: the
//     coroutine resumes in the next pass, after the timers already due. So a zero
//     sleep is a fair yield, ordered with the other due timers.
//   - Wake-ups follow the queue strategy's firing contract: never before the
//     deadline, at most one tick late, FIFO among equal deadlines on exact
//     strategies.
//
// Ground rules: loop thread only. The awaiter is pinned while suspended (it lives
// in the coroutine frame); it may be moved only before it is awaited.
//
// Memory ordering: none; single-threaded.
#pragma once

#include <coroutine>
#include <utility>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/coro/event_loop.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

template <class Loop>
class [[nodiscard]] SleepAwaiter {
 public:
  SleepAwaiter(Loop& loop, Instant deadline) noexcept : loop_(&loop), deadline_(deadline) {}
  SleepAwaiter(SleepAwaiter&& o) noexcept : loop_(o.loop_), deadline_(o.deadline_) {
    TLAB_CHECK(o.timer_.is_null(), "SleepAwaiter moved while suspended");
  }
  SleepAwaiter(const SleepAwaiter&) = delete;
  SleepAwaiter& operator=(const SleepAwaiter&) = delete;
  SleepAwaiter& operator=(SleepAwaiter&&) = delete;

  // Destroyed while suspended (the frame was destroyed, e.g. by ~EventLoop):
  // withdraw the entry so it never fires into a dead frame.
  ~SleepAwaiter() {
    if (!timer_.is_null() && !fired_) loop_->cancel_timer(timer_);
  }

  Instant deadline() const noexcept { return deadline_; }

  // Always suspends: even a due deadline goes through the queue (see above).
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    waiter_ = h;
    timer_ = loop_->add_timer(deadline_, LoopTimer{&fire, this, {}});
  }
  void await_resume() const noexcept {}

 private:
  // Runs on the loop thread inside expire(): the sleeper won trivially (nobody
  // else can wake it), so mark it and schedule it.
  static void fire(void* loop, void* self, CoroToken) {
    auto* a = static_cast<SleepAwaiter*>(self);
    a->fired_ = true;
    Loop::Platform::fault(FaultPoint::kCoroBeforeResume);
    static_cast<Loop*>(loop)->schedule(a->waiter_);
  }

  Loop* loop_;
  Instant deadline_;
  std::coroutine_handle<> waiter_;
  TimerHandle timer_;
  bool fired_ = false;
};

// tlab::sleep_until: suspends the calling coroutine until `deadline` on the loop's
// clock. Any instant is accepted; one in the past resumes in the next pass.
template <class Loop>
SleepAwaiter<Loop> sleep_until(Loop& loop, Instant deadline) noexcept {
  return SleepAwaiter<Loop>(loop, deadline);
}

// tlab::sleep_for: suspends the calling coroutine for `d` on the loop's clock.
// Throws std::invalid_argument if d < 0 (checked_delay), before suspending.
template <class Loop>
SleepAwaiter<Loop> sleep_for(Loop& loop, Duration d) {
  return SleepAwaiter<Loop>(
      loop, deadline_after<typename Loop::Platform>(loop.now(), checked_delay(d, "sleep_for")));
}

}  // namespace tlab
