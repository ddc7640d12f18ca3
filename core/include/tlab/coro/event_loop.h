// tlab/coro/event_loop.h: EventLoop, a single-threaded coroutine executor with a
// timer queue and a thread-safe wake path.
//
// The C++20 version of seed 004's Executor, with the TimerFuture's timer thread
// replaced by a timer queue that the loop itself expires: one thread resumes
// coroutines from a ready queue, fires due timers from any TimerQueue strategy
// (queue/timer_queue.h), and sleeps until the next deadline or until another
// thread post()s a coroutine. Tuned for being deterministic under a ManualClock
// (run_once()/run_until_idle() never block) and for never spinning under a real
// clock (run() blocks on the condition variable between passes).
//
//   spawn        O(1) + one root frame allocation
//   post         O(1) amortised, one mutex acquisition, one notify (any thread)
//   add_timer    the strategy's insert;  cancel_timer: the strategy's cancel
//   one pass     O(posted + fired timers + ready handles), plus the strategy's expire
//
// Departs from the seed: no waker objects and no channel. A coroutine that
// suspends registers its coroutine_handle where its wake-up will come from (a
// timer entry, an Event); whoever wakes it pushes the handle on the ready queue
// (loop thread) or post()s it (other threads). Only the loop thread resumes.
//
// One pass (run_once):
//   1. move every post()ed handle to the ready queue (one lock acquisition);
//   2. expire(now) on the timer queue: each due entry's fire() runs on the loop
//      thread and may push a handle (fire functions never touch the queue, which
//      forbids re-entry from its sink);
//   3. resume the handles that were ready when step 3 began, in FIFO order;
//      handles readied during step 3 wait for the next pass (a pass is bounded).
//
// run() repeats passes until every spawned task has finished; between passes
// that did nothing it waits on the condition variable until the head timer's
// deadline or a post()/wake(). No lost wake-up: post() pushes and notifies under
// the mutex, and run() checks the posted list under the same mutex before it
// waits, so a post is either seen by the check or notifies a thread already
// waiting (the argument of TimerService, seed 001). Only the loop thread inserts
// timers, so no earlier deadline can appear while it waits. With a virtual clock
// wait_until never times out: whoever advances the clock calls wake().
//
// Ownership of frames: spawn(Task<void>) wraps the task in a root coroutine the
// loop owns (an intrusive list of roots); a root frees itself when its task
// finishes. Nested Tasks are owned by the frames that await them. ~EventLoop
// destroys every root still suspended, innermost frames first via ~Task; the
// awaiters' destructors cancel their timers and withdraw from Events. An exception
// escaping a spawned task is counted and the first one kept (stats(),
// take_unhandled_exception()); it does not stop the loop.
//
// Ground rules: spawn, run*, add_timer, cancel_timer, schedule, adopt, the race
// pool and all stats: the loop thread (the one calling run*, or any one thread
// while no run* is active). post() and wake(): any thread, while the loop object
// lives. Other threads must stop posting before ~EventLoop.
//
// Memory ordering: post() and the pass's drain both hold mu_, so everything a
// poster wrote before post(h) is visible to h when the loop resumes it.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/coro/race_slot.h"
#include "tlab/coro/task.h"
#include "tlab/platform/platform.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

// The payload the loop stores in its timer queue: a plain function pointer and
// two words, so every strategy can hold it and copy it. fire() runs on the loop
// thread, inside expire()'s sink: it may schedule() handles and resolve tokens,
// but must not call add_timer/cancel_timer (the queue forbids re-entry).
struct LoopTimer {
  void (*fire)(void* loop, void* target, CoroToken token) = nullptr;
  void* target = nullptr;
  CoroToken token{};  // race timers only; sleep timers leave it empty
};

