// tlab/executor/worker.h: ExecutorWorker, one worker of the seed 003 Executor: its
// local timer wheel, its inbox and posted tasks, and the operations only the worker
// performs on its own wheel (adopt, poll, scrub, retire). CurrentWorker marks the
// thread that is running a worker, which is what sends schedule() down the local path.
//
// Tuned for the steady state of a worker: the wheel is touched by no other thread,
// so a local schedule, a poll and a scrub take no lock; the mutex guards only the
// hand-off state (inbox, tasks, flags) that other threads write.
//
//   adopt         O(1): one state check + a wheel push_back (an inbox entry)
//   poll          O(due entries): one CAS per entry, then its callback
//   scrub         O(scrub_budget buckets), only while reported garbage is high
//   retire_wheel  O(entries in the wheel): swaps in an empty wheel (worker stop)
//
// Entries: a wheel entry is the seed's payload (handle, generation) and the wheel
// keeps its deadline; a Transit carries the deadline with it (inbox, merge queue).
//
// Ground rules: `wheel`, `garbage_consumed` and `due` belong to the worker: its
// thread, or in manual mode the caller of run_worker_once()/stop_worker() for it.
// `running`, `stop_requested`, `wake`, `needs_poll`, `inbox` and `tasks` are guarded
// by `mu`; `thread` by the executor's control lock. `timer_now` is written by the
// metronome only. An entry found stale (its handle cancelled or re-armed) is
// discarded and counted, never fired.
// Memory ordering: timer_now is stored with release by the metronome and loaded
// with acquire in poll(), so a worker that sees tick t also sees what the metronome
// did before publishing it; handle transitions are acq_rel CASes (timer_handle.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "tlab/base/annotations.h"
#include "tlab/clock.h"
#include "tlab/executor/stats.h"
#include "tlab/executor/striped_counter.h"
#include "tlab/executor/timer_handle.h"
#include "tlab/queue/per_worker_wheel.h"
#include "tlab/queue/tick_grid.h"

namespace tlab {

template <class P>
struct alignas(kCacheLine) ExecutorWorker {
  using Timer = std::shared_ptr<TimerCell<P>>;
  using Task = std::function<void()>;
  // A wheel payload: the seed's (generation, handle_ptr); the wheel keeps the deadline.
  struct WheelEntry {
    Timer timer;
    std::uint64_t generation = 0;
  };
  using Wheel = PerWorkerWheelQueue<WheelEntry, P>;
  // An entry between wheels (worker inbox, merge queue), with its original deadline.
  struct Transit {
    Instant deadline;
    std::uint64_t generation = 0;
    Timer timer;
  };

  explicit ExecutorWorker(const QueueConfig& qc) : wheel(qc) {}

  // tlab::ExecutorWorker::adopt: moves an inbox entry into the wheel, or discards
  // it if it went stale in transit (cancelled or re-armed).
  // Thread safety: the worker only.
  void adopt(std::size_t idx, Transit&& t, ExecutorCounters<P>& stats) {
    if (!t.timer->is_live(t.generation)) {
      stats.bump(stats.stale_skipped);
      return;
    }
    t.timer->set_home(static_cast<std::uint32_t>(idx));
    wheel.insert(t.deadline, WheelEntry{std::move(t.timer), t.generation});
  }

  // tlab::ExecutorWorker::poll: fires every entry due at the metronome's last
  // published tick (none before the first tick); returns the callbacks run.
  // Thread safety: the worker only.
  std::size_t poll(const BasicTickGrid<P>& grid, ExecutorCounters<P>& stats) {
    const std::int64_t now_tick = timer_now.load(std::memory_order::acquire);  // pairs with
                                                                               // tick_once()
    if (now_tick < 0) return 0;
    due.clear();
    wheel.expire(grid.instant_of(now_tick),
                 [&](WheelEntry&& e, Instant) { due.push_back(std::move(e)); });
    std::size_t fired = 0;
    for (WheelEntry& e : due) {
      if (e.timer->try_fire(e.generation)) {
        ++fired;
        stats.bump(stats.fired);
        stats.run_guarded([&] { e.timer->run(e.generation); });
      } else {
        ++garbage_consumed;
        stats.bump(stats.stale_skipped);
      }
    }
    due.clear();
    return fired;
  }

