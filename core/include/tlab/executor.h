// tlab/executor.h: Executor, seed 003 as a whole: N workers with worker-local timer
// wheels, a metronome thread, cross-thread cancel by generation bump, and worker
// stop/restart through a merge queue that loses no timer.
//
// Tuned for the seed's goals: the steady-state timer path of a worker is lock-free
// and local (a task or callback on worker w schedules straight into w's wheel), no
// thread but the owner ever mutates a wheel, cancel from any thread is one CAS on
// the handle, and timers survive worker churn.
//
//   schedule (on a worker)   O(1): one CAS on the handle + a wheel push_back
//   schedule (elsewhere)     O(1): one CAS + one worker-inbox lock
//   cancel (any thread)      O(1): one CAS + one striped increment; no wheel touched
//   fire                     one CAS per due entry, then the callback on the worker
//   worker stop              O(entries in its wheel) + one merge-queue lock
//   metronome tick           O(workers) uncontended locks + O(orphans) redistributed
//
// Pieces (one concept per header):
//   executor/timer_handle.h    TimerCell: the handle's (generation, state) word and
//                              its state table; Executor::Timer is a shared_ptr to it
//   executor/worker.h          one worker: its wheel, inbox, tasks; adopt, poll,
//                              scrub, retire_wheel; the thread's CurrentWorker mark
//   executor/stats.h           the counters and their conservation law
//   queue/per_worker_wheel.h   the worker-local wheel, payload (handle, generation)
//   executor/striped_counter.h cancellers' garbage counter, one per worker
//   executor/merge_queue.h     orphaned entries, drained by the metronome
//
// Time: the metronome publishes each worker's `timer_now`, an atomic tick count
// since construction (tick = Config::resolution, deadlines rounded UP to a tick, as
// in every wheel). A worker fires what is due at ITS timer_now, so a timer never
// fires early and fires within one tick of the metronome passing its due tick.
// A worker whose wheel is not empty is woken on every tick (the seed's needs_poll);
// its cost per tick is one bucket.
//
// Submission path (schedule from a thread that is not running on one of this
// executor's workers): the entry goes to a running worker's inbox (round-robin; a
// mutex + vector per worker, as the seed's remote path is not the hot path), and
// that worker adopts it into its wheel at its next run. With no worker running it
// goes to the merge queue and waits for one to start. The handle is armed before
// the entry is queued, so cancel works from the moment schedule() returns.
//
// Worker stop (the seed's Shutdown): the worker stops accepting tasks and inbox
// entries, runs the tasks already posted to it, swaps its wheel out
// (ExecutorWorker::retire_wheel), marks each live entry Migrating and pushes the
// batch to the merge queue. The order is the point: a task posted before the stop
// (the stop window) may schedule timers, on the local path, into this worker's
// wheel, so the wheel is retired only after the last such task has run; retired
// first, those timers would land in the fresh wheel of a stopped worker, polled by
// nobody until it restarts and lost if it never does, even by shutdown() (the
// executor_stop_retires_wheel_early mutant; go#44868, go#45716). Each
// metronome tick drains the merge queue and hands every entry that is still
// Migrating with a matching generation to a running worker's inbox with its
// ORIGINAL deadline (an already-due one fires at that worker's next run); stale
// entries are discarded and counted (stale_skipped). Entries stay on the merge queue
// while no worker runs.
//
// Executor shutdown: stops the metronome, stops every worker (as above), then
// abandons whatever is still pending: each such timer goes to Cancelled (a later
// cancel() returns false), none fires, and shutdown() returns how many there were
// (also Stats::abandoned). Callbacks that are running finish first (threads are
// joined).
//
// Callbacks run on the worker whose try_fire() won. An exception escaping one is
// caught and counted (Stats::callback_errors); the worker carries on.
//
// Modes (Config): worker_threads=false and metronome_thread=false give a fully
// manual executor: no threads, the test calls tick_once() and run_worker_once(w),
// and stop_worker(w) runs the stop inline. Worker threads with a manual metronome
// (ManualClock) give real concurrency on virtual time.
//
// Fault points: executor.before_merge_push (a stopping worker holds its swapped-out
// entries), executor.cancel_between, executor.before_fire (timer_handle.h).
// Mutants: worker_drop_on_shutdown (a stopping worker drops its entries: lost
// timers), executor_stop_retires_wheel_early (a stop retires the wheel before it
// runs the stop window's tasks), executor_cancel_state_only and
// executor_fired_after_run (timer_handle.h).
//
// Ground rules: a worker's wheel, inbox, tasks and flags follow executor/worker.h's
// rules (the wheel is its worker's alone). start_worker/stop_worker/shutdown are
// serialised by control_mu_ and must not be called from a worker of this executor.
// tick_once() is the metronome's: serialised by tick_mu_. schedule() after
// shutdown() throws std::logic_error; schedule() racing shutdown() is not allowed.
// Memory ordering: timer_now is a release/acquire pair (executor/worker.h); all
// handle transitions are acq_rel CASes (timer_handle.h); statistics are relaxed
// counters, exact once the executor is quiescent (executor/stats.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/executor/merge_queue.h"
#include "tlab/executor/stats.h"
#include "tlab/executor/timer_handle.h"
#include "tlab/executor/worker.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/tick_grid.h"