// Counters of one loop. Loop thread only.
struct LoopStats {
  std::uint64_t passes = 0;                // run_once() calls, direct or from run()
  std::uint64_t waits = 0;                 // times run() blocked on the condition variable
  std::uint64_t resumes = 0;               // handles resumed from the ready queue
  std::uint64_t timers_fired = 0;          // timer entries delivered by expire()
  std::uint64_t posts = 0;                 // handles taken from the posted list
  std::uint64_t spawned = 0;               // root tasks created (spawn + with_timeout runners)
  std::uint64_t unhandled_exceptions = 0;  // spawned tasks that ended by throwing
  std::uint64_t discarded_exceptions = 0;  // with_timeout losers that ended by throwing
};

namespace detail {

// Intrusive list node of the loop's root coroutines.
struct RootNode {
  RootNode* prev = this;
  RootNode* next = this;
  void* frame = nullptr;  // the root's coroutine_handle address
  bool linked() const noexcept { return next != this; }
  void unlink() noexcept {
    prev->next = next;
    next->prev = prev;
    prev = next = this;
  }
  void link_before(RootNode* at) noexcept {
    prev = at->prev;
    next = at;
    at->prev->next = this;
    at->prev = this;
  }
};

// A detached root coroutine: starts suspended, frees its own frame when it
// finishes (final_suspend never suspends), and unlinks itself from the loop's root
// list in the promise destructor, which runs both on normal completion and when
// ~EventLoop destroys it while suspended. Its body must catch everything.
class RootTask {
 public:
  struct promise_type {
    RootNode node;
    std::size_t* live = nullptr;  // the owning loop's live-task count

    RootTask get_return_object() noexcept {
      return RootTask(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    // Root bodies catch every exception themselves; reaching here is a bug.
    void unhandled_exception() noexcept { std::terminate(); }
    ~promise_type() {
      if (node.linked()) {
        node.unlink();
        --*live;
      }
    }
  };
  using Handle = std::coroutine_handle<promise_type>;

  RootTask(RootTask&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  RootTask(const RootTask&) = delete;
  RootTask& operator=(const RootTask&) = delete;
  RootTask& operator=(RootTask&&) = delete;
  // A RootTask that was never adopted still owns its (unstarted) frame.
  ~RootTask() {
    if (h_) h_.destroy();
  }
  Handle release() noexcept { return std::exchange(h_, {}); }

 private:
  explicit RootTask(Handle h) noexcept : h_(h) {}
  Handle h_;
};

}  // namespace detail

template <template <class, class> class QueueT, class P>
requires Platform<P> && TimerQueue<QueueT<LoopTimer, P>>
class EventLoop {
 public:
  using Platform = P;
  using Clock = typename P::Clock;
  using Queue = QueueT<LoopTimer, P>;
  using Slot = RaceSlot<P>;

  // tlab::EventLoop::EventLoop
  // Ensures: an idle loop whose timer queue starts at clock.now() (cfg.start is
  // overwritten; tick, wheel_slots and capacity_hint are used as given).
  // Requires: `clock` outlives the loop.
  explicit EventLoop(const Clock& clock, QueueConfig cfg = {})
      : clock_(&clock), queue_(with_start(cfg, clock.now())) {}
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // tlab::EventLoop::~EventLoop
  // Requires: no other thread calls post()/wake() any more.
  // Ensures: every root still suspended is destroyed (never resumed); their
  // awaiters cancel their timers. Posted and ready handles are dropped unrun.
  ~EventLoop() {
    ready_.clear();
    {
      typename P::Lock lock(mu_);
      posted_.clear();
    }
    while (roots_.linked()) {
      RootNode* n = roots_.next;
      std::coroutine_handle<>::from_address(n->frame).destroy();  // the promise unlinks n
    }
  }

  // tlab::EventLoop::spawn
  // Ensures: the task runs in a later pass; the loop owns it until it finishes.
  // Thread safety: loop thread only.
  void spawn(Task<void> task) {
    TLAB_CHECK(task.valid(), "EventLoop::spawn: empty Task");
    schedule(adopt(spawn_body(std::move(task), this)));
  }

