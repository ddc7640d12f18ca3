// tlab/timer_service.h: TimerService, java.util.Timer semantics on any timer queue.
//
// One timer thread runs TimerTasks (timer_task.h) when they come due: one-shot
// (schedule, schedule_at), fixed-delay (schedule_fixed_delay) and fixed-rate with
// catch-up (schedule_at_fixed_rate). It is also the production TimerSource
// (timer_source.h): schedule_at(deadline, callback) -> TimerId, cancel(id), now().
// The queue strategy is a template argument, so one service runs on a heap, a
// list or a wheel (queue/strategy.h), and the same code runs on StdPlatform, under
// StressPlatform's fault points and mutants, and driven by Relacy models through
// run_due() or run_loop() (the thread's loop, on a model thread) instead of the
// thread. It is tuned for being obviously right, not for throughput: one mutex
// guards everything, exactly as Java's TaskQueue monitor.
//
//   schedule*()        O(queue insert) + one lock; notifies only if the new head is
//                      earlier than the end of the timer thread's current wait
//   service.cancel()   O(queue cancel) + one lock: the entry is removed at once
//   task->cancel()     one CAS, no lock; leaves a tombstone entry for purge()
//   purge()            O(queued entries) + O(queue cancel) per tombstone
//   per run            lock, expire(now), pop, unlock, callback, lock
//   shutdown*()        O(n log n) over pending entries, then a join
//   reschedule()       O(queue cancel + queue insert) + one lock; notifies as schedule*()
//   schedule_periodic  as schedule*(); the missed-tick policy is O(1) per run
//                      (missed_tick.h: Burst, Delay, Skip)
//   max_pending        one comparison per schedule*(); RejectedError past the cap
//
// Supplying the queue: TimerService<Q, P> takes a CONCRETE queue type whose payload
// is TimerTaskPtr<P>, e.g. TimerService<BinaryHeapQueue<TimerTaskPtr<P>, P>, P>, so
// strategy.h's with_queue_type<TimerTaskPtr<P>, P>(s, f) and QueueTypes<...> plug in
// directly. TimerServiceOn<BinaryHeapQueue, P> spells the same type shorter. The
// queue's QueueConfig comes from TimerServiceOptions; its `start` is always replaced
// by the clock's now() at construction (the firing contract counts ticks from it).
//
// Source: java.util.Timer/TimerThread/TaskQueue (OpenJDK) as dissected by seed 001.
// Each bug of seed 001's home-made timers is a mutant here (see "Mutants"). Where it
// departs from Java:
//   - A throwing task is caught, counted (stats().exceptions) and its message kept
//     (last_error()); the service lives on. Java's thread dies and the Timer is
//     cancelled (that is mutant kTimerExceptionKillsThread).
//   - cancel(task) on the service removes the queue entry at once (Java always
//     leaves it for purge()); task->cancel() keeps Java's lock-free lazy behaviour.
//   - Two shutdowns with distinct semantics (table below); Java's cancel() is
//     shutdown_now() that discards instead of returning the pending tasks.
//   - Fixed-delay measures the period from the instant the run was taken off the
//     queue (Java: the same, `currentTime - period`), not from the run's end.
//   - Time is the Platform's clock (CLOCK_MONOTONIC or virtual), never wall time.
//
// Shutdown (both: no new tasks (logic_error), a running callback is never
// interrupted, a sleeping thread is woken at once, idempotent: later calls return
// an empty list at once, the destructor calls shutdown_now()):
//
//   |                | due at the call (deadline <= now) | not yet due      | returns         |
//   |----------------|-----------------------------------|------------------|-----------------|
//   | shutdown()     | run once more before it returns   | never run,       | the not-yet-due |
//   |                | (periodic: last run, kExecuted)   | kCancelled       | ones            |
//   | shutdown_now() | never run, kCancelled             | never run,       | all pending     |
//   |                |                                   | kCancelled       |                 |
//
// Returned lists are in deadline order.
//
// "Before it returns": with the service's own thread, the thread runs them and
// shutdown() joins it. In driver mode (no thread) the caller runs them, unless a
// run_due() pass is active (a task called shutdown(), or a driver races it): that
// pass runs them. Called from the timer thread itself (inside a task), shutdown
// cannot join; it returns the list and the thread exits after the task returns
// (the destructor joins it). A periodic task whose queued next run is returned may
// be running at that moment; what is returned is the run that will not happen.
//
// Tombstones (what purge() removes): a queued entry whose task is kCancelled. Only
// task->cancel() (no lock, so it cannot touch the queue) makes them, when it cancels
// a queued task. service.cancel() never leaves one and removes one it finds.
// A tombstone that comes due is skipped (stats().skipped_cancelled); purge() frees
// it earlier and returns how many it freed; stats().tombstones counts them now.
//
// No lost notify (seed 001's race, and Problems 1 and 2). The timer thread decides
// how long to wait and blocks in ONE critical section of mu_: under mu_ it reads
// stop_, takes everything due, reads the head's deadline, and calls
// P::wait_until(cv_, lock, clock, head) (P::wait if empty), which releases mu_
// atomically with starting to wait. schedule() inserts and notifies while holding
// mu_; shutdown() sets stop_ and notifies while holding mu_. So a schedule() or
// shutdown() critical section either happens before the thread's (the thread sees
// the new head or stop_ and never waits for the stale deadline) or after it has
// started waiting (the notify wakes it). There is no third interleaving; the
// fault point kTimerAfterComputeWait sits inside the critical section, where a
// delay cannot open a window. The seed's "serious solution" computed the wait
// outside the monitor it waited on: mutant kTimerNotifyWithoutLock puts that back.
// Which schedule() notifies: only one whose new head is earlier than the instant the
// thread's current wait ends (wait_deadline_, written under mu_ by the thread as it
// decides the wait, and reset to Instant::min() -- "not waiting, or a wake is on its
// way" -- when it wakes or is notified). Comparing with the queue's previous head is
// not enough: once the head is cancelled, every schedule() of a new head later than
// the wait the thread is already in would wake it for nothing, and a wake costs a
// futex call, two context switches and, since the notify is under mu_, usually a
// third as the woken thread blocks on mu_. That is the timeout pattern (arm, cancel
// before expiry, arm again) and it doubled Waiter's cancel-to-resume latency on
// a 2-CPU machine (tlab compare --workload cancel_to_resume). A lower-bound
// next_deadline() (wheels) is fine: an entry due before wait_deadline_ makes the
// bound earlier still.
// wake() takes mu_ too, so a virtual-clock driver that advances time then calls
// wake() is never lost either.
//
// Ground rules: every field below is guarded by mu_ except clock_ (immutable
// reference, thread-safe clock), thread_ (written by start() under mu_, joined only
// by the one shutdown call that stopped the service, or the destructor) and the
// TimerTask atomics. Callbacks run with mu_ RELEASED, so they may call any method
// here (schedule, cancel, purge, stats, shutdown) except run_due() and the
// destructor. A callable's destructor must not call into the service: the service
// may drop its last reference to a task while holding mu_.
//
// Memory ordering: mu_ orders everything the service does. The task's state word is
// seq_cst (timer_task.h). A callback observes everything its scheduler did before
// schedule*() returned (the insert and the take are both under mu_).
//
// Mutants (mutant.h; each reproduces one failure of seed 001 in this code):
//   kTimerNotifyWithoutLock    the thread computes its wait, leaves mu_, then waits;
//                              schedule() notifies outside mu_: the notify is lost
//   kTimerSleepNotWait         "Attempt 2": the thread sleeps until the head's
//                              deadline on a cv nobody notifies
//   kTimerNoNotifyOnEarlier    schedule() never wakes the thread for a new head
//   kTimerExceptionKillsThread a throwing task's exception leaves the loop: the
//                              thread dies quietly; schedule() still accepts
//   kTimerShutdownNoWake       shutdown*() do not notify: join waits for the head
//   kTimerFixedRateAsDelay     fixed-rate next deadline from the run time: no catch-up
//   kTimerCancelNoRemove       service.cancel() returns true but the task still runs
//   kTimerFixedDelayWraps      fixed-delay next = run time + period wraps: a huge
//                              period lands in the past and the task runs back to back
//   kTimerFixedRateWraps       fixed-rate next = deadline + period wraps: endless catch-up
//   kTimerLatenessWraps        now - deadline wraps: an ancient deadline counts as early
//   kTimerCapOffByOne          max_pending admits one task more than the cap
//   kTimerSkipAsBurst          a kSkip task's next run is deadline + period: a late one
//                              runs every missed tick back to back
//   kTimerRescheduleNoMove     reschedule() records the new deadline but the queue
//                              entry stays at the old one
//   kTimerTakeDueStrict        a pass takes what is due strictly before now (< for
//                              <=): a task due exactly at a pass's now waits for the
//                              next one, late by a whole tick on a ticking driver
//   kTimerRunDueSamePass       run_due() runs a task armed during its pass in that
//                              same pass: a callback that re-arms itself at delay 0
//                              keeps the pass from returning
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <pthread.h>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/base/scoped_unlock.h"
#include "tlab/clock.h"
#include "tlab/missed_tick.h"
#include "tlab/platform/platform.h"
#include "tlab/queue/timer_queue.h"
#include "tlab/timer_task.h"