namespace tlab {

template <class P = StdPlatform>
class Executor {
 public:
  using Cell = TimerCell<P>;
  using Timer = std::shared_ptr<Cell>;
  using Task = std::function<void()>;

  struct Config {
    std::size_t workers = 2;
    // Metronome tick = wheel tick. 1 ms: the Linux jiffy at HZ=1000 and tokio's
    // slot; a 512-slot wheel then spans 512 ms per revolution.
    Duration resolution = Duration::milliseconds(1);
    std::uint32_t wheel_slots = 512;
    bool worker_threads = true;    // false: the caller drives run_worker_once()
    bool metronome_thread = true;  // false: the caller drives tick_once()
    // Remote garbage (cancels credited to a worker, not yet removed) that makes the
    // worker scrub; 64 entries of 40 bytes is a few cache lines' worth of waste, a
    // point below which a scrub costs more than it saves.
    std::uint64_t scrub_garbage_threshold = 64;
    // Buckets a worker scrubs per run while over the threshold: 8 of 512 keeps one
    // pass short (it runs after the callbacks) and visits the whole wheel in 64 runs.
    std::size_t scrub_budget = 8;
    // The threshold also grows with the wheel: a worker scrubs only once remote
    // garbage is at least 1/scrub_live_ratio of the entries in its wheel (0: no
    // such floor). A scrub reads every entry of the buckets it visits, live or not,
    // so on a big wheel with little garbage it reads far more than it removes: at
    // 1M pending, 8 buckets hold 16K entries and a run removed about 32 of them, so
    // one thread's insert+cancel cost 816 ns (`tlab compare --subject executor`).
    // With 8, garbage stays under about 1/8 of the live entries (plus the fixed
    // threshold) and a scrub reads about 8 entries per entry it removes.
    std::uint32_t scrub_live_ratio = 8;
  };

  // The counters' snapshot (executor/stats.h); exact when the executor is quiescent.
  // Conservation: scheduled == fired + cancelled + abandoned + pending.
  using Stats = ExecutorStats;

  Executor(Config cfg, const typename P::Clock& clock)
      : cfg_(cfg), clock_(clock), grid_(clock.now(), cfg.resolution) {
    TLAB_CHECK(cfg_.workers > 0, "Executor: needs at least one worker");
    TLAB_CHECK(!(cfg_.metronome_thread && P::Clock::kVirtual),
               "Executor: a virtual clock needs metronome_thread=false (drive tick_once())");
    qcfg_.start = grid_.start();
    qcfg_.tick = cfg_.resolution;
    qcfg_.wheel_slots = cfg_.wheel_slots;
    workers_.reserve(cfg_.workers);
    for (std::size_t i = 0; i < cfg_.workers; ++i)
      workers_.push_back(std::make_unique<Worker>(qcfg_));
    for (std::size_t i = 0; i < cfg_.workers; ++i) start_worker(i);
    if (cfg_.metronome_thread) metronome_ = spawn_thread<P>([this] { metronome_loop(); });
  }

  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor() { shutdown(); }

