// tlab/sharded_timer_service.h: ShardedTimerService, a TimerSource whose pending
// timers live in N independently locked shards, served by ONE timer thread.
//
// TimerService (timer_service.h) takes one mutex for every schedule, cancel and
// run: with T threads scheduling and cancelling, all T serialise on it. Here each
// shard is a mutex and a queue of its own; a caller schedules on its own shard (a
// thread-local number each thread takes once, round robin), and cancel(id) goes to
// the shard the TimerId names, from any thread. It is tuned for many threads that
// arm and cancel timeouts which mostly never fire: schedule and cancel touch one
// shard's lock and, unless the new timer is earlier than the thread's current
// wait, one relaxed atomic load and nothing shared.
//
//   schedule_at()   O(queue insert) + the shard's lock + one relaxed load; the wake
//                   lock (below) too only if the deadline is earlier than the instant
//                   the timer thread will look again (a new earliest timer, or the
//                   thread is between scans)
//   cancel(id)      O(queue cancel) + the lock of the timer's shard
//   per pass        N shard locks for expire(now), then the callbacks run with no
//                   lock held; a pass that found nothing due takes N more for
//                   next_deadline() (a wheel's is not O(1): ~1 ms at 500K entries
//                   once it has advanced), then the wake lock to wait
//   shutdown*()     N shard locks, a join, O(pending) to drop what is left
//
// Design choice: N locked queues and one timer thread waiting on the earliest head
// across the shards, as tokio's sharded timer wheel (one wheel per worker, the
// driver parks until the earliest of them), not N TimerServices with N threads:
//
//   |                      | N queues, one thread (this)     | N TimerServices, N threads     |
//   |----------------------|---------------------------------|--------------------------------|
//   | threads              | 1                               | N (idle ones still cost a      |
//   |                      |                                 | stack and a wake each)         |
//   | schedule / cancel    | one shard lock                  | one shard lock                 |
//   | fire                 | N locks per pass                | one lock                       |
//   | cross-shard wake     | must be reasoned (below)        | none: each thread owns a shard |
//   | callbacks            | one thread: never concurrent    | concurrent across shards       |
//
// Callbacks that may run concurrently would break every user written against one
// timer thread (Waiter, TimedMutex, Pool: a TimerSource's callbacks run "on the
// source's thread"), and N idle threads cost more than N uncontended locks per
// pass; the price is the cross-shard wake protocol, which is where tokio lost
// timers (the sharding was reverted once for lost timers, tokio #6682, and for
// extra contention, #7226). Its two failure modes are mutants here.
//
// Where it departs from TimerService: callbacks only (no TimerTask, no periodic
// tasks, no purge); entries taken in one pass run shard by shard, so there is no
// deadline order (and no FIFO among ties) across shards; an entry taken as due
// runs, and cancel() of it returns false (TimerSource allows "about to run");
// shutdown*() return how many callbacks they dropped, not the tasks.
//
// Shutdown (both: no new timers (std::logic_error), a running callback is never
// interrupted, entries already taken by a pass still run, a sleeping thread is
// woken at once, idempotent: later calls return 0, the destructor calls
// shutdown_now()):
//
//   |                | due at the call (deadline <= now) | not yet due | returns          |
//   |----------------|-----------------------------------|-------------|------------------|
//   | shutdown()     | run once by the caller            | dropped     | how many dropped |
//   | shutdown_now() | dropped                           | dropped     | how many dropped |
//
// Called from a callback (the timer thread), shutdown cannot join; the thread
// exits once the callback returns (the destructor joins it).
//
// No lost wake across shards. The timer thread's pass is: S0, under wake_mu_, set
// report_before_ to Instant::max() ("scanning: report every schedule"); take what
// is due from every shard (expire(now), each under its own lock) and run it, then
// pass again; once a pass took nothing, read every shard's head (next_deadline(),
// each under its own lock: the scan R below); then B, under wake_mu_: wait until
// min(heads, missed_), having stored that instant in wait_deadline_ and
// report_before_, and cleared missed_.
// schedule_on() inserts under the shard lock, then loads report_before_; a
// deadline not earlier than it needs nothing, an earlier one is reported under
// wake_mu_ (report()): it wakes a waiting thread whose wait ends later, and, when
// the thread is not waiting, lowers missed_, which B reads. Case by case, for an
// insert I on shard k and the thread's scan R of shard k in some pass:
//   1. I's critical section precedes R's: the scan sees the timer.
//   2. R's precedes I's: then that pass's S0 happens before the schedule's load
//      (S0, R's lock and unlock, I's lock, the load), so by coherence the load
//      reads S0's max() or a later store. max() reports it: before B it lowers
//      missed_; after B it wakes the thread if its wait ends later, else the
//      thread looks again by then, and that pass's scan follows the report (the
//      thread re-takes wake_mu_ to leave its wait), so it is case 1. A later store
//      is some B's wait deadline V: a deadline >= V waits for the thread to look
//      again at V, and every pass after that B has its S0 after V in modification
//      order, so (by 2 again, contradiction) its scan is case 1 and sees the timer.
// So report_before_ may be relaxed: what orders the insert and the scan is the
// shard mutex; what report() orders is wake_mu_. The fault points
// timer.after_compute_wait (between the scan and B) and timer.before_notify (after
// the insert, before the report) widen exactly the windows this covers.
//
// Ground rules: a shard's fields are guarded by its mu; wake_mu_ guards the thread
// state (wait_deadline_, missed_, stop_, accepting_, started_, pass_active_,
// exceptions_); report_before_ is written under wake_mu_ and read by schedulers
// without it (above). A pass (the thread, run_loop() or run_due()) is exclusive.
// Callbacks run with no lock held, so they may schedule, cancel and shut down; a
// callable's destructor must not call into the service (a shard may drop it under
// its lock). Locks are never nested: a shard lock and wake_mu_ are taken in turn.
//
// Memory ordering: a callback observes everything its scheduler did before
// schedule_at() returned (insert and take are under the same shard lock).
//
// Mutants (mutant.h):
//   kShardedCancelWrongShard  cancel(id) goes to the CALLER's shard: the timer's
//                             entry stays (it fires after cancel() said false) or a
//                             stranger with the same handle is cancelled (lost)
//   kShardedNoCrossShardWake  only schedules on shard 0 (the thread's "own") are
//                             reported: a new earliest timer on another shard does
//                             not wake the thread: late, or lost while shard 0 idles
//   kShardedWaitOwnShardOnly  the scan takes due entries from every shard but the
//                             wait is for shard 0's head only: a reported timer on
//                             another shard wakes the thread, which sleeps again
//                             past it: late, or lost while shard 0 is empty
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/platform.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