namespace tlab {

struct TimerServiceOptions {
  // Start the timer thread in the constructor. false: driver mode, nothing runs
  // unless someone calls run_due()/run_once() (or start() later).
  bool start_thread = true;
  // Handed to the queue; `start` is replaced by the clock's now().
  QueueConfig queue{};
  // Cap on pending tasks (stats().pending: queued entries, tombstones included until
  // purged, as Netty counts them, plus taken-but-unrun runs); 0: no cap. A schedule*()
  // that would exceed it throws RejectedError and leaves the task kVirgin. A periodic
  // task is one pending task: its next run is never rejected.
  std::size_t max_pending = 0;
  // The timer thread's name (pthread_setname_np; Linux keeps 15 bytes, so a longer
  // name is cut there); empty: the name the process gave it. Copied at construction.
  // Only a service on a Platform whose threads are std::threads names its thread.
  std::string_view thread_name{};
};

// Thrown by schedule*() when TimerServiceOptions::max_pending would be exceeded
// (Netty's RejectedExecutionException). The task is untouched and may be scheduled
// later.
struct RejectedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A snapshot (TimerService::stats()).
struct TimerServiceStats {
  std::uint64_t scheduled = 0;          // successful schedule*() calls
  std::uint64_t tasks_run = 0;          // callback invocations, thrown or not
  std::uint64_t exceptions = 0;         // invocations that threw
  std::uint64_t cancelled = 0;          // service.cancel() calls that returned true
  std::uint64_t skipped_cancelled = 0;  // due entries found cancelled, dropped unrun
  std::uint64_t purged = 0;             // tombstones removed early (purge(), cancel(),
                                        // shutdown)
  std::uint64_t retired = 0;            // tasks shutdown*() returned unrun
  std::uint64_t rejected = 0;           // schedule*() calls refused by max_pending
  std::uint64_t rescheduled = 0;        // reschedule() calls that returned true
  Duration late_max;                    // worst (run taken - deadline)
  std::size_t pending = 0;              // queued entries + taken-but-unrun entries
  std::size_t tombstones = 0;           // queued entries whose task is cancelled
};

template <class Q, class P>
class TimerService {
 public:
  using Queue = Q;
  using Task = TimerTask<P>;
  using TaskPtr = TimerTaskPtr<P>;
  using TimerId = TaskPtr;  // TimerSource
  using Callback = typename Task::Callback;
  using Clock = typename P::Clock;