  // tlab::Executor::make_timer: a new Idle handle that runs `callback` when it fires.
  static Timer make_timer(Task callback) { return std::make_shared<Cell>(std::move(callback)); }

  // tlab::Executor::schedule: arms `timer` to fire `delay` from now; re-arming a
  // pending timer replaces its previous arming (which then never fires).
  // Throws std::invalid_argument on a negative delay, std::logic_error after shutdown.
  void schedule(const Timer& timer, Duration delay) {
    schedule_at(timer, deadline_after<P>(clock_.now(), checked_delay(delay, "Executor::schedule")));
  }

  // tlab::Executor::schedule_at: as schedule(), at an instant (a past one is due now).
  // Thread safety: any thread. On a worker of this executor the entry goes straight
  // into that worker's wheel; elsewhere through the submission path.
  void schedule_at(const Timer& timer, Instant deadline) {
    TLAB_CHECK(timer != nullptr, "Executor::schedule_at: null timer");
    // relaxed: shutdown() may not race schedule() (ground rules); this catches misuse.
    if (shut_down_.load(std::memory_order::relaxed)) {
      throw std::logic_error("Executor::schedule_at: executor is shut down");
    }
    const std::uint32_t old_home = timer->home();
    const typename Cell::Armed armed = timer->arm();
    if (armed.replaced) {
      bump(stats_.rescheduled);
      credit_garbage(old_home);
    } else {
      bump(stats_.scheduled);
    }
    if (Current::on_worker_of(this)) {
      // Local path: we are running on worker Current::worker(), which owns its wheel.
      Worker& w = *workers_[Current::worker()];
      timer->set_home(static_cast<std::uint32_t>(Current::worker()));
      w.wheel.insert(deadline, WheelEntry{timer, armed.generation});
      return;
    }
    submit(Transit{deadline, armed.generation, timer});
  }

  // tlab::Executor::cancel: returns true iff the call stopped a pending arming of
  // `timer`, which then never fires. Never touches a wheel.
  // Thread safety: any thread, including callbacks.
  bool cancel(const Timer& timer) {
    if (!timer->cancel()) return false;
    bump(stats_.cancelled);
    credit_garbage(timer->home());
    return true;
  }

  // tlab::Executor::post: runs `task` on worker w at its next run; a timer the task
  // schedules goes into w's wheel. Returns false if w is not running.
  bool post(std::size_t w, Task task) {
    Worker& wk = worker(w);
    {
      typename P::Lock lock(wk.mu);
      if (!wk.running) return false;
      wk.tasks.push_back(std::move(task));
      wk.wake = true;
    }
    P::notify_one(wk.cv);
    return true;
  }

  // tlab::Executor::stop_worker: stops worker w; its timers move to the merge queue.
  // No-op if w is not running. Requires: not called from a worker of this executor.
  void stop_worker(std::size_t w) {
    typename P::Lock control(control_mu_);
    Worker& wk = worker(w);
    {
      typename P::Lock lock(wk.mu);
      if (!wk.running) return;
      if (cfg_.worker_threads) wk.stop_requested = true;
    }
    if (cfg_.worker_threads) {
      P::notify_one(wk.cv);
      wk.thread.join();
    } else {
      retire(w);
    }
  }

  // tlab::Executor::start_worker: (re)starts worker w with an empty wheel. No-op if
  // it is running. Throws std::logic_error after shutdown.
  void start_worker(std::size_t w) {
    typename P::Lock control(control_mu_);
    if (shut_down_.load(std::memory_order::relaxed)) {  // relaxed: under control_mu_
      throw std::logic_error("Executor::start_worker: executor is shut down");
    }
    Worker& wk = worker(w);
    {
      typename P::Lock lock(wk.mu);
      if (wk.running) return;
      wk.running = true;
      wk.stop_requested = false;
      wk.wake = true;
    }
    if (cfg_.worker_threads) wk.thread = spawn_thread<P>([this, w] { worker_loop(w); });
  }