  // tlab::ExecutorWorker::scrub: the seed's snapshot of the striped counters:
  // removes stale entries (at most `budget` buckets) only while cancellers have
  // reported at least max(threshold, wheel entries / live_ratio) more garbage than
  // this worker has removed (live_ratio 0: threshold alone; Executor::Config says
  // why the floor grows with the wheel). Thread safety: the worker only.
  void scrub(std::uint64_t threshold, std::uint32_t live_ratio, std::size_t budget,
             ExecutorCounters<P>& stats) {
    const std::uint64_t reported = garbage.sum();
    // Credits can land on the wrong worker when a cancel races a migration; never
    // let this worker's estimate go negative (and hide future garbage).
    if (garbage_consumed > reported) garbage_consumed = reported;
    const std::uint64_t floor =
        live_ratio == 0 ? threshold
                        : std::max<std::uint64_t>(threshold, wheel.size() / live_ratio);
    if (reported - garbage_consumed < floor) return;
    const std::size_t removed =
        wheel.scrub_if(budget, [](const WheelEntry& e) { return !e.timer->is_live(e.generation); });
    garbage_consumed += removed;
    stats.bump(stats.stale_skipped, removed);
  }

  // tlab::ExecutorWorker::retire_wheel: swaps an empty wheel in and returns every
  // entry of the old one (live or stale) with its deadline, appended to `out`. The
  // next start of this worker finds an empty wheel; nothing of ours is left to scrub.
  // Requires: the worker no longer runs (its stop). Thread safety: the worker only.
  void retire_wheel(const QueueConfig& qc, std::vector<Transit>& out) {
    Wheel old = std::exchange(wheel, Wheel(qc));
    old.take_all([&](WheelEntry&& e, Instant d) {
      out.push_back(Transit{d, e.generation, std::move(e.timer)});
    });
    garbage_consumed = garbage.sum();
  }

  // metronome writes, worker reads; -1 until the first tick.
  typename P::template Atomic<std::int64_t> timer_now{-1};
  StripedCounter<P> garbage;  // cancellers add one per stale entry they leave here
  mutable typename P::Mutex mu;
  typename P::CondVar cv;
  bool running TLAB_GUARDED_BY(mu) = false;         // accepts inbox entries and tasks
  bool stop_requested TLAB_GUARDED_BY(mu) = false;  // threaded mode: exit the loop
  bool wake TLAB_GUARDED_BY(mu) = false;            // run once more
  bool needs_poll TLAB_GUARDED_BY(mu) = false;      // the wheel holds entries
  std::vector<Transit> inbox TLAB_GUARDED_BY(mu);
  std::vector<Task> tasks TLAB_GUARDED_BY(mu);
  Wheel wheel;                         // worker only (see ground rules)
  std::uint64_t garbage_consumed = 0;  // worker only: garbage already removed
  std::vector<WheelEntry> due;         // worker only: scratch for poll()
  ThreadOf<P> thread;                  // the executor's control-lock holder only
};

// CurrentWorker: marks the calling thread as running worker w of `owner` for its
// scope (restoring the previous mark after), so that owner's schedule() takes the
// local path into w's wheel. Thread-local, so it costs no synchronisation.
template <class Owner>
class CurrentWorker {
 public:
  CurrentWorker(const Owner* owner, std::size_t w) : saved_owner_(tls_owner_), saved_w_(tls_w_) {
    tls_owner_ = owner;
    tls_w_ = w;
  }
  ~CurrentWorker() {
    tls_owner_ = saved_owner_;
    tls_w_ = saved_w_;
  }
  CurrentWorker(const CurrentWorker&) = delete;
  CurrentWorker& operator=(const CurrentWorker&) = delete;

  // Whether the calling thread is running a worker of `owner`, and which.
  static bool on_worker_of(const Owner* owner) noexcept { return tls_owner_ == owner; }
  static std::size_t worker() noexcept { return tls_w_; }

 private:
  static inline thread_local const Owner* tls_owner_ = nullptr;
  static inline thread_local std::size_t tls_w_ = 0;

  const Owner* saved_owner_;
  std::size_t saved_w_;
};

}  // namespace tlab