// The payload of a shard's queue: what ShardedTimerService<Q, P> requires of Q.
using ShardedCallback = std::function<void()>;

struct ShardedTimerServiceOptions {
  // Shards; 0: std::thread::hardware_concurrency() (at least 1).
  std::size_t shards = 0;
  // Start the timer thread in the constructor; false: driver mode (run_due,
  // run_loop, or start() later), as TimerServiceOptions.
  bool start_thread = true;
  // Handed to every shard's queue; `start` is replaced by the clock's now().
  QueueConfig queue{};
};

// A snapshot (ShardedTimerService::stats()), summed over the shards.
struct ShardedTimerServiceStats {
  std::uint64_t scheduled = 0;   // successful schedule_at()/schedule_on() calls
  std::uint64_t taken = 0;       // entries a pass took as due (each runs once)
  std::uint64_t cancelled = 0;   // cancel() calls that returned true
  std::uint64_t dropped = 0;     // entries shutdown*() dropped unrun
  std::uint64_t exceptions = 0;  // callbacks that threw (caught; the thread lives on)
  std::size_t pending = 0;       // queued entries (taken ones are not counted)
};

namespace detail {
// thread_shard_slot: this thread's number, taken once from a process-wide counter
// (round robin: consecutive threads get consecutive numbers).
inline std::size_t thread_shard_slot() {
  static std::atomic<std::size_t> next{0};
  // relaxed: only uniqueness matters, and the RMW gives it.
  thread_local const std::size_t slot = next.fetch_add(1, std::memory_order::relaxed);
  return slot;
}
}  // namespace detail