  bool worker_running(std::size_t w) const {
    Worker& wk = worker(w);
    typename P::Lock lock(wk.mu);
    return wk.running;
  }

  // tlab::Executor::tick_once: one metronome step: publish the current tick to every
  // worker, redistribute the merge queue, wake workers that need polling.
  // Thread safety: the metronome thread, or (metronome_thread=false) the driver.
  void tick_once() {
    typename P::Lock tick_lock(tick_mu_);
    const Instant now = clock_.now();
    if (now >= grid_.start()) tick_ = std::max(tick_, grid_.elapsed_tick(now));
    for (auto& w : workers_) {
      w->timer_now.store(tick_, std::memory_order::release);  // pairs with poll()'s load
    }
    redistribute();
    for (auto& w : workers_) {
      bool notify = false;
      {
        typename P::Lock lock(w->mu);
        if (w->running && (w->needs_poll || !w->inbox.empty())) {
          w->wake = true;
          notify = true;
        }
      }
      if (notify) P::notify_one(w->cv);
    }
  }

  // The last tick the metronome published (-1 before the first tick_once()).
  std::int64_t current_tick() const {
    typename P::Lock tick_lock(tick_mu_);
    return tick_;
  }

  // tlab::Executor::run_worker_once: one run of worker w (inbox, tasks, due timers,
  // scrub). Returns the number of callbacks fired.
  // Requires: worker_threads=false. No-op (0) if w is not running.
  std::size_t run_worker_once(std::size_t w) {
    TLAB_CHECK(!cfg_.worker_threads, "Executor::run_worker_once needs worker_threads=false");
    if (!worker_running(w)) return 0;
    return run_once(w);
  }

  // tlab::Executor::shutdown: stops the metronome and every worker, abandons the
  // timers still pending and returns how many. Idempotent (later calls return the
  // same count). Requires: not called from a worker; no concurrent schedule().
  std::size_t shutdown() {
    {
      typename P::Lock control(control_mu_);
      if (shut_down_.load(std::memory_order::relaxed)) return abandoned_;  // relaxed: under mu
    }
    if (metronome_.joinable()) {
      {
        typename P::Lock lock(metro_mu_);
        metro_stop_ = true;
      }
      P::notify_all(metro_cv_);
      metronome_.join();
    }
    for (std::size_t w = 0; w < workers_.size(); ++w) stop_worker(w);
    typename P::Lock control(control_mu_);
    shut_down_.store(true, std::memory_order::relaxed);  // relaxed: see schedule_at()
    for (Transit& t : merge_.take_all()) {
      if (t.timer->abandon(t.generation)) {
        ++abandoned_;
        bump(stats_.abandoned);
      } else {
        bump(stats_.stale_skipped);
      }
    }
    return abandoned_;
  }

  Stats stats() const { return stats_.snapshot(); }

  // tlab::Executor::check_invariants: every wheel's own invariants; stopped workers
  // hold nothing; counts conserve; and every pending arming has exactly one live
  // entry (in a wheel, an inbox or the merge queue), so none is lost or doubled.
  // Requires: quiescent (manual mode between calls, or no thread running).
  void check_invariants() const {
    std::uint64_t live_entries = 0;
    for (const auto& w : workers_) {
      w->wheel.check_invariants();
      w->wheel.for_each([&](const WheelEntry& e, Instant) {
        if (e.timer->is_live(e.generation)) ++live_entries;
      });
      typename P::Lock lock(w->mu);
      if (!w->running) {
        TLAB_CHECK(w->wheel.empty() && w->inbox.empty() && w->tasks.empty(),
                   "Executor: stopped worker holds wheel=", w->wheel.size(),
                   " inbox=", w->inbox.size(), " tasks=", w->tasks.size());
      }
      for (const Transit& t : w->inbox) {
        if (t.timer->is_live(t.generation)) ++live_entries;
      }
    }
    merge_.for_each([&](const Transit& t) {
      if (t.timer->is_live(t.generation)) ++live_entries;
    });
    const Stats s = stats();
    TLAB_CHECK(s.fired + s.cancelled + s.abandoned <= s.scheduled,
               "Executor: scheduled=", s.scheduled, " < fired=", s.fired,
               " + cancelled=", s.cancelled, " + abandoned=", s.abandoned);
    TLAB_CHECK(live_entries == s.pending, "Executor: pending armings=", s.pending,
               " but live entries=", live_entries);
  }