  static_assert(Platform<P>);
  static_assert(TimerQueue<Q>);
  static_assert(std::is_same_v<typename Q::Payload, TaskPtr>,
                "TimerService<Q, P>: Q's payload must be TimerTaskPtr<P> (see TimerServiceOn)");

  // tlab::TimerService::TimerService
  // Requires: `clock` outlives the service.
  // Ensures: the queue starts at clock.now(); the thread runs iff opts.start_thread.
  explicit TimerService(const Clock& clock, TimerServiceOptions opts = {})
      : clock_(clock),
        max_pending_(opts.max_pending),
        thread_name_(opts.thread_name),
        queue_(queue_config(clock, opts.queue)),
        last_now_(clock.now()) {
    if (opts.start_thread) start();
  }
  // A stateless real clock (SteadyClock) needs no instance from the caller.
  explicit TimerService(TimerServiceOptions opts = {}) requires(!Clock::kVirtual)
      : TimerService(default_clock(), opts) {}

  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;

  // tlab::TimerService::~TimerService: shutdown_now(), then joins the thread.
  // Requires: not called from a task of this service.
  ~TimerService() {
    TLAB_CHECK(std::this_thread::get_id() != owner_thread_id(),
               "TimerService destroyed from its own timer thread");
    shutdown_now();
    if (thread_.joinable()) thread_.join();
  }

  // ---- Java-style API -------------------------------------------------------

  // tlab::TimerService::schedule: run `task` once, `delay` from now.
  // Throws: std::invalid_argument (null task, negative delay); std::logic_error
  // (service shut down; task not kVirgin: already scheduled, executed or cancelled).
  // Thread safety: any thread, including from a task.
  void schedule(const TaskPtr& task, Duration delay) {
    schedule_after(task, delay, TaskKind::kOnce, Duration::zero(), "TimerService::schedule");
  }

  // tlab::TimerService::schedule_at: run `task` once at `when` (a past instant is
  // due at once). Throws as schedule(), minus the delay check.
  void schedule_at(const TaskPtr& task, Instant when) {
    require_task(task, "TimerService::schedule_at");
    schedule_impl(task, when, TaskKind::kOnce, Duration::zero(), "TimerService::schedule_at");
  }

  // tlab::TimerService::schedule_fixed_delay: first run `delay` from now, then
  // each run `period` after the previous run was taken. A late run delays all
  // later ones (no catch-up). Deadlines saturate: a run due at Instant::max()
  // whose next run would be there too is the series' last (the task ends kExecuted).
  // Throws as schedule(), plus std::invalid_argument for period <= 0.
  void schedule_fixed_delay(const TaskPtr& task, Duration delay, Duration period) {
    schedule_after(task, delay, TaskKind::kFixedDelay, period,
                   "TimerService::schedule_fixed_delay");
  }

  // tlab::TimerService::schedule_at_fixed_rate: first run `delay` from now; run k
  // is due at first + k * period. A thread that fell behind runs the missed runs
  // back to back (each sees its own deadline in task->scheduled_time()). Saturates
  // as schedule_fixed_delay().
  // Throws as schedule_fixed_delay().
  void schedule_at_fixed_rate(const TaskPtr& task, Duration delay, Duration period) {
    schedule_after(task, delay, TaskKind::kFixedRate, period,
                   "TimerService::schedule_at_fixed_rate");
  }

  // tlab::TimerService::schedule_periodic: first run `delay` from now, then every
  // `period` on the grid first + k * period; `missed` says what a late run does
  // (missed_tick.h): kBurst is schedule_at_fixed_rate(), kDelay is
  // schedule_fixed_delay(), kSkip drops the missed runs and keeps the grid.
  // Throws as schedule_fixed_delay().
  void schedule_periodic(const TaskPtr& task, Duration delay, Duration period, MissedTick missed) {
    const TaskKind kind = missed == MissedTick::kBurst   ? TaskKind::kFixedRate
                          : missed == MissedTick::kDelay ? TaskKind::kFixedDelay
                                                         : TaskKind::kFixedRateSkip;
    schedule_after(task, delay, kind, period, "TimerService::schedule_periodic");
  }

  // tlab::TimerService::reschedule: re-times a scheduled task (libuv's
  // uv_timer_again, tokio's Interval::reset_after): its queued next run moves to
  // now + delay; a periodic task keeps its period and policy, and its grid restarts
  // there. The entry is moved under the lock, so a task never has two.
  // Ensures: true iff the task is this service's, kScheduled and queued. false: never
  // scheduled here, cancelled, executed, or a one-shot whose run is already taken
  // (it runs, or is running, at the old time). A periodic task that is running has
  // its next run queued, so it is moved.
  // Throws: std::invalid_argument (null task, negative delay). Thread safety: any
  // thread, including from a task.
  bool reschedule(const TaskPtr& task, Duration delay) {
    require_task(task, "TimerService::reschedule");
    const Duration d = checked_delay(delay, "TimerService::reschedule");
    typename P::Lock lock(mu_);
    Task& t = *task;
    if (t.owner_.load() != id() || t.state() != TaskState::kScheduled ||
        t.queued_index_ == Task::kNotQueued) {
      return false;
    }
    const Instant deadline = deadline_after<P>(clock_.now(), d);
    ++stats_.rescheduled;
    if (P::mutated(Mutant::kTimerRescheduleNoMove)) {
      t.deadline_ = deadline;  // BUG (mutant): the entry stays at the old deadline
      return true;
    }
    remove_queued_locked(t);
    t.armed_seq_ = ++arm_seq_;
    enqueue_locked(task, deadline);
    notify_if_earlier_locked(lock);
    return true;
  }