  // tlab::EventLoop::run
  // Ensures: returns once every spawned task (and every detached with_timeout
  // loser) has finished. Blocks, without spinning, while nothing is ready.
  // Thread safety: loop thread only.
  void run() {
    while (live_ > 0) {
      if (run_once() > 0) continue;
      typename P::Lock lock(mu_);
      if (!posted_.empty() || wake_requested_) {
        wake_requested_ = false;
        continue;
      }
      ++stats_.waits;
      if (const std::optional<Instant> next = queue_.next_deadline()) {
        // next_deadline() is a lower bound (wheels report a bucket's tick). If it is
        // already past although this pass fired nothing, the entry is due within a
        // tick: wait one tick rather than spin.
        const Instant now = clock_->now();
        P::wait_until(cv_, lock, *clock_, *next > now ? *next : now + queue_.tick());
      } else {
        P::wait(cv_, lock);
      }
      wake_requested_ = false;
    }
  }

  // tlab::EventLoop::run_once: one pass (see the header comment). Never blocks.
  // Ensures: returns the number of handles taken from the posted list, timers
  // fired and handles resumed; 0 means the pass found nothing to do.
  // Thread safety: loop thread only.
  std::size_t run_once() {
    ++stats_.passes;
    std::size_t progress = 0;
    {
      typename P::Lock lock(mu_);
      incoming_.swap(posted_);
    }
    for (std::coroutine_handle<> h : incoming_) ready_.push_back(h);
    stats_.posts += incoming_.size();
    progress += incoming_.size();
    incoming_.clear();

    const std::size_t fired = queue_.expire(
        clock_->now(), [this](LoopTimer&& t, Instant) { t.fire(this, t.target, t.token); });
    stats_.timers_fired += fired;
    progress += fired;

    // Only what was ready at this point: a pass is bounded even if coroutines keep
    // readying each other.
    for (std::size_t n = ready_.size(); n > 0; --n) {
      std::coroutine_handle<> h = ready_.front();
      ready_.pop_front();
      ++stats_.resumes;
      ++progress;
      h.resume();
    }
    return progress;
  }

  // tlab::EventLoop::run_until_idle
  // Ensures: runs passes until one finds nothing to do: nothing posted, no timer
  // due at the clock's current time, nothing ready. Never blocks. Returns the
  // total progress. (A coroutine that sleeps for zero in a loop keeps it busy.)
  std::size_t run_until_idle() {
    std::size_t total = 0;
    while (const std::size_t p = run_once()) total += p;
    return total;
  }

  // tlab::EventLoop::post
  // Ensures: h is resumed by the loop thread in a later pass; a run() blocked on
  // the condition variable is woken.
  // Requires: h is suspended and nobody else will resume it.
  // Thread safety: any thread.
  // Memory ordering: everything the caller wrote before post() happens-before h
  // resumes (mu_ is released here and acquired by the pass that drains it).
  void post(std::coroutine_handle<> h) {
    typename P::Lock lock(mu_);
    posted_.push_back(h);
    // Notify under the lock: the loop either has not yet checked posted_ (and will
    // see h) or is already waiting (and gets this notify). See the header comment.
    P::notify_one(cv_);
  }

  // tlab::EventLoop::wake: makes a blocked run() re-check the clock and timers.
  // Needed after advancing a virtual clock. Thread safety: any thread.
  void wake() {
    typename P::Lock lock(mu_);
    wake_requested_ = true;
    P::notify_one(cv_);
  }

  // ---- the awaiter interface (sleep_for.h, event.h, with_timeout.h) ----------
  // All loop thread only.

  Instant now() const noexcept { return clock_->now(); }
  const Clock& clock() const noexcept { return *clock_; }

  // tlab::EventLoop::add_timer: t.fire(loop, t.target, t.token) runs on the loop
  // thread in the first pass whose expire() finds the deadline due.
  TimerHandle add_timer(Instant deadline, LoopTimer t) {
    TLAB_CHECK(t.fire != nullptr, "EventLoop::add_timer: no fire function");
    return queue_.insert(deadline, std::move(t));
  }
  // tlab::EventLoop::cancel_timer: true iff the entry was pending; it never fires.
  bool cancel_timer(TimerHandle h) { return queue_.cancel(h); }