 private:
  using Worker = ExecutorWorker<P>;
  using WheelEntry = typename Worker::WheelEntry;
  using Transit = typename Worker::Transit;
  using Current = CurrentWorker<Executor>;
  static void bump(typename ExecutorCounters<P>::Counter& c) { ExecutorCounters<P>::bump(c); }

  Worker& worker(std::size_t w) const {
    TLAB_CHECK(w < workers_.size(), "Executor: no worker ", w, " (workers=", workers_.size(), ")");
    return *workers_[w];
  }

  void credit_garbage(std::uint32_t home) {
    if (home < workers_.size()) workers_[home]->garbage.add(1);
  }

  // Hands a pending entry to a running worker's inbox, or to the merge queue if
  // none is running.
  void submit(Transit t) {
    const std::size_t n = workers_.size();
    // relaxed: round-robin hint only.
    const std::size_t first = next_target_.fetch_add(1, std::memory_order::relaxed) % n;
    for (std::size_t k = 0; k < n; ++k) {
      Worker& w = *workers_[(first + k) % n];
      {
        typename P::Lock lock(w.mu);
        if (!w.running) continue;
        w.inbox.push_back(std::move(t));
        w.wake = true;
      }
      P::notify_one(w.cv);
      return;
    }
    t.timer->set_home(Cell::kNoHome);
    if (t.timer->migrate_out(t.generation)) {
      merge_.push(std::move(t));
    } else {
      bump(stats_.stale_skipped);
    }
  }

  // Metronome: moves merge-queue entries that are still Migrating (generation
  // matches) to running workers' inboxes with their original deadlines.
  void redistribute() TLAB_REQUIRES(tick_mu_) {
    std::vector<Transit> orphans = merge_.take_all();
    if (orphans.empty()) return;
    std::vector<Transit> keep;
    const std::size_t n = workers_.size();
    for (Transit& t : orphans) {
      if (!t.timer->is_live(t.generation)) {
        bump(stats_.stale_skipped);
        continue;
      }
      bool placed = false;
      for (std::size_t k = 0; k < n && !placed; ++k) {
        Worker& w = *workers_[(rr_ + k) % n];
        typename P::Lock lock(w.mu);
        if (!w.running) continue;
        placed = true;
        rr_ = (rr_ + k + 1) % n;
        if (t.timer->adopt(t.generation)) {
          w.inbox.push_back(std::move(t));
          w.needs_poll = true;  // woken below, in tick_once()
          bump(stats_.migrated);
        } else {
          bump(stats_.stale_skipped);
        }
      }
      if (!placed) keep.push_back(std::move(t));
    }
    merge_.push_all(std::move(keep));
  }

  void metronome_loop() {
    typename P::Lock lock(metro_mu_);
    Instant next = clock_.now() + cfg_.resolution;
    while (!metro_stop_) {
      P::wait_until(metro_cv_, lock, clock_, next);
      if (metro_stop_) break;
      const Instant now = clock_.now();
      if (now < next) continue;  // spurious wake-up
      lock.unlock();
      tick_once();
      lock.lock();
      // Fell behind (a slow tick, a descheduled thread): skip the missed ticks
      // rather than burst; tick_once() publishes the clock's tick, not a count.
      next = std::max(next + cfg_.resolution, now);
    }
  }