  // tlab::TimerService::cancel
  // Ensures: returns true iff this call moved the task out of kScheduled (see
  // timer_task.h: prevented the run, or all future runs); its queue entry, and any
  // tombstone it had, is removed now. A never-scheduled task becomes kCancelled
  // (false), as TimerTask::cancel().
  // Throws: std::invalid_argument for a null task or one owned by another service.
  // Thread safety: any thread, including from a task (also the task itself).
  bool cancel(const TaskPtr& task) {
    require_task(task, "TimerService::cancel");
    typename P::Lock lock(mu_);
    const std::uint64_t owner = task->owner_.load();
    if (owner == 0) return task->cancel();
    if (owner != id()) {
      throw std::invalid_argument("TimerService::cancel: the task belongs to another TimerService");
    }
    if (P::mutated(Mutant::kTimerCancelNoRemove)) {
      // BUG (mutant): report success, change nothing; the task still runs.
      return task->state() == TaskState::kScheduled;
    }
    const bool prevented = task->cancel();
    if (prevented) ++stats_.cancelled;
    if (task->queued_index_ != Task::kNotQueued) {
      remove_queued_locked(*task);
      if (!prevented) ++stats_.purged;  // it was a tombstone of an earlier task->cancel()
    }
    // An entry already taken as due stays in due_; the runner skips it (kCancelled).
    return prevented;
  }

  // tlab::TimerService::purge: removes every tombstone (queued entry of a cancelled
  // task) from the queue and returns how many. Java's Timer.purge().
  // Thread safety: any thread.
  std::size_t purge() {
    std::vector<TaskPtr> dropped;  // released after mu_: it may hold last references
    {
      typename P::Lock lock(mu_);
      for (std::size_t i = queued_.size(); i-- > 0;) {  // backwards: swap-remove is safe
        Task& t = *queued_[i];
        if (t.state() != TaskState::kCancelled) continue;
        dropped.push_back(t.shared_from_this());
        remove_queued_locked(t);
      }
      stats_.purged += dropped.size();
    }
    return dropped.size();
  }

  // tlab::TimerService::shutdown: no new tasks; runs what is due now, then stops;
  // returns the tasks that never got to run (table in the header comment).
  // Thread safety: any thread. Idempotent.
  std::vector<TaskPtr> shutdown() { return shutdown_impl(/*run_due_now=*/true); }

  // tlab::TimerService::shutdown_now: no new tasks; stops after the running callback
  // (if any); returns every pending task unrun, due or not.
  std::vector<TaskPtr> shutdown_now() { return shutdown_impl(/*run_due_now=*/false); }

  bool is_shutdown() const {
    typename P::Lock lock(mu_);
    return !accepting_;
  }

  // ---- TimerSource API --------------------------------------------------------

  // tlab::TimerService::schedule_at (TimerSource): runs `cb` once at `deadline`
  // on the timer thread unless cancel(id) wins first.
  // Throws: std::invalid_argument for an empty callback; std::logic_error after
  // shutdown.
  TimerId schedule_at(Instant deadline, Callback cb) {
    TaskPtr task = Task::make(std::move(cb));
    schedule_impl(task, deadline, TaskKind::kOnce, Duration::zero(), "TimerService::schedule_at");
    return task;
  }

  Instant now() const { return clock_.now(); }

  // ---- Driving ----------------------------------------------------------------

  // tlab::TimerService::start: starts the timer thread (if the constructor did not).
  // Throws: std::logic_error if already started, shut down, or a run_due() pass is
  // active.
  void start() {
    typename P::Lock lock(mu_);
    if (!accepting_) throw std::logic_error("TimerService::start: the service is shut down");
    if (started_) throw std::logic_error("TimerService::start: the thread is already running");
    if (pass_active_) throw std::logic_error("TimerService::start: a run_due() pass is active");
    started_ = true;
    thread_ = spawn_thread<P>([this] { thread_main(); });
    thread_id_ = thread_.get_id();
  }

  // tlab::TimerService::run_due: driver mode. Runs, on the calling thread, every
  // task due at `now` (including fixed-rate catch-up runs up to `now`), in deadline
  // order, and returns the number of callbacks run. Never blocks on time.
  // Next pass: a task armed (schedule*() or reschedule()) while the pass runs, by
  // one of its callbacks or anyone else, never runs in this pass, even when due at
  // `now`: it is held and queued again as the pass ends, so the next run_due() runs
  // it. A callback that re-arms itself at delay 0 runs once per pass, and a pass
  // always returns (its work is bounded by what was queued when it began).
  // Requires: the service's thread is not started; now >= the previous pass's now
  // and >= the construction time (time never goes backwards: TLAB_CHECK).
  // Throws: std::logic_error when the thread runs or when re-entered (from a task,
  // or from a second driver thread while a pass is active).
  std::size_t run_due(Instant now) {
    typename P::Lock lock(mu_);
    if (started_) {
      throw std::logic_error(
          "TimerService::run_due: the timer thread is running; "
          "run_due is for services built with start_thread = false");
    }
    if (pass_active_) throw std::logic_error("TimerService::run_due: a pass is already active");
    PassScope pass(pass_active_);
    HoldScope hold(*this);
    std::size_t ran = 0;
    for (;;) {
      const Step s = step_locked(lock, now);
      if (s == Step::kIdle) break;
      if (s == Step::kRan) ++ran;
    }
    return ran;
  }

  // tlab::TimerService::run_once: run_due(clock.now()).
  std::size_t run_once() { return run_due(clock_.now()); }

  // tlab::TimerService::run_loop: runs the timer thread's own loop (the body
  // start() gives its std::thread) on the calling thread, until shutdown. The seam
  // for Relacy models, whose simulated threads are not std::threads: a model thread
  // becomes the timer thread and every wait, notify and wake of the real loop is
  // explored. shutdown*() wakes it (it does not join: there is no thread).
  // Requires: built with start_thread = false; start() never called.
  // Throws: std::logic_error when the thread runs or a pass is already active;
  // what a task throws under mutant kTimerExceptionKillsThread.
  void run_loop() {
    typename P::Lock lock(mu_);
    if (started_) throw std::logic_error("TimerService::run_loop: the timer thread is running");
    if (pass_active_) throw std::logic_error("TimerService::run_loop: a pass is already active");
    loop_locked(lock);
  }