template <class Q, class P>
class ShardedTimerService {
 public:
  using Queue = Q;
  using Callback = ShardedCallback;
  using Clock = typename P::Clock;
  static constexpr std::uint32_t kNoShard = 0xffffffffu;

  // TimerId: the shard that holds the timer and its handle there.
  struct TimerId {
    std::uint32_t shard = kNoShard;
    TimerHandle handle{};
    bool operator==(const TimerId&) const = default;
  };

  static_assert(Platform<P>);
  static_assert(TimerQueue<Q>);
  static_assert(std::is_same_v<typename Q::Payload, Callback>,
                "ShardedTimerService<Q, P>: Q's payload must be ShardedCallback");

  // tlab::ShardedTimerService::ShardedTimerService
  // Requires: `clock` outlives the service.
  // Ensures: shards() == opts.shards (or the hardware threads); every queue starts
  // at clock.now(); the thread runs iff opts.start_thread.
  explicit ShardedTimerService(const Clock& clock, ShardedTimerServiceOptions opts = {})
      : clock_(clock), config_(opts.queue) {
    config_.start = clock.now();
    std::size_t n = opts.shards;
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    shards_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>(config_));
    if (opts.start_thread) start();
  }
  explicit ShardedTimerService(ShardedTimerServiceOptions opts = {}) requires(!Clock::kVirtual)
      : ShardedTimerService(default_clock(), opts) {}

  ShardedTimerService(const ShardedTimerService&) = delete;
  ShardedTimerService& operator=(const ShardedTimerService&) = delete;

  // tlab::ShardedTimerService::~ShardedTimerService: shutdown_now(), then joins.
  // Requires: not called from a callback of this service.
  ~ShardedTimerService() {
    {
      typename P::Lock lock(wake_mu_);
      TLAB_CHECK(!started_ || std::this_thread::get_id() != thread_id_,
                 "ShardedTimerService destroyed from its own timer thread");
    }
    shutdown_now();
    if (thread_.joinable()) thread_.join();
  }

  std::size_t shards() const noexcept { return shards_.size(); }

  // tlab::ShardedTimerService::this_shard: the calling thread's shard, stable for
  // the thread's life (its slot number modulo shards()).
  std::size_t this_shard() const noexcept { return detail::thread_shard_slot() % shards_.size(); }

  // tlab::ShardedTimerService::schedule_at (TimerSource): schedule_on(this_shard()).
  TimerId schedule_at(Instant deadline, Callback cb) {
    return schedule_on(this_shard(), deadline, std::move(cb));
  }

  // tlab::ShardedTimerService::schedule_on: runs `cb` once on the timer thread, no
  // earlier than `deadline`, unless cancel(id) returns true first.
  // Throws: std::invalid_argument (empty cb), std::out_of_range (shard >=
  // shards()), std::logic_error (shut down).
  // Thread safety: any thread, including from a callback.
  TimerId schedule_on(std::size_t shard, Instant deadline, Callback cb) {
    if (!cb) throw std::invalid_argument("ShardedTimerService::schedule_at: empty callback");
    if (shard >= shards_.size()) {
      throw std::out_of_range("ShardedTimerService::schedule_on: shard " + std::to_string(shard) +
                              " of " + std::to_string(shards_.size()));
    }
    Shard& s = *shards_[shard];
    TimerId id{static_cast<std::uint32_t>(shard), {}};
    {
      typename P::Lock lock(s.mu);
      if (!s.accepting) {
        throw std::logic_error("ShardedTimerService::schedule_at: the service is shut down");
      }
      id.handle = s.queue->insert(deadline, std::move(cb));
      ++s.scheduled;
    }
    // relaxed: see "No lost wake across shards" (the shard mutex orders the rest).
    const Instant report_before = Instant::from_ns(
        static_cast<std::int64_t>(report_before_.load(std::memory_order::relaxed)));
    if (!(deadline < report_before)) return id;  // the thread looks again by then
    if (shard != 0 && P::mutated(Mutant::kShardedNoCrossShardWake)) {
      return id;  // BUG (mutant): only the thread's own shard wakes it
    }
    P::fault(FaultPoint::kTimerBeforeNotify);
    report(deadline);
    return id;
  }

  // tlab::ShardedTimerService::cancel (TimerSource)
  // Ensures: true iff this call removed the timer's entry before a pass took it
  // (then it never runs). false: it was taken (ran, runs, or is about to), was
  // cancelled before, or `id` is null.
  // Thread safety: any thread, including from a callback.
  bool cancel(const TimerId& id) {
    if (id.shard >= shards_.size()) return false;
    std::size_t shard = id.shard;
    if (P::mutated(Mutant::kShardedCancelWrongShard)) shard = this_shard();  // BUG (mutant)
    Shard& s = *shards_[shard];
    typename P::Lock lock(s.mu);
    const bool removed = s.queue->cancel(id.handle);
    if (removed) ++s.cancelled;
    return removed;
  }

  Instant now() const { return clock_.now(); }

  // tlab::ShardedTimerService::shutdown / shutdown_now: see the table above.
  // Thread safety: any thread. Idempotent.
  std::size_t shutdown() { return shutdown_impl(/*run_due_now=*/true); }
  std::size_t shutdown_now() { return shutdown_impl(/*run_due_now=*/false); }

  bool is_shutdown() const {
    typename P::Lock lock(wake_mu_);
    return !accepting_;
  }

  // ---- Driving (as TimerService) -------------------------------------------------

  // tlab::ShardedTimerService::start: starts the timer thread.
  // Throws: std::logic_error if started, shut down, or a pass is active.
  void start() {
    typename P::Lock lock(wake_mu_);
    claim_pass_locked("start");
    started_ = true;
    thread_ = spawn_thread<P>([this] { loop(); });
    thread_id_ = thread_.get_id();
  }

  // tlab::ShardedTimerService::run_due: driver mode: runs on the calling thread
  // every timer due at `now` (and those callbacks schedule due at `now`); returns
  // how many ran. Requires: no thread; `now` never goes backwards (the queues'
  // TLAB_CHECK). Throws: std::logic_error with a thread or a pass active.
  std::size_t run_due(Instant now) {
    {
      typename P::Lock lock(wake_mu_);
      claim_pass_locked("run_due");
    }
    std::size_t ran = 0;
    for (;;) {
      scan(now);
      if (batch_.empty()) break;
      ran += batch_.size();
      run_batch();
    }
    typename P::Lock lock(wake_mu_);
    pass_active_ = false;
    return ran;
  }
  std::size_t run_once() { return run_due(clock_.now()); }

  // tlab::ShardedTimerService::run_loop: the timer thread's loop on the calling
  // thread until shutdown (the Relacy models' seam, as TimerService::run_loop).
  void run_loop() {
    {
      typename P::Lock lock(wake_mu_);
      claim_pass_locked("run_loop");
    }
    loop();
    typename P::Lock lock(wake_mu_);
    pass_active_ = false;
  }

  // tlab::ShardedTimerService::wake: the thread re-reads the clock and the shards
  // (a virtual clock's waits never end on their own: advance, then wake()).
  void wake() {
    typename P::Lock lock(wake_mu_);
    P::notify_all(cv_);
  }

  // ---- Observing -------------------------------------------------------------------

  ShardedTimerServiceStats stats() const {
    ShardedTimerServiceStats out;
    for (const auto& s : shards_) {
      typename P::Lock lock(s->mu);
      out.scheduled += s->scheduled;
      out.taken += s->taken;
      out.cancelled += s->cancelled;
      out.dropped += s->dropped;
      out.pending += s->queue->size();
    }
    typename P::Lock lock(wake_mu_);
    out.exceptions = exceptions_;
    return out;
  }

  std::size_t pending() const { return stats().pending; }

  // tlab::ShardedTimerService::check_invariants: every queue's own invariants; per
  // shard, scheduled == taken + cancelled + dropped + queued (no entry appears or
  // vanishes); nothing queued after shutdown. Aborts with operands on failure.
  void check_invariants() const {
    for (std::size_t i = 0; i < shards_.size(); ++i) {
      const Shard& s = *shards_[i];
      typename P::Lock lock(s.mu);
      s.queue->check_invariants();
      const std::uint64_t accounted = s.taken + s.cancelled + s.dropped + s.queue->size();
      TLAB_CHECK(s.scheduled == accounted, "ShardedTimerService: shard ", i,
                 " scheduled=", s.scheduled, " != taken=", s.taken, " + cancelled=", s.cancelled,
                 " + dropped=", s.dropped, " + queued=", s.queue->size());
      if (!s.accepting) {
        TLAB_CHECK(s.queue->empty(), "ShardedTimerService: shard ", i, " holds ",
                   s.queue->size(), " entries after shutdown");
      }
    }
  }

 private:
  // One shard, on its own cache line so that two shards' locks never share one.
  struct alignas(64) Shard {
    explicit Shard(const QueueConfig& cfg) { queue.emplace(cfg); }
    mutable typename P::Mutex mu;
    std::optional<Q> queue TLAB_GUARDED_BY(mu);  // re-emplaced empty by shutdown
    Instant last_now TLAB_GUARDED_BY(mu) = Instant::min();  // the latest expire()'s now
    bool accepting TLAB_GUARDED_BY(mu) = true;
    std::uint64_t scheduled TLAB_GUARDED_BY(mu) = 0;
    std::uint64_t taken TLAB_GUARDED_BY(mu) = 0;
    std::uint64_t cancelled TLAB_GUARDED_BY(mu) = 0;
    std::uint64_t dropped TLAB_GUARDED_BY(mu) = 0;
  };

  static const Clock& default_clock() {
    static const Clock clock{};
    return clock;
  }

  static std::uint64_t bits_of(Instant t) { return static_cast<std::uint64_t>(t.ns()); }

  void claim_pass_locked(const char* what) TLAB_REQUIRES(wake_mu_) {
    const std::string w = std::string("ShardedTimerService::") + what;
    if (!accepting_) throw std::logic_error(w + ": the service is shut down");
    if (started_) throw std::logic_error(w + ": the timer thread is running");
    if (pass_active_) throw std::logic_error(w + ": a pass is already active");
    pass_active_ = true;
  }

  // A schedule earlier than report_before_: wake a thread whose wait ends later,
  // or tell a thread that is not waiting (it reads missed_ before it waits).
  void report(Instant deadline) {
    typename P::Lock lock(wake_mu_);
    if (deadline < wait_deadline_) {
      wait_deadline_ = Instant::min();  // a wake is on its way
      P::notify_one(cv_);
    } else if (wait_deadline_ == Instant::min() && deadline < missed_) {
      missed_ = deadline;
    }
  }

  // Takes every entry due at `now` from every shard into batch_ (pass only).
  void scan(Instant now) {
    for (auto& sp : shards_) {
      Shard& s = *sp;
      typename P::Lock lock(s.mu);
      if (now > s.last_now) s.last_now = now;
      s.taken += s.queue->expire(
          now, [this](Callback&& cb, Instant) { batch_.push_back(std::move(cb)); });
    }
  }

  // The earliest head over the shards (Instant::max(): all empty): the scan R of
  // "No lost wake across shards".
  Instant earliest_head() const {
    Instant head = Instant::max();
    for (const auto& sp : shards_) {
      if (&sp != &shards_.front() && P::mutated(Mutant::kShardedWaitOwnShardOnly)) {
        continue;  // BUG (mutant): the thread waits for its own shard's head only
      }
      typename P::Lock lock(sp->mu);
      const std::optional<Instant> h = sp->queue->next_deadline();
      if (h && *h < head) head = *h;
    }
    return head;
  }

  // Runs batch_ with no lock held, then destroys the callables (still unlocked).
  void run_batch() {
    std::uint64_t failed = 0;
    for (Callback& cb : batch_) {
      try {
        cb();
      } catch (...) {
        ++failed;  // contained: the thread lives on, as TimerService's
      }
    }
    batch_.clear();
    if (failed == 0) return;
    typename P::Lock lock(wake_mu_);
    exceptions_ += failed;
  }

  // The timer thread's loop (S0, scan, run, B, wait: "No lost wake across shards").
  void loop() {
    for (;;) {
      {
        typename P::Lock lock(wake_mu_);
        if (stop_) return;
        // S0. relaxed: the shard mutexes order it before every insert that the
        // scan below misses (case 2).
        report_before_.store(bits_of(Instant::max()), std::memory_order::relaxed);
      }
      scan(clock_.now());
      if (!batch_.empty()) {
        run_batch();
        continue;
      }
      const Instant head = earliest_head();
      P::fault(FaultPoint::kTimerAfterComputeWait);
      typename P::Lock lock(wake_mu_);
      if (stop_) return;
      const Instant until = std::min(head, missed_);
      missed_ = Instant::max();
      if (until <= clock_.now()) continue;  // due already (or a wheel's lower bound)
      wait_deadline_ = until;
      // relaxed: written under wake_mu_; read by schedule_on() as case 2 says.
      report_before_.store(bits_of(until), std::memory_order::relaxed);
      if (until == Instant::max()) {
        P::wait(cv_, lock);
      } else {
        P::wait_until(cv_, lock, clock_, until);
      }
      wait_deadline_ = Instant::min();  // awake: it scans before it waits again
    }
  }

  std::size_t shutdown_impl(bool run_due_now) {
    bool join = false;
    {
      typename P::Lock lock(wake_mu_);
      if (!accepting_) return 0;
      accepting_ = false;
      stop_ = true;
      P::notify_all(cv_);
      join = started_ && std::this_thread::get_id() != thread_id_;
    }
    for (auto& s : shards_) {
      typename P::Lock lock(s->mu);
      s->accepting = false;  // schedule_on() refuses from here on
    }
    if (join) thread_.join();
    const Instant now = clock_.now();
    std::vector<Callback> due;
    std::size_t dropped = 0;
    for (auto& sp : shards_) {
      Shard& s = *sp;
      typename P::Lock lock(s.mu);
      if (run_due_now) {
        s.taken += s.queue->expire(std::max(now, s.last_now), [&due](Callback&& cb, Instant) {
          due.push_back(std::move(cb));
        });
      }
      dropped += s.queue->size();
      s.dropped += s.queue->size();
      s.queue.emplace(config_);  // drops the rest (see Ground rules)
    }
    for (Callback& cb : due) {
      try {
        cb();
      } catch (...) {
        typename P::Lock lock(wake_mu_);
        ++exceptions_;
      }
    }
    return dropped;
  }

  const Clock& clock_;
  QueueConfig config_;                          // immutable after construction
  std::vector<std::unique_ptr<Shard>> shards_;  // the vector is immutable
  // Schedules with a deadline before this instant report to the thread
  // (Instant::max() while it scans). Written under wake_mu_, read without it.
  typename P::template Atomic<std::uint64_t> report_before_{bits_of(Instant::max())};
  mutable typename P::Mutex wake_mu_;
  typename P::CondVar cv_;  // the timer thread waits here
  // When the thread's current wait ends; Instant::min() while it is not waiting.
  Instant wait_deadline_ TLAB_GUARDED_BY(wake_mu_) = Instant::min();
  // The earliest deadline reported while the thread was not waiting.
  Instant missed_ TLAB_GUARDED_BY(wake_mu_) = Instant::max();
  bool accepting_ TLAB_GUARDED_BY(wake_mu_) = true;
  bool stop_ TLAB_GUARDED_BY(wake_mu_) = false;
  bool started_ TLAB_GUARDED_BY(wake_mu_) = false;
  bool pass_active_ TLAB_GUARDED_BY(wake_mu_) = false;
  std::uint64_t exceptions_ TLAB_GUARDED_BY(wake_mu_) = 0;
  std::thread::id thread_id_ TLAB_GUARDED_BY(wake_mu_);
  std::vector<Callback> batch_;  // the active pass only
  ThreadOf<P> thread_;           // started under wake_mu_, joined by shutdown or ~
};

// ShardedTimerServiceOn<BinaryHeapQueue, P>: the service on queue template Q.
template <template <class, class> class Q, class P>
using ShardedTimerServiceOn = ShardedTimerService<Q<ShardedCallback, P>, P>;

}  // namespace tlab