  void worker_loop(std::size_t idx) {
    Worker& w = *workers_[idx];
    for (;;) {
      {
        typename P::Lock lock(w.mu);
        while (!w.wake && !w.stop_requested) P::wait(w.cv, lock);
        if (w.stop_requested) break;
      }
      run_once(idx);
    }
    retire(idx);
  }

  // One worker run: adopt the inbox, run posted tasks, fire due timers, scrub.
  std::size_t run_once(std::size_t idx) {
    Worker& w = *workers_[idx];
    std::vector<Transit> inbox;
    std::vector<Task> tasks;
    {
      typename P::Lock lock(w.mu);
      inbox.swap(w.inbox);
      tasks.swap(w.tasks);
      w.wake = false;
    }
    Current current(this, idx);
    for (Transit& t : inbox) w.adopt(idx, std::move(t), stats_);
    for (Task& task : tasks) stats_.run_guarded(task);
    const std::size_t fired = w.poll(grid_, stats_);
    w.scrub(cfg_.scrub_garbage_threshold, cfg_.scrub_live_ratio, cfg_.scrub_budget, stats_);
    {
      typename P::Lock lock(w.mu);
      w.needs_poll = !w.wheel.empty();
    }
    return fired;
  }

  // Stops worker idx on the calling thread (its own thread, or the manual driver):
  // closes it to new work, runs the stop window's tasks, retires the wheel and
  // hands every live entry to the merge queue.
  void retire(std::size_t idx) {
    Worker& w = *workers_[idx];
    std::vector<Transit> out;
    std::vector<Task> window;  // tasks posted before running went false
    {
      typename P::Lock lock(w.mu);
      w.running = false;
      w.stop_requested = false;
      w.wake = false;
      w.needs_poll = false;
      out.swap(w.inbox);
      window.swap(w.tasks);
    }
    const auto run_window = [&] {
      Current current(this, idx);  // their schedules take the local path into w.wheel
      for (Task& task : window) stats_.run_guarded(task);
    };
    const bool early = P::mutated(Mutant::kExecutorStopRetiresWheelEarly);
    if (!early) run_window();
    w.retire_wheel(qcfg_, out);
    // bug: the window's timers go into the fresh wheel of a worker that is stopped.
    if (early) run_window();
    std::vector<Transit> live;
    live.reserve(out.size());
    for (Transit& t : out) {
      t.timer->set_home(Cell::kNoHome);
      if (t.timer->migrate_out(t.generation)) {
        live.push_back(std::move(t));
      } else {
        bump(stats_.stale_skipped);
      }
    }
    P::fault(FaultPoint::kExecutorBeforeMergePush);
    if (P::mutated(Mutant::kWorkerDropOnShutdown)) {
      live.clear();  // bug: the orphaned timers are lost
    } else {
      merge_.push_all(std::move(live));
    }
  }

  const Config cfg_;
  const typename P::Clock& clock_;
  const BasicTickGrid<P> grid_;
  QueueConfig qcfg_;
  std::vector<std::unique_ptr<Worker>> workers_;  // fixed after construction
  MergeQueue<Transit, P> merge_;
  ExecutorCounters<P> stats_;
  typename P::template Atomic<std::size_t> next_target_{0};
  typename P::template Atomic<bool> shut_down_{false};

  mutable typename P::Mutex control_mu_;  // serialises start/stop/shutdown
  std::size_t abandoned_ TLAB_GUARDED_BY(control_mu_) = 0;

  mutable typename P::Mutex tick_mu_;  // serialises tick_once()
  std::int64_t tick_ TLAB_GUARDED_BY(tick_mu_) = -1;
  std::size_t rr_ TLAB_GUARDED_BY(tick_mu_) = 0;

  typename P::Mutex metro_mu_;
  typename P::CondVar metro_cv_;
  bool metro_stop_ TLAB_GUARDED_BY(metro_mu_) = false;
  ThreadOf<P> metronome_;  // constructor / shutdown() only
};

}  // namespace tlab