  // tlab::TimerService::wake: makes the timer thread re-read the clock and the
  // queue. Needed only with a virtual clock (its waits never time out on their
  // own): advance the clock, then wake().
  void wake() {
    typename P::Lock lock(mu_);
    P::notify_all(cv_);
  }

  // ---- Observing ---------------------------------------------------------------

  TimerServiceStats stats() const {
    typename P::Lock lock(mu_);
    TimerServiceStats s = stats_;
    s.pending = queued_.size() + due_.size() + held_.size();
    s.tombstones =
        static_cast<std::size_t>(std::count_if(queued_.begin(), queued_.end(), [](const Task* t) {
          return t->state() == TaskState::kCancelled;
        }));
    return s;
  }

  // The message of the most recent exception a task threw ("" if none).
  std::string last_error() const {
    typename P::Lock lock(mu_);
    return last_error_;
  }

  std::size_t pending() const {
    typename P::Lock lock(mu_);
    return queued_.size() + due_.size() + held_.size();
  }

  // tlab::TimerService::check_invariants: the queue's own invariants; the queued_
  // index mirrors the queue exactly; every queued task is owned here and kScheduled
  // or kCancelled; taken-but-unrun entries are sorted and were due when taken (no
  // early run); nothing is queued after shutdown. Aborts with operands on failure.
  void check_invariants() const {
    typename P::Lock lock(mu_);
    queue_.check_invariants();
    TLAB_CHECK(queue_.size() == queued_.size(), "TimerService: queue size=", queue_.size(),
               " queued index size=", queued_.size());
    for (std::size_t i = 0; i < queued_.size(); ++i) {
      const Task& t = *queued_[i];
      TLAB_CHECK(t.queued_index_ == i, "TimerService: queued index i=", i,
                 " task says=", t.queued_index_);
      TLAB_CHECK(queue_.contains(t.handle_), "TimerService: stale handle for queued task i=", i);
      TLAB_CHECK(t.owner_.load() == id(), "TimerService: queued task owned elsewhere i=", i);
      const TaskState s = t.state();
      TLAB_CHECK(s == TaskState::kScheduled || s == TaskState::kCancelled,
                 "TimerService: queued task in state ", name_of(s));
    }
    for (std::size_t i = 0; i < due_.size(); ++i) {
      TLAB_CHECK(due_[i].deadline <= last_now_,
                 "TimerService: entry taken early deadline=", due_[i].deadline,
                 " last_now=", last_now_);
      TLAB_CHECK(due_[i].task->queued_index_ == Task::kNotQueued,
                 "TimerService: a taken entry's task is also queued i=", i);
      if (i > 0) {
        TLAB_CHECK(due_[i - 1].deadline <= due_[i].deadline, "TimerService: due list unsorted at ",
                   i, " prev=", due_[i - 1].deadline, " this=", due_[i].deadline);
      }
    }
    for (const Due& d : held_) {
      TLAB_CHECK(d.deadline <= last_now_, "TimerService: entry held early deadline=", d.deadline,
                 " last_now=", last_now_);
      TLAB_CHECK(d.task->queued_index_ == Task::kNotQueued && d.task->armed_seq_ > pass_floor_,
                 "TimerService: a held entry is queued, or was armed before its pass");
    }
    if (!accepting_)
      TLAB_CHECK(queued_.empty(), "TimerService: ", queued_.size(), " queued after shutdown");
    TLAB_CHECK(stats_.exceptions <= stats_.tasks_run,
               "TimerService: exceptions=", stats_.exceptions, " > runs=", stats_.tasks_run);
  }

 private:
  enum class Step : std::uint8_t { kIdle, kSkipped, kHeld, kRan };

  // No pass is holding: every armed_seq_ is at most this.
  static constexpr std::uint64_t kNoHold = ~std::uint64_t{0};

  struct Due {
    TaskPtr task;
    Instant deadline;
  };

  // Marks a run_due()/thread pass active for its scope. Requires mu_ held at both
  // ends (the Lock is declared before the scope, so it is released after).
  struct PassScope {
    explicit PassScope(bool& flag) : flag_(flag) { flag_ = true; }
    ~PassScope() { flag_ = false; }
    PassScope(const PassScope&) = delete;
    PassScope& operator=(const PassScope&) = delete;
    bool& flag_;
  };

  // A run_due() pass's next-pass rule for its scope: a task armed after the scope
  // began (armed_seq_ above the floor) and taken as due is held, and queued again,
  // at its deadline, as the scope ends (run_due). Requires mu_ held at both ends,
  // as PassScope; the end also runs when a task's exception leaves the pass.
  struct HoldScope {
    explicit HoldScope(TimerService& s) : s_(s) {
      assume_held(s_.mu_);
      s_.pass_floor_ = s_.arm_seq_;
    }
    ~HoldScope() {
      assume_held(s_.mu_);
      s_.pass_floor_ = kNoHold;
      for (Due& d : s_.held_) {
        if (d.task->state() == TaskState::kScheduled) {
          s_.enqueue_locked(d.task, d.deadline);
        } else {
          ++s_.stats_.skipped_cancelled;  // cancelled while held: dropped unrun
        }
      }
      s_.held_.clear();
    }
    HoldScope(const HoldScope&) = delete;
    HoldScope& operator=(const HoldScope&) = delete;
    TimerService& s_;
  };

  static const Clock& default_clock() {
    static const Clock clock{};
    return clock;
  }

  static QueueConfig queue_config(const Clock& clock, QueueConfig cfg) {
    cfg.start = clock.now();
    return cfg;
  }

  static bool by_deadline(const Due& a, const Due& b) { return a.deadline < b.deadline; }

  std::uint64_t id() const noexcept { return reinterpret_cast<std::uintptr_t>(this); }

  std::thread::id owner_thread_id() const {
    typename P::Lock lock(mu_);
    return started_ ? thread_id_ : std::thread::id();
  }

