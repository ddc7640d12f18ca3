// tests/support/manual_timer_source.h: a deterministic TimerSource for tests.
//
// ManualTimerSource plays the RFC's "event loop" for unit tests: it keeps the
// scheduled callbacks in deadline order over its own ManualClock and runs them
// only when the test says so (fire_due(), fire(id)). Nothing here sleeps or owns a
// thread, so a test decides exactly which interleaving happens; a test that wants
// a "timer thread" starts a ManualTimerDriver (below) or calls fire_due() from a
// thread of its own.
//
// It models tlab::TimerSource (timer_source.h) exactly:
//   schedule_at(deadline, cb)  O(log n); throws std::logic_error after shutdown().
//   cancel(id)                 O(log n); true iff the callback was still pending.
//                              false: it has run, is running, or was cancelled.
//   fire_due()                 runs every callback whose deadline <= now(), earliest
//                              first, FIFO among equal deadlines; returns how many.
//   fire(id)                   runs one pending callback now, whatever its deadline
//                              (an early fire: only for tests that say so).
// Callbacks run on the thread that calls fire_due()/fire(), outside the source's
// lock, one at a time per calling thread, and each is removed before it runs (so
// a concurrent cancel() of a running callback returns false, as the concept says).
//
// Optional mode, set_fire_inline_when_due(true): schedule_at() runs a callback
// whose deadline is already due before returning. That is a legal interleaving
// (the concept only promises "no earlier than the deadline"; a real timer thread
// can be that fast) and lets single-threaded tests time out a wait without a
// second thread.
//
// Ground rules: every member is thread-safe (one internal mutex), so worker
// threads may schedule and cancel while the test thread fires. Only one thread
// should move the clock (ManualClock::set is not a read-modify-write). This is
// test support: it uses std types directly, not a Platform; its mutex is a
// StdMutex (std::mutex with clang's capability attributes, std_mutex.h) so that
// the clang-tsa check (tests/tsa/) checks its TLAB_GUARDED_BY fields too.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "tlab/base/annotations.h"
#include "tlab/clock.h"
#include "tlab/platform/std_mutex.h"
#include "tlab/timer_source.h"

namespace tlab::testing {

class ManualTimerSource {
 public:
  using TimerId = std::uint64_t;
  using Callback = std::function<void()>;

  explicit ManualTimerSource(Instant start = Instant::from_ns(0)) : clock_(start) {}
  ManualTimerSource(const ManualTimerSource&) = delete;
  ManualTimerSource& operator=(const ManualTimerSource&) = delete;

  Instant now() const { return clock_.now(); }
  ManualClock& clock() { return clock_; }
  void advance(Duration d) { clock_.advance(d); }

  void set_fire_inline_when_due(bool on) {
    StdLock lk(mu_);
    fire_inline_ = on;
  }

  // ManualTimerSource::schedule_at: see the file comment.
  TimerId schedule_at(Instant deadline, Callback cb) {
    Callback run_now;
    TimerId id;
    {
      StdLock lk(mu_);
      if (shutdown_) throw std::logic_error("ManualTimerSource::schedule_at after shutdown");
      id = next_id_++;
      ++scheduled_;
      if (fire_inline_ && deadline <= clock_.now()) {
        ++fired_;
        run_now = std::move(cb);
      } else {
        entries_.emplace(Key{deadline, id}, std::move(cb));
        index_.emplace(id, deadline);
        cv_.notify_all();
      }
    }
    if (run_now) run_now();
    return id;
  }

  // ManualTimerSource::cancel: true iff the callback was pending and now never runs.
  bool cancel(TimerId id) {
    StdLock lk(mu_);
    const auto it = index_.find(id);
    if (it == index_.end()) return false;
    entries_.erase(Key{it->second, id});
    index_.erase(it);
    ++cancelled_;
    return true;
  }

  // ManualTimerSource::fire_due: runs due callbacks in deadline order; returns the
  // number run. Callbacks scheduled by a callback run too if they are already due.
  std::size_t fire_due() {
    std::size_t n = 0;
    while (Callback cb = take_first_due()) {
      cb();
      ++n;
    }
    return n;
  }

