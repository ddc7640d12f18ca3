// tlab/tool/subjects/builtin/heap_timer.h: HeapTimer, the java.util.Timer design
// as a peer (the subject java_timer_heap, peer_heap.cc, is its one user).
//
// What seed 001 describes and most hand-written timers end up as: one
// std::priority_queue ordered by deadline, one mutex, one condition variable and
// one timer thread that waits until the head is due and is notified when an
// earlier task arrives. Cancel is Java's: the task is marked cancelled under no
// lock and its queue entry stays until it comes due (java.util.TimerTask.cancel;
// purge() is the user's job), so a cancel-heavy workload grows the heap with
// tombstones, exactly the cost a Java user pays.
//
//   schedule   O(log n) + one lock; notifies when the new task is the head
//   cancel     one atomic store, no lock (lazy)
//   per run    lock, pop (O(log n)) every due entry, unlock, run
//
// Modes: with a thread (start()), or driven: run_due(now) from the caller (the
// same code path minus the wait; peer_heap.cc's benchmark hook, bench_hook.h).
//
// Ground rules: heap_ and stop_ are guarded by mu_; Task::cancelled is atomic;
// the callback runs on the thread that popped it with mu_ released.
// Memory ordering: seq_cst everywhere (a peer, written for clarity).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include <time.h>

namespace tlab::tool::builtin {

class HeapTimer {
 public:
  struct Task {
    std::function<void()> fn;
    std::atomic<bool> cancelled{false};
  };
  using TaskPtr = std::shared_ptr<Task>;

  HeapTimer() = default;
  ~HeapTimer() { stop(); }
  HeapTimer(const HeapTimer&) = delete;
  HeapTimer& operator=(const HeapTimer&) = delete;

  // HeapTimer::start: starts the timer thread (TimerThread.mainLoop).
  void start() {
    thread_ = std::thread([this] { loop(); });
  }
  // HeapTimer::stop: stops and joins the thread; pending tasks never run.
  void stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  // HeapTimer::schedule: runs `fn` at `deadline_ns` (CLOCK_MONOTONIC) unless cancelled.
  TaskPtr schedule(std::int64_t deadline_ns, std::function<void()> fn) {
    auto t = std::make_shared<Task>();
    t->fn = std::move(fn);
    bool head;
    {
      std::lock_guard<std::mutex> lk(mu_);
      heap_.push(Entry{deadline_ns, seq_++, t});
      head = heap_.top().task == t;
      if (head) cv_.notify_one();  // under mu_: no lost notify (seed 001)
    }
    return t;
  }
  // HeapTimer::cancel: TimerTask.cancel(); true if it was not cancelled before.
  static bool cancel(const TaskPtr& t) { return !t->cancelled.exchange(true); }

  // HeapTimer::run_due: driver mode; runs every task due at `now_ns`. Returns how many ran.
  std::size_t run_due(std::int64_t now_ns) {
    std::size_t n = 0;
    std::unique_lock<std::mutex> lk(mu_);
    while (!heap_.empty() && heap_.top().deadline <= now_ns) {
      TaskPtr t = heap_.top().task;
      heap_.pop();
      if (t->cancelled.exchange(true)) continue;  // tombstone
      lk.unlock();
      t->fn();
      ++n;
      lk.lock();
    }
    return n;
  }

  std::size_t queued() const {
    std::lock_guard<std::mutex> lk(mu_);
    return heap_.size();
  }

 private:
  struct Entry {
    std::int64_t deadline;
    std::uint64_t seq;  // FIFO among equal deadlines
    TaskPtr task;
    bool operator<(const Entry& o) const {  // priority_queue is a max-heap
      return deadline != o.deadline ? deadline > o.deadline : seq > o.seq;
    }
  };

  static std::int64_t mono_now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  }

  // One hour: far enough that a far-off head costs one wake-up an hour.
  static constexpr std::int64_t kMaxWaitNs = 3'600'000'000'000;

  void loop() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      if (heap_.empty()) {
        cv_.wait(lk);
        continue;
      }
      const std::int64_t now = mono_now_ns();
      const std::int64_t head = heap_.top().deadline;
      if (head > now) {
        // At most kMaxWaitNs per wait: a far head (a "never" deadline of INT64_MAX)
        // would overflow the library's now + timeout and turn the wait into a spin.
        cv_.wait_for(lk, std::chrono::nanoseconds(std::min(head - now, kMaxWaitNs)));
        continue;
      }
      TaskPtr t = heap_.top().task;
      heap_.pop();
      if (t->cancelled.exchange(true)) continue;
      lk.unlock();
      t->fn();
      lk.lock();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Entry> heap_;  // guarded by mu_
  std::uint64_t seq_ = 0;            // guarded by mu_
  bool stop_ = false;                // guarded by mu_
  std::thread thread_;
};

}  // namespace tlab::tool::builtin