  static void require_task(const TaskPtr& task, const char* what) {
    if (!task) throw std::invalid_argument(std::string(what) + ": null task");
  }

  // The delay-based schedule*() calls: validate in Java's order (task, delay,
  // period), then schedule at now + delay.
  void schedule_after(const TaskPtr& task, Duration delay, TaskKind kind, Duration period,
                      const char* what) {
    require_task(task, what);
    const Duration d = checked_delay(delay, what);
    if (kind != TaskKind::kOnce && period <= Duration::zero()) {
      throw std::invalid_argument(std::string(what) + ": period must be positive, got " +
                                  std::to_string(period.ns()) + "ns");
    }
    schedule_impl(task, deadline_after<P>(clock_.now(), d), kind, period, what);
  }

  void schedule_impl(const TaskPtr& task, Instant deadline, TaskKind kind, Duration period,
                     const char* what) {
    typename P::Lock lock(mu_);
    if (!accepting_) throw std::logic_error(std::string(what) + ": the TimerService is shut down");
    admit_locked(what);
    claim_locked(*task, what);
    task->kind_ = kind;
    task->period_ = period;
    task->armed_seq_ = ++arm_seq_;
    enqueue_locked(task, deadline);
    ++stats_.scheduled;
    notify_if_earlier_locked(lock);
  }

  // Throws RejectedError when one more pending task would exceed max_pending.
  void admit_locked(const char* what) TLAB_REQUIRES(mu_) {
    if (max_pending_ == 0) return;
    const std::size_t pending = queued_.size() + due_.size() + held_.size();
    const std::size_t limit = P::mutated(Mutant::kTimerCapOffByOne)  // BUG (mutant): > for >=
                                  ? max_pending_ + 1
                                  : max_pending_;
    if (pending < limit) return;
    ++stats_.rejected;
    throw RejectedError(std::string(what) + ": " + std::to_string(pending) +
                        " tasks pending, max_pending is " + std::to_string(max_pending_));
  }

  // Wakes the timer thread if the queue's head is now earlier than the end of its
  // current wait (see "No lost notify"). mu_ held on entry and on return (released
  // around the notify by the kTimerNotifyWithoutLock mutant only).
  void notify_if_earlier_locked(typename P::Lock& lock) TLAB_REQUIRES(mu_) {
    const std::optional<Instant> new_head = queue_.next_deadline();
    // The thread is not waiting (it re-reads the queue before it does), or its
    // current wait ends no later than the new head: that wait is still right.
    if (!(*new_head < wait_deadline_)) return;
    if (P::mutated(Mutant::kTimerNoNotifyOnEarlier)) return;  // BUG (mutant): no wake
    wait_deadline_ = Instant::min();  // a wake is on its way: later schedules need none
    if (P::mutated(Mutant::kTimerNotifyWithoutLock)) {
      // BUG (mutant): notify outside the critical section (see wait_locked); mu_ is
      // taken back only so that the caller's scope ends as it began.
      ScopedUnlock unlocked(lock, mu_);
      P::fault(FaultPoint::kTimerBeforeNotify);
      P::notify_one(cv_);
      return;
    }
    P::fault(FaultPoint::kTimerBeforeNotify);
    P::notify_one(cv_);
  }

  // Makes this service the task's owner and the task kScheduled, or throws.
  void claim_locked(Task& t, const char* what) TLAB_REQUIRES(mu_) {
    std::uint64_t expected = 0;
    if (!t.owner_.compare_exchange_strong(expected, id())) {
      throw std::logic_error(
          std::string(what) + ": task already scheduled " +
          (expected == id() ? "on this TimerService" : "on another TimerService") + " (state " +
          name_of(t.state()) + "); a TimerTask is scheduled at most once");
    }
    if (!t.transition(TaskState::kVirgin, TaskState::kScheduled)) {
      throw std::logic_error(std::string(what) + ": task is " + name_of(t.state()) +
                             "; a TimerTask is scheduled at most once");
    }
  }

  void enqueue_locked(const TaskPtr& task, Instant deadline) TLAB_REQUIRES(mu_) {
    Task& t = *task;
    t.deadline_ = deadline;
    t.handle_ = queue_.insert(deadline, TaskPtr(task));
    t.queued_index_ = queued_.size();
    queued_.push_back(&t);
  }

  // Drops t from the queued_ index (swap-remove). Its queue entry is gone or going.
  void forget_locked(Task& t) TLAB_REQUIRES(mu_) {
    const std::size_t i = t.queued_index_;
    TLAB_DCHECK(i < queued_.size() && queued_[i] == &t,
                "TimerService: forget of unqueued task i=", i);
    queued_[i] = queued_.back();
    queued_[i]->queued_index_ = i;
    queued_.pop_back();
    t.queued_index_ = Task::kNotQueued;
    t.handle_ = TimerHandle{};
  }

  // Removes t's queue entry. The queue drops its TaskPtr: the caller keeps t alive.
  void remove_queued_locked(Task& t) TLAB_REQUIRES(mu_) {
    const TimerHandle h = t.handle_;
    forget_locked(t);
    const bool removed = queue_.cancel(h);
    TLAB_CHECK(removed, "TimerService: queue lost an entry index=", h.index, " gen=", h.generation);
  }

  // Moves every entry due at `now` from the queue to due_, keeping due_ sorted by
  // deadline (stable: earlier-taken entries first among equals).
  void take_due_locked(Instant now) TLAB_REQUIRES(mu_) {
    TLAB_CHECK(now >= last_now_, "TimerService: time going backwards last_now=", last_now_,
               " now=", now);
    last_now_ = now;
    const std::size_t old = due_.size();
    const Instant upto = P::mutated(Mutant::kTimerTakeDueStrict) && now > Instant::min()
                             ? Instant::from_ns(now.ns() - 1)  // BUG (mutant): < for <=
                             : now;
    queue_.expire(upto, [this](TaskPtr&& task, Instant deadline) {
      assume_held(mu_);  // expire() runs this sink right here, under mu_
      forget_locked(*task);
      due_.push_back(Due{std::move(task), deadline});
    });
    if (due_.size() > old) {
      const auto mid = due_.begin() + static_cast<std::ptrdiff_t>(old);
      std::stable_sort(mid, due_.end(), by_deadline);
      std::inplace_merge(due_.begin(), mid, due_.end(), by_deadline);
    }
  }