  // ManualTimerSource::fire: runs `id` now regardless of its deadline; false if it
  // is not pending.
  bool fire(TimerId id) {
    Callback cb;
    {
      StdLock lk(mu_);
      const auto it = index_.find(id);
      if (it == index_.end()) return false;
      const auto e = entries_.find(Key{it->second, id});
      cb = std::move(e->second);
      entries_.erase(e);
      index_.erase(it);
      ++fired_;
    }
    cb();
    return true;
  }

  // ManualTimerSource::shutdown: later schedule_at() calls throw; pending callbacks
  // stay and can still be fired or cancelled.
  void shutdown() {
    StdLock lk(mu_);
    shutdown_ = true;
  }

  // ManualTimerSource::await_pending: blocks until at least `n` callbacks are
  // pending, or until a generous real-time bound (30 s) passes; returns whether the
  // count was reached. A test uses it to know that another thread has armed.
  bool await_pending(std::size_t n) {
    StdLock lk(mu_);
    return cv_.wait_for(lk.native(), std::chrono::seconds(30), [&] {
      assume_held(mu_);  // wait_for() runs the predicate with mu_ held
      return index_.size() >= n;
    });
  }

  std::size_t pending() const {
    StdLock lk(mu_);
    return index_.size();
  }
  std::optional<Instant> deadline_of(TimerId id) const {
    StdLock lk(mu_);
    const auto it = index_.find(id);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<Instant> next_deadline() const {
    StdLock lk(mu_);
    if (entries_.empty()) return std::nullopt;
    return entries_.begin()->first.first;
  }
  std::uint64_t scheduled() const {
    StdLock lk(mu_);
    return scheduled_;
  }
  std::uint64_t cancelled() const {
    StdLock lk(mu_);
    return cancelled_;
  }
  std::uint64_t fired() const {
    StdLock lk(mu_);
    return fired_;
  }

 private:
  using Key = std::pair<Instant, TimerId>;  // deadline, then FIFO by id

  Callback take_first_due() {
    StdLock lk(mu_);
    if (entries_.empty() || entries_.begin()->first.first > clock_.now()) return nullptr;
    auto node = entries_.extract(entries_.begin());
    index_.erase(node.key().second);
    ++fired_;
    return std::move(node.mapped());
  }

  ManualClock clock_;
  mutable StdMutex mu_;
  std::condition_variable cv_;  // signalled on every schedule (await_pending)
  std::map<Key, Callback> entries_ TLAB_GUARDED_BY(mu_);
  std::unordered_map<TimerId, Instant> index_ TLAB_GUARDED_BY(mu_);
  TimerId next_id_ TLAB_GUARDED_BY(mu_) = 1;
  bool shutdown_ TLAB_GUARDED_BY(mu_) = false;
  bool fire_inline_ TLAB_GUARDED_BY(mu_) = false;
  std::uint64_t scheduled_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t cancelled_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t fired_ TLAB_GUARDED_BY(mu_) = 0;
};

static_assert(TimerSource<ManualTimerSource>);

// ManualTimerDriver: a "timer thread" for multi-threaded tests on virtual time.
// While alive it loops: advance the clock by `step`, fire what is due, yield.
// Virtual time therefore runs as fast as the loop spins; tests bound their work by
// operation counts, never by how much virtual time passes. The destructor stops
// and joins the thread.
class ManualTimerDriver {
 public:
  ManualTimerDriver(ManualTimerSource& src, Duration step)
      : thread_([this, &src, step] {
          while (!stop_.load(std::memory_order::acquire)) {  // pairs with ~ManualTimerDriver
            src.advance(step);
            src.fire_due();
            std::this_thread::yield();
          }
        }) {}
  ManualTimerDriver(const ManualTimerDriver&) = delete;
  ManualTimerDriver& operator=(const ManualTimerDriver&) = delete;
  ~ManualTimerDriver() {
    stop_.store(true, std::memory_order::release);  // pairs with the loop's load
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tlab::testing