  // tlab::EventLoop::schedule: h resumes in this pass (if step 3 has not reached
  // the end of the handles it started with) or the next. Loop thread only; other
  // threads post().
  void schedule(std::coroutine_handle<> h) { ready_.push_back(h); }

  // tlab::EventLoop::adopt: the loop takes ownership of a root coroutine and
  // counts it as a live task. Returns its handle; the caller either schedule()s
  // it or resumes it at once (with_timeout's runner, by symmetric transfer).
  std::coroutine_handle<> adopt(detail::RootTask root) {
    typename detail::RootTask::Handle h = root.release();
    h.promise().live = &live_;
    h.promise().node.frame = h.address();
    h.promise().node.link_before(&roots_);
    ++live_;
    ++stats_.spawned;
    return h;
  }

  Slot* acquire_slot() { return races_.acquire(); }
  void release_slot(Slot* s) { races_.release(s); }

  // A with_timeout loser finished by throwing; its exception is dropped.
  void note_discarded_exception() noexcept { ++stats_.discarded_exceptions; }

  // ---- observers ---------------------------------------------------------------

  // Timer entries pending in the queue (sleepers + with_timeout timers).
  std::size_t pending_timers() const noexcept { return queue_.size(); }
  // Root tasks alive: spawned tasks plus with_timeout runners not yet finished.
  std::size_t live_tasks() const noexcept { return live_; }
  // with_timeout races whose awaiter has not yet resumed.
  std::size_t races_in_flight() const noexcept { return races_.in_use(); }
  std::size_t ready_count() const noexcept { return ready_.size(); }
  const LoopStats& stats() const noexcept { return stats_; }
  const Queue& queue() const noexcept { return queue_; }

  // tlab::EventLoop::take_unhandled_exception: the first exception that escaped a
  // spawned task since the last call (null if none).
  std::exception_ptr take_unhandled_exception() noexcept { return std::exchange(first_error_, {}); }

  // tlab::EventLoop::check_invariants: the queue's own invariants, the race pool's,
  // and the root list length equals the live count.
  void check_invariants() const {
    queue_.check_invariants();
    races_.check_invariants();
    std::size_t n = 0;
    for (const RootNode* p = roots_.next; p != &roots_; p = p->next) ++n;
    TLAB_CHECK(n == live_, "EventLoop: root list length=", n, " live=", live_);
  }

 private:
  using RootNode = detail::RootNode;

  static QueueConfig with_start(QueueConfig cfg, Instant start) {
    cfg.start = start;
    return cfg;
  }

  static detail::RootTask spawn_body(Task<void> task, EventLoop* loop) {
    try {
      co_await std::move(task);
    } catch (...) {
      loop->note_unhandled(std::current_exception());
    }
  }

  void note_unhandled(std::exception_ptr e) noexcept {
    ++stats_.unhandled_exceptions;
    if (!first_error_) first_error_ = std::move(e);
  }

  const Clock* clock_;
  Queue queue_;                                    // loop thread only
  std::deque<std::coroutine_handle<>> ready_;      // loop thread only
  std::vector<std::coroutine_handle<>> incoming_;  // loop thread only (drain buffer)
  RacePool<P> races_;                              // loop thread only (words: anyone)
  RootNode roots_;                                 // loop thread only; sentinel of the root list
  std::size_t live_ = 0;                           // loop thread only
  LoopStats stats_;                                // loop thread only
  std::exception_ptr first_error_;                 // loop thread only

  mutable typename P::Mutex mu_;
  typename P::CondVar cv_;
  std::vector<std::coroutine_handle<>> posted_ TLAB_GUARDED_BY(mu_);
  bool wake_requested_ TLAB_GUARDED_BY(mu_) = false;
};

}  // namespace tlab