  // The next run's deadline, saturating: a period that carries it past Instant::max()
  // parks the task at Instant::max() (never earlier than this run), never in the past.
  Instant next_deadline_of(const Task& t, Instant deadline, Instant now) const {
    if (t.kind_ == TaskKind::kFixedRateSkip) {
      if (P::mutated(Mutant::kTimerSkipAsBurst)) return deadline + t.period_;  // BUG (mutant)
      return skip_deadline(deadline, t.period_, now);
    }
    if (t.kind_ == TaskKind::kFixedRate && !P::mutated(Mutant::kTimerFixedRateAsDelay)) {
      if (P::mutated(Mutant::kTimerFixedRateWraps)) {  // BUG (mutant): wrapping catch-up
        return Instant::from_ns(detail::wrap_add(deadline.ns(), t.period_.ns()));
      }
      return deadline + t.period_;  // fixed rate: from the schedule, so it catches up
    }
    if (P::mutated(Mutant::kTimerFixedDelayWraps)) {  // BUG (mutant): wrapping add
      return Instant::from_ns(detail::wrap_add(now.ns(), t.period_.ns()));
    }
    return now + t.period_;  // fixed delay (or BUG (mutant): fixed rate drifts)
  }

  // One unit of work: takes what is due (unless stopping), then runs or skips the
  // earliest taken entry. mu_ held on entry and on return (released for the run).
  Step step_locked(typename P::Lock& lock, Instant now) TLAB_REQUIRES(mu_) {
    if (!stop_) take_due_locked(now);
    if (due_.empty()) return Step::kIdle;
    Due due = std::move(due_.front());
    due_.pop_front();
    Task& t = *due.task;
    // Next pass (run_due): armed while this pass runs, so it waits for the next one.
    if (t.armed_seq_ > pass_floor_ && !stop_ && !P::mutated(Mutant::kTimerRunDueSamePass)) {
      held_.push_back(std::move(due));  // BUG (mutant): without this, it runs now
      return Step::kHeld;
    }
    if (t.kind_ == TaskKind::kOnce || stop_) {
      // The run/cancel decision: exactly one of this CAS and cancel()'s wins.
      if (!t.transition(TaskState::kScheduled, TaskState::kExecuted)) {
        ++stats_.skipped_cancelled;
        return Step::kSkipped;
      }
    } else {
      if (t.state() != TaskState::kScheduled) {
        ++stats_.skipped_cancelled;
        return Step::kSkipped;
      }
      const Instant next = next_deadline_of(t, due.deadline, now);
      if (due.deadline == Instant::max() && next == Instant::max()) {
        // Saturated at the end of time: no later instant exists, so this run is the
        // series' last (re-queueing at the same instant would make
        // run_due(Instant::max()) run it forever). It ends as a one-shot does.
        if (!t.transition(TaskState::kScheduled, TaskState::kExecuted)) {
          ++stats_.skipped_cancelled;
          return Step::kSkipped;
        }
      } else {
        // Re-queue before running (as Java): a cancel during the run removes it.
        enqueue_locked(due.task, next);
      }
    }
    run_locked(lock, t, due.deadline, now);
    return Step::kRan;
  }

  void run_locked(typename P::Lock& lock, Task& t, Instant deadline, Instant now)
      TLAB_REQUIRES(mu_) {
    t.last_deadline_.store(static_cast<std::uint64_t>(deadline.ns()));
    const Duration late = P::mutated(Mutant::kTimerLatenessWraps)  // BUG (mutant): wraps
                              ? Duration::nanoseconds(detail::wrap_sub(now.ns(), deadline.ns()))
                              : now - deadline;
    if (late > stats_.late_max) stats_.late_max = late;
    std::exception_ptr error;
    std::string message;
    {
      ScopedUnlock unlocked(lock, mu_);
      P::fault(FaultPoint::kTimerBeforeRunTask);
      try {
        t.callback_();
      } catch (const std::exception& e) {
        error = std::current_exception();
        message = e.what();
      } catch (...) {
        error = std::current_exception();
        message = "unknown exception (not derived from std::exception)";
      }
    }
    ++stats_.tasks_run;
    if (!error) return;
    ++stats_.exceptions;
    last_error_ = std::move(message);
    if (P::mutated(Mutant::kTimerExceptionKillsThread)) {
      std::rethrow_exception(error);  // BUG (mutant): the exception leaves the loop
    }
  }

  // Blocks until notified or the head is due. mu_ held; see "No lost notify".
  void wait_locked(typename P::Lock& lock) TLAB_REQUIRES(mu_) {
    const std::optional<Instant> head = queue_.next_deadline();
    wait_deadline_ = head ? *head : Instant::max();
    if (P::mutated(Mutant::kTimerNotifyWithoutLock)) {
      ScopedUnlock unlocked(lock, mu_);  // BUG (mutant): decide and wait in two critical sections
      P::fault(FaultPoint::kTimerAfterComputeWait);
    } else {
      P::fault(FaultPoint::kTimerAfterComputeWait);
    }
    if (!head) {
      P::wait(cv_, lock);
    } else if (P::mutated(Mutant::kTimerSleepNotWait)) {
      P::wait_until(sleep_cv_, lock, clock_, *head);  // BUG (mutant): deaf until the head
    } else {
      P::wait_until(cv_, lock, clock_, *head);
    }
    wait_deadline_ = Instant::min();  // running: it re-reads the queue before waiting
  }

  void loop() {
    typename P::Lock lock(mu_);
    loop_locked(lock);
  }

  // The timer thread's loop; mu_ held on entry and on return (released while
  // waiting and while a task runs).
  void loop_locked(typename P::Lock& lock) TLAB_REQUIRES(mu_) {
    PassScope pass(pass_active_);
    for (;;) {
      if (step_locked(lock, clock_.now()) != Step::kIdle) continue;
      if (stop_) return;
      wait_locked(lock);
    }
  }

  void thread_main() {
    if constexpr (std::is_same_v<ThreadOf<P>, std::thread>) {
      if (!thread_name_.empty()) {
        pthread_setname_np(pthread_self(), thread_name_.substr(0, 15).c_str());
      }
    }
    try {
      loop();
    } catch (...) {
      // Only the mutant lets a task's exception out of loop(); anything else is an
      // internal failure and terminates loudly.
      if (!P::mutated(Mutant::kTimerExceptionKillsThread)) throw;
      // BUG (mutant): the timer thread dies quietly, like java.util.Timer's.
    }
  }

  // Hands an unrun task back from shutdown: kScheduled -> kCancelled. A tombstone
  // (already kCancelled) is just dropped.
  void retire_locked(TaskPtr task, std::vector<TaskPtr>& out) TLAB_REQUIRES(mu_) {
    if (task->transition(TaskState::kScheduled, TaskState::kCancelled)) {
      out.push_back(std::move(task));
    } else {
      ++stats_.purged;
    }
  }

  std::vector<TaskPtr> shutdown_impl(bool run_due_now) {
    std::vector<TaskPtr> out;
    bool join = false;
    Instant cutoff;
    {
      typename P::Lock lock(mu_);
      if (!accepting_) return out;
      accepting_ = false;
      stop_ = true;
      cutoff = std::max(clock_.now(), last_now_);
      // Held entries (a task shut the service down inside a run_due pass) were
      // due by the pass's now, so they join the due ones.
      for (Due& d : held_) due_.push_back(std::move(d));
      held_.clear();
      std::stable_sort(due_.begin(), due_.end(), by_deadline);
      if (run_due_now) {
        take_due_locked(cutoff);  // they stay in due_ for the final drain
      } else {
        for (Due& d : due_) retire_locked(std::move(d.task), out);
        due_.clear();
      }
      std::vector<TaskPtr> rest;
      rest.reserve(queued_.size());
      for (Task* t : queued_) rest.push_back(t->shared_from_this());
      std::stable_sort(rest.begin(), rest.end(), [](const TaskPtr& a, const TaskPtr& b) {
        return a->deadline_ < b->deadline_;
      });
      for (TaskPtr& t : rest) {
        remove_queued_locked(*t);
        retire_locked(std::move(t), out);
      }
      stats_.retired += out.size();
      if (!P::mutated(Mutant::kTimerShutdownNoWake)) {
        P::notify_all(cv_);
      }  // else BUG (mutant): a sleeping thread sleeps on until its head is due
      join = started_ && std::this_thread::get_id() != thread_id_;
    }
    if (join) thread_.join();
    if (run_due_now) {
      typename P::Lock lock(mu_);
      if (!pass_active_ && !due_.empty()) {  // driver mode, or a thread that died
        PassScope pass(pass_active_);
        while (step_locked(lock, cutoff) != Step::kIdle) {
        }
      }
    }
    return out;
  }

  const Clock& clock_;
  const std::size_t max_pending_;  // TimerServiceOptions::max_pending; 0: no cap
  const std::string thread_name_;  // TimerServiceOptions::thread_name
  mutable typename P::Mutex mu_;
  typename P::CondVar cv_;        // the timer thread waits here
  typename P::CondVar sleep_cv_;  // kTimerSleepNotWait only: nobody ever notifies it
  Q queue_ TLAB_GUARDED_BY(mu_);
  // Tasks with an entry in queue_ (each knows its index): purge and shutdown walk it.
  std::vector<Task*> queued_ TLAB_GUARDED_BY(mu_);
  // Entries taken from queue_ as due, sorted by deadline, not yet run or skipped.
  std::deque<Due> due_ TLAB_GUARDED_BY(mu_);
  // Next pass (run_due): entries taken as due but armed during the running pass,
  // queued again as it ends (HoldScope); pass_floor_ is arm_seq_ when it began
  // (kNoHold outside run_due: the thread's loop holds nothing).
  std::vector<Due> held_ TLAB_GUARDED_BY(mu_);
  std::uint64_t arm_seq_ TLAB_GUARDED_BY(mu_) = 0;  // schedule*() and reschedule() calls
  std::uint64_t pass_floor_ TLAB_GUARDED_BY(mu_) = kNoHold;
  Instant last_now_ TLAB_GUARDED_BY(mu_);          // `now` of the latest take_due_locked()
  bool accepting_ TLAB_GUARDED_BY(mu_) = true;     // false once shut down
  bool stop_ TLAB_GUARDED_BY(mu_) = false;         // the runner must stop taking work
  bool pass_active_ TLAB_GUARDED_BY(mu_) = false;  // the thread loop or a run_due() runs
  // When the timer thread's current wait ends (Instant::max(): untimed); min() while
  // it is not waiting or a notify is already on its way. See "Which schedule() notifies".
  Instant wait_deadline_ TLAB_GUARDED_BY(mu_) = Instant::min();
  bool started_ TLAB_GUARDED_BY(mu_) = false;
  std::thread::id thread_id_ TLAB_GUARDED_BY(mu_);
  std::string last_error_ TLAB_GUARDED_BY(mu_);
  TimerServiceStats stats_ TLAB_GUARDED_BY(mu_);
  ThreadOf<P> thread_;  // see Ground rules
};

// TimerServiceOn<BinaryHeapQueue, P>: the service on queue template Q, with the
// payload filled in.
template <template <class, class> class Q, class P>
using TimerServiceOn = TimerService<Q<TimerTaskPtr<P>, P>, P>;

}  // namespace tlab
