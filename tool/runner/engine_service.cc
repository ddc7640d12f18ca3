// tlab/tool/runner/engine_service.cc: the kService engine (engines.h): waiters,
// schedulers, throwers and cancellers against one TimerService<Q, P>.
//
// Actors:
//   waiter     Waiter<P, Bits>::timeout(service, timeout_us) in a loop; publishes
//              (token, arming number) in its slot in before_suspend
//   canceller  after delay_us, cancels the token it read from a random live waiter
//              slot (or, with no waiters, a random live task via service.cancel)
//   scheduler  one task per operation, delay_us ahead (mode once: alternately
//              schedule(task, d) and schedule_at(task, deadline_after<P>(now, d)),
//              so both the service's and the clock's delay arithmetic are used;
//              fixed_delay / fixed_rate with period_us); then cancels it with
//              cancel_probability, alternately service.cancel(task) and task->cancel()
//   thrower    one task per operation, delay_us ahead, whose callback throws
//   timer_thread  the service's own thread (steady clock; implicit when absent)
//
// Oracles, decided from per-task records and the arming ledger (arming_ledger.h),
// each under its own lock, as tasks and armings resolve; a record lives only while
// its task can still change an answer (TaskRec says when), so the runner's memory
// is O(live tasks + cancels in flight), not O(run.operations) (docs/design.md,
// "Resources"):
//   double_resume     the Waiter's own double_resumes/stale_wakeups; an arming
//                     with two winning cancellers
//   wrong_result      an arming that returned CANCELED though no canceller won
//                     resolve with ITS token (a stale token won: the ABA of RFC
//                     0014), and a schedule*() that accepted a negative delay
//   early_fire        an arming EXPIRED, or a task ran, before its deadline on the
//                     engine's clock
//   fired_after_cancel a one-shot task that ran although cancel returned true; a
//                     periodic task that started two runs after its cancel returned
//   lost_timer        a one-shot task due before the drain horizon that neither ran
//                     nor was cancelled by the end of the drain
//   lost_wakeup       the watchdog (stress_runner.cc) saw a waiter parked far past
//                     its deadline; a shutdown_now() that did not return
//   task_exceptions   a thrower's exception not counted by the service, or a dead
//                     timer thread (a probe task scheduled at the end never runs)
//   conservation      armed = fired + cancelled + pending, against service.pending()
//                     and the Waiter's own counters
// Latency: fire_lateness (run start - deadline; fixed-rate against the ideal
// schedule first + k * period, so drift shows), cancel_to_resume (a winning
// cancel to its waiter's return), schedule_cost, cancel_cost.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runner/arming_ledger.h"
#include "runner/engines.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"
#include "tlab/waiter.h"

namespace tlab::tool::runner {

namespace {

// Where a virtual clock starts: 2^62 ns, so that a huge delay crosses INT64_MAX.
constexpr std::int64_t kVirtualEpochNs = std::int64_t{1} << 62;

// One task's record while it can still change an oracle's answer. Owned by the
// task's callback (shared_ptr) and by the driver's live list until the task is
// resolved (a one-shot's first run or winning cancel; a periodic task's winning
// cancel); then its outcome is in the counters and the live list drops it, so
// records cost O(live tasks), not O(operations). A run or cancel after resolution
// (a bug) still finds the record through the callback or the canceller's copy.
template <class P>
struct TaskRec {
  std::uint64_t id = 0;
  const ActorState* owner = nullptr;  // its name outlives the case
  TaskKind kind = TaskKind::kOnce;
  bool thrower = false;
  bool aligned = false;             // scheduled with schedule_at on a tick: FIFO ties
  std::int64_t first_deadline = 0;  // engine clock ns, saturating
  std::int64_t period = 0;
  const TimerTask<P>* task = nullptr;  // valid during its own callback
  std::size_t live_at = 0;             // recs_mu_: index in live_recs_ while live
  std::mutex mu;
  std::uint64_t fires = 0;                 // mu
  std::int64_t first_start = 0;            // mu: start of run 0
  std::array<std::int64_t, 2> last_starts{};  // mu: the two latest run starts
  bool resolved = false;                   // mu: counted as fired or cancelled
  bool cancel_won = false;                 // mu
  std::uint64_t runs_after_cancel = 0;     // mu: periodic runs started after the win
  std::int64_t cancel_returned = 0;        // mu
  const std::string* canceller = nullptr;  // mu
  bool via_service = false;                // mu
};

template <class Q, class P, unsigned Bits>
class ServiceCase {
 public:
  using Service = TimerService<Q, P>;
  using W = Waiter<P, Bits>;
  using Token = typename W::Token;
  using Rec = TaskRec<P>;
  static constexpr bool kVirtual = P::Clock::kVirtual;

  explicit ServiceCase(CaseContext& ctx) : ctx_(ctx), s_(ctx.scenario()) {}

  void run() {
    if constexpr (kVirtual) {
      clock_.set(Instant::from_ns(kVirtualEpochNs));
    }
    TimerServiceOptions opts;
    opts.start_thread = !kVirtual;
    opts.queue = queue_config_of(s_);
    service_ = std::make_unique<Service>(clock_, opts);
    timer_actor_ = &ctx_.add_actor(kVirtual ? "driver#0" : "timer_thread#0");
    timer_log_ = &ctx_.log_of(*timer_actor_);
    build_actors();
    if constexpr (kVirtual) {
      ctx_.actors_ready();
      run_virtual();
    } else {
      set_rescue_hook([this](std::size_t i) { rescue(i); });
      ctx_.actors_ready();
      run_threads();
    }
    drain_and_check();
    set_rescue_hook(nullptr);
  }

 private:
  struct Slot {
    ActorState* st = nullptr;
    std::mutex mu;
    Token token{};
    std::uint64_t seq = 0;
    bool live = false;
    W waiter;
  };
  struct Live {
    std::shared_ptr<Rec> rec;
    TimerTaskPtr<P> task;
  };
  struct FifoGroup {
    std::uint64_t unresolved = 0;
    std::uint64_t ran_id = 0;
  };
  struct ActorRun {
    const Actor* spec = nullptr;
    ActorState* st = nullptr;
    std::size_t index = 0;
    std::size_t slot = 0;           // waiters: index in slots_ and in the ledger
    std::size_t resolver = 0;       // cancellers: index in the ledger
    std::int64_t next_virtual = 0;  // virtual mode: when the next operation is due
    std::uint64_t quota = 0;        // its share of run.operations (not cancellers)
  };

  std::int64_t now() const { return clock_.now().ns(); }

  void build_actors() {
    std::size_t index = 0;
    // Numbered per role across actor groups: two groups of schedulers must not both
    // have a "scheduler#0", because oracles (FIFO among ties) key on the name as
    // "one thread's program order".
    std::array<int, kRoleCount> per_role{};
    ledger_ = std::make_unique<ArmingLedger>(
        ctx_, static_cast<std::size_t>(count_of(s_, Role::kCanceller)), base_);
    for (const Actor& a : s_.actors) {
      if (a.role == Role::kTimerThread) continue;
      for (int i = 0; i < a.count; ++i, ++index) {
        const int n = per_role[static_cast<std::size_t>(a.role)]++;
        ActorRun r;
        r.spec = &a;
        r.st = &ctx_.add_actor(fmt::format("{}#{}", name_of(a.role), n));
        r.index = index;
        if (a.role == Role::kWaiter) {
          r.slot = ledger_->add_slot(r.st->name, ctx_.log_of(*r.st));
          slots_.emplace_back().st = r.st;
        }
        if (a.role == Role::kCanceller) r.resolver = static_cast<std::size_t>(n);
        runs_.push_back(std::move(r));
      }
    }
    std::size_t workers = 0;
    for (const ActorRun& r : runs_) workers += r.spec->role != Role::kCanceller;
    std::size_t k = 0;
    for (ActorRun& r : runs_) {
      if (r.spec->role != Role::kCanceller) r.quota = ctx_.share(k++, workers);
    }
  }

  // ---- task callbacks ------------------------------------------------------------

  void on_fire(Rec* rec) {
    const std::int64_t start = now();
    const std::int64_t due = rec->task->scheduled_time().ns();
    std::uint64_t k;
    bool first_resolution = false;
    {
      std::lock_guard lk(rec->mu);
      k = rec->fires++;
      if (k == 0) rec->first_start = start;
      rec->last_starts = {rec->last_starts[1], start};
      if (rec->kind == TaskKind::kOnce) {
        if (k == 1) {
          ctx_.violation(Oracle::kDoubleResume,
                         fmt::format("one-shot task #{} of {} ran twice (first at {}, again at {})",
                                     rec->id, rec->owner->name, ctx_.at(rec->first_start - base_),
                                     ctx_.at(start - base_)));
        }
        if (k == 0 && rec->cancel_won) fired_after_cancel(*rec);
        first_resolution = !rec->resolved;
        rec->resolved = true;
      } else if (rec->cancel_won && start > rec->cancel_returned &&
                 ++rec->runs_after_cancel == 2) {
        periodic_after_cancel(*rec);
      }
    }
    if (first_resolution) {
      fired_.fetch_add(1, std::memory_order::relaxed);
      if (rec->aligned && check_fifo_) check_fifo_tie(*rec, start);
      retire(*rec);
    }
    if (k == 0 && rec->kind == TaskKind::kOnce) live_.fetch_sub(1, std::memory_order::relaxed);
    // The deadline the task SHOULD have: the runner's own saturating now + delay
    // for a one-shot (a wrapped deadline in the service shows as an early run),
    // first + k * period for fixed rate, the service's schedule for fixed delay.
    std::int64_t ideal = due;
    if (rec->kind == TaskKind::kOnce) ideal = std::max(due, rec->first_deadline);
    if (rec->kind == TaskKind::kFixedRate) {
      // The fixed-rate contract: run k is due at first + k * period.
      ideal = (Instant::from_ns(rec->first_deadline) +
               Duration::nanoseconds(rec->period) * static_cast<std::int64_t>(k))
                  .ns();
    }
    timer_log_->sample(Latency::kFireLateness, start - ideal);
    const std::int64_t must = std::max(due, rec->kind == TaskKind::kOnce ? ideal : due);
    if (start < must) {
      ctx_.violation(Oracle::kEarlyFire,
                     fmt::format("task #{} of {} ran at {}, {} before its deadline {} (run {}; the "
                                 "service had it due at {})",
                                 rec->id, rec->owner->name, ctx_.at(start - base_),
                                 fmt_ns(must - start), ctx_.at(must - base_), k,
                                 ctx_.at(due - base_)));
    }
    if (rec->thrower) {
      thrown_.fetch_add(1, std::memory_order::relaxed);  // read after the service is quiet
      throw std::runtime_error(fmt::format("thrower task #{} throws by design", rec->id));
    }
  }

  // A one-shot task ran and a cancel of it won (in either order). Requires rec.mu.
  void fired_after_cancel(const Rec& rec) {
    ctx_.violation(Oracle::kFiredAfterCancel,
                   fmt::format("one-shot task #{} of {}: {} won cancel (returned true at {}), yet "
                               "the task ran at {} (deadline {})",
                               rec.id, rec.owner->name, canceller_of(rec),
                               ctx_.at(rec.cancel_returned - base_),
                               ctx_.at(rec.first_start - base_),
                               ctx_.at(rec.first_deadline - base_)));
  }
  // A periodic task started a second run after a cancel of it won. Requires rec.mu.
  void periodic_after_cancel(const Rec& rec) {
    ctx_.violation(Oracle::kFiredAfterCancel,
                   fmt::format("periodic task #{} of {}: {} won cancel at {}, yet 2 runs started "
                               "after it (at most the one in flight may finish)",
                               rec.id, rec.owner->name, canceller_of(rec),
                               ctx_.at(rec.cancel_returned - base_)));
  }
  static std::string canceller_of(const Rec& rec) {
    if (rec.canceller == nullptr) return "nobody";
    return *rec.canceller + (rec.via_service ? " (service.cancel)" : " (task->cancel)");
  }

  // FIFO among equal deadlines, on exact strategies (strategy.h: "equal deadlines
  // fire FIFO"): a one-shot task aligned by schedule_at must not run after a task
  // of the same scheduler with the same deadline that was scheduled later. Each
  // (scheduler, deadline) group keeps its unresolved count and its highest id run;
  // a group with nothing unresolved is dropped (a task scheduled later has a higher
  // id than any that ran, so it cannot be out of order against them). Reported
  // under the runner key "fifo_order", once per task that ran late.
  void check_fifo_tie(const Rec& rec, std::int64_t start) {
    std::lock_guard lk(fifo_mu_);
    auto it = fifo_.find({rec.owner, rec.first_deadline});
    if (it == fifo_.end()) return;
    FifoGroup& g = it->second;
    if (g.ran_id > rec.id) {
      ctx_.violation_named(
          "fifo_order",
          fmt::format("{}: tasks #{} and #{} share the deadline {} and were scheduled in that "
                      "order, but #{} ran first (#{} at {})",
                      rec.owner->name, rec.id, g.ran_id, ctx_.at(rec.first_deadline - base_),
                      g.ran_id, rec.id, ctx_.at(start - base_)));
    }
    g.ran_id = std::max(g.ran_id, rec.id);
  }

  // The task is resolved: its FIFO group forgets it and the live list drops it.
  void retire(Rec& rec) {
    if (rec.aligned) {
      std::lock_guard lk(fifo_mu_);
      auto it = fifo_.find({rec.owner, rec.first_deadline});
      if (it != fifo_.end() && --it->second.unresolved == 0) fifo_.erase(it);
    }
    std::lock_guard lk(recs_mu_);
    Live& last = live_recs_.back();
    last.rec->live_at = rec.live_at;
    std::swap(live_recs_[rec.live_at], last);
    live_recs_.pop_back();
  }

  Live new_rec(const ActorRun& r, bool thrower) {
    auto rec = std::make_shared<Rec>();
    rec->owner = r.st;
    rec->thrower = thrower;
    TimerTaskPtr<P> task = TimerTask<P>::make([this, rec] { on_fire(rec.get()); });
    rec->task = task.get();
    std::lock_guard lk(recs_mu_);
    rec->id = ++next_id_;
    rec->live_at = live_recs_.size();
    live_recs_.push_back({rec, task});
    return {rec, task};
  }

  // One scheduler or thrower operation. Returns false if nothing was scheduled.
  bool schedule_one(ActorRun& r, std::mt19937_64& rng, ActorLog& log) {
    const Actor& a = *r.spec;
    const bool thrower = a.role == Role::kThrower;
    const std::int64_t d_us = a.delay_us->sample(rng);
    const Live held = new_rec(r, thrower);
    Rec& rec = *held.rec;
    const TimerTaskPtr<P>& task = held.task;
    const Duration d = Duration::microseconds(d_us);
    const std::int64_t t0 = now();
    rec.first_deadline = (Instant::from_ns(t0) + d).ns();
    const ScheduleMode mode = thrower ? ScheduleMode::kOnce : a.mode;
    r.st->set(Phase::kWorking, rec.id);
    try {
      if (mode == ScheduleMode::kOnce) {
        rec.kind = TaskKind::kOnce;
        if (rec.id % 2 == 0) {
          service_->schedule(task, d);
        } else {
          // Aligned up to the engine tick, as code that batches timeouts does, so
          // timers of one scheduler share deadlines (expiry storms, FIFO ties).
          Instant at = deadline_after<P>(Instant::from_ns(t0), checked_delay(d, "scheduler"));
          const std::int64_t tick = s_.engine.tick_us * 1000;
          if (at.ns() < Instant::max().ns() - tick)
            at = Instant::from_ns((at.ns() + tick - 1) / tick * tick);
          rec.first_deadline = std::max(rec.first_deadline, at.ns());
          if (check_fifo_) {
            rec.aligned = true;
            std::lock_guard lk(fifo_mu_);
            ++fifo_[{rec.owner, rec.first_deadline}].unresolved;
          }
          service_->schedule_at(task, at);
        }
      } else {
        const Duration period = Duration::microseconds(a.period_us->sample(rng));
        rec.period = period.ns();
        std::int64_t m = max_period_.load(std::memory_order::relaxed);  // a plain maximum
        while (m < rec.period && !max_period_.compare_exchange_weak(m, rec.period)) {
        }
        if (mode == ScheduleMode::kFixedDelay) {
          rec.kind = TaskKind::kFixedDelay;
          service_->schedule_fixed_delay(task, d, period);
        } else {
          rec.kind = TaskKind::kFixedRate;
          service_->schedule_at_fixed_rate(task, d, period);
        }
      }
    } catch (const std::invalid_argument& e) {
      if (d_us < 0) {
        ctx_.add("rejected_negative_delays");
        task->cancel();
        {
          std::lock_guard lk(rec.mu);
          rec.resolved = true;  // never armed: counted nowhere
        }
        retire(rec);
        return false;
      }
      throw;
    }
    log.sample(Latency::kScheduleCost, now() - t0);
    if (d_us < 0) {
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("{}: schedule of task #{} with delay {} us was accepted at {}; a "
                                 "negative delay must throw std::invalid_argument",
                                 r.st->name, rec.id, d_us, ctx_.at(t0 - base_)));
    }
    ctx_.add(thrower ? "thrower_tasks" : "scheduled");
    armed_.fetch_add(1, std::memory_order::relaxed);
    live_.fetch_add(1, std::memory_order::relaxed);
    if (!thrower && a.cancel_probability > 0 &&
        std::bernoulli_distribution(a.cancel_probability)(rng)) {
      cancel_task(rec, task, r.st->name, log, (rec.id / 2) % 2 == 0);
    }
    return true;
  }

  void cancel_task(Rec& rec, const TimerTaskPtr<P>& task, const std::string& who, ActorLog& log,
                   bool via_service) {
    const std::int64_t t0 = now();
    const bool won = via_service ? service_->cancel(task) : task->cancel();
    const std::int64_t t1 = now();
    log.sample(Latency::kCancelCost, t1 - t0);
    if (!won) return;
    if (rec.kind == TaskKind::kOnce) live_.fetch_sub(1, std::memory_order::relaxed);
    // task->cancel() leaves its entry (and so the task and this record) queued as a
    // tombstone until its deadline: with far deadlines they would pile up in
    // proportion to the operations. Every run.max_pending lazy cancels, the runner
    // purges them (TimerService::purge, Java's Timer.purge()), so at most
    // max_pending tombstones and max_pending live tasks are queued at once.
    if (!via_service && lazy_cancels_.fetch_add(1, std::memory_order::relaxed) + 1 >=
                            s_.run.max_pending) {
      lazy_cancels_.store(0, std::memory_order::relaxed);  // a count, orders nothing
      service_->purge();
      ctx_.add("runner_purges");
    }
    bool first_resolution;
    {
      std::lock_guard lk(rec.mu);
      rec.cancel_won = true;
      rec.cancel_returned = t1;
      rec.canceller = &who;
      rec.via_service = via_service;
      if (rec.kind == TaskKind::kOnce && rec.fires > 0) fired_after_cancel(rec);
      if (rec.kind != TaskKind::kOnce) {
        // Runs that started after t1 but took rec.mu before this win was written.
        for (std::int64_t st : rec.last_starts) rec.runs_after_cancel += st > t1;
        rec.runs_after_cancel = std::min<std::uint64_t>(rec.runs_after_cancel, rec.fires);
        if (rec.runs_after_cancel >= 2) periodic_after_cancel(rec);
      }
      first_resolution = !rec.resolved;
      rec.resolved = true;
    }
    if (first_resolution) {
      cancelled_.fetch_add(1, std::memory_order::relaxed);
      retire(rec);
    }
  }

  // ---- actors on threads (steady clock) ------------------------------------------

  void waiter_loop(ActorRun& r, std::mt19937_64& rng) {
    Slot& slot = slots_[r.slot];
    ActorLog& log = ctx_.log_of(*r.st);
    std::uint64_t seq = 0;
    while (ctx_.take_op(r.quota)) {
      const std::int64_t d_us = r.spec->timeout_us->sample(rng);
      const Duration d = Duration::microseconds(d_us);
      const std::int64_t armed = now();
      const std::int64_t deadline = (Instant::from_ns(armed) + d).ns();
      ++seq;
      r.st->deadline_ns.store(steady_ns() + d.ns(), std::memory_order::relaxed);
      const TimeoutResult res = slot.waiter.timeout(*service_, d, [&](Token t) {
        std::lock_guard lk(slot.mu);
        slot.token = t;
        slot.seq = seq;
        slot.live = true;
        r.st->set(Phase::kParked, t.raw());
      });
      const std::int64_t back = now();
      r.st->deadline_ns.store(0, std::memory_order::relaxed);
      r.st->set(Phase::kWorking);
      r.st->ops.fetch_add(1, std::memory_order::relaxed);
      std::uint32_t tok;
      {
        std::lock_guard lk(slot.mu);
        slot.live = false;
        tok = slot.token.raw();
      }
      ledger_->record(r.slot, {seq, tok, armed, back, res});
      if (res == TimeoutResult::kExpired) {
        log.sample(Latency::kFireLateness, back - deadline);
        if (back < deadline) {
          ctx_.violation(
              Oracle::kEarlyFire,
              fmt::format("{}: arming {} (token 0x{:x}, timeout {} us) returned EXPIRED at "
                          "{}, {} before its deadline {}",
                          r.st->name, seq, tok, d_us, ctx_.at(back - base_),
                          fmt_ns(deadline - back), ctx_.at(deadline - base_)));
        }
      }
    }
  }

  void canceller_loop(ActorRun& r, std::mt19937_64& rng) {
    ActorLog& log = ctx_.log_of(*r.st);
    std::uint64_t parked_hits = 0;
    while (!producers_done_.load(std::memory_order::acquire) && !ctx_.stopping()) {
      const std::int64_t delay = r.spec->delay_us->sample(rng);
      if (slots_.empty()) {
        const Live target = pick_live(rng);
        sleep_us(ctx_, delay);
        if (target.rec != nullptr && target.task->state() == TaskState::kScheduled) {
          cancel_task(*target.rec, target.task, r.st->name, log, true);
          r.st->ops.fetch_add(1, std::memory_order::relaxed);
        }
        continue;
      }
      const std::size_t i = std::uniform_int_distribution<std::size_t>(0, slots_.size() - 1)(rng);
      Slot& slot = slots_[i];
      Token t;
      std::uint64_t seq;
      {
        std::lock_guard lk(slot.mu);
        if (!slot.live) {
          t = Token{};
          seq = 0;
        } else {
          t = slot.token;
          seq = slot.seq;
        }
      }
      if (seq == 0) {
        std::this_thread::yield();
        continue;
      }
      r.st->set(Phase::kSleeping, t.raw());
      sleep_us(ctx_, delay);
      r.st->set(Phase::kWorking, t.raw());
      // Whether the target is already parked (Waiter::parked(), a snapshot): the
      // counter says how often cancels hit a parked waiter rather than one still
      // arming; it is also the read that mutant data_race_plain_flag makes racy.
      parked_hits += slot.waiter.parked();
      const std::int64_t t0 = ledger_->begin_cancel(r.resolver, [this] { return now(); });
      const bool won = slot.waiter.cancel(t);
      const std::int64_t t1 = now();
      const ArmingLedger::Win w{i, seq, t.raw(), t0, t1, &r.st->name};
      ledger_->end_cancel(r.resolver, won ? &w : nullptr);
      log.sample(Latency::kCancelCost, t1 - t0);
      r.st->ops.fetch_add(1, std::memory_order::relaxed);
    }
    ctx_.add("cancels_on_parked_waiters", parked_hits);
  }

  void producer_loop(ActorRun& r, std::mt19937_64& rng) {
    ActorLog& log = ctx_.log_of(*r.st);
    while (ctx_.take_op(r.quota)) {
      while (live_.load(std::memory_order::relaxed) >= s_.run.max_pending && !ctx_.stopping()) {
        r.st->set(Phase::kWaiting);
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      schedule_one(r, rng, log);
      r.st->ops.fetch_add(1, std::memory_order::relaxed);
    }
  }

  // The watchdog's rescue: cancel the parked waiter's current token (the canceller
  // "watchdog" wins, so the arming is accounted for).
  void rescue(std::size_t actor_index) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (&ctx_.actors()[actor_index] != slots_[i].st) continue;
      Token t;
      std::uint64_t seq;
      {
        std::lock_guard lk(slots_[i].mu);
        if (!slots_[i].live) return;
        t = slots_[i].token;
        seq = slots_[i].seq;
      }
      static const std::string kWatchdog = "watchdog";
      const std::size_t me = ledger_->watchdog();
      const std::int64_t t0 = ledger_->begin_cancel(me, [this] { return now(); });
      const bool won = slots_[i].waiter.cancel(t);
      const ArmingLedger::Win w{i, seq, t.raw(), t0, now(), &kWatchdog};
      ledger_->end_cancel(me, won ? &w : nullptr);
    }
  }

  void run_threads() {
    std::vector<std::thread> producers, cancellers;
    for (ActorRun& r : runs_) {
      auto body = [this, &r] {
        stress::seed_thread(ctx_.thread_seed(r.index));
        std::mt19937_64 rng = ctx_.rng_for(r.index);
        switch (r.spec->role) {
          case Role::kWaiter:
            waiter_loop(r, rng);
            break;
          case Role::kCanceller:
            canceller_loop(r, rng);
            break;
          default:
            producer_loop(r, rng);
            break;
        }
        r.st->set(Phase::kDone);
      };
      (r.spec->role == Role::kCanceller ? cancellers : producers).emplace_back(body);
    }
    for (std::thread& t : producers) t.join();
    producers_done_.store(true, std::memory_order::release);  // pairs with canceller_loop
    for (std::thread& t : cancellers) t.join();
  }

  // ---- one thread on virtual time ------------------------------------------------

  void run_virtual() {
    const std::int64_t tick = s_.engine.tick_us * 1000;
    std::vector<std::mt19937_64> rngs;
    for (ActorRun& r : runs_) rngs.push_back(ctx_.rng_for(r.index));
    stress::seed_thread(ctx_.thread_seed(runs_.size()));
    std::mt19937_64 order = ctx_.rng_for(runs_.size() + 1);
    std::vector<std::size_t> idx(runs_.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    bool producing = true;
    while (producing && !ctx_.stopping()) {
      std::shuffle(idx.begin(), idx.end(), order);
      producing = false;
      for (std::size_t i : idx) {
        ActorRun& r = runs_[i];
        ActorLog& log = ctx_.log_of(*r.st);
        if (r.spec->role == Role::kCanceller) {
          if (r.next_virtual == 0)
            r.next_virtual = now() + r.spec->delay_us->sample(rngs[i]) * 1000;
          if (now() < r.next_virtual) continue;
          const Live target = pick_live(rngs[i]);
          if (target.rec == nullptr) continue;
          if (target.task->state() == TaskState::kScheduled)
            cancel_task(*target.rec, target.task, r.st->name, log, true);
          r.next_virtual = 0;
          continue;
        }
        if (live_.load(std::memory_order::relaxed) >= s_.run.max_pending) {
          producing = true;
          continue;
        }
        if (!ctx_.take_op(r.quota)) continue;
        producing = true;
        schedule_one(r, rngs[i], log);
        r.st->ops.fetch_add(1, std::memory_order::relaxed);
      }
      clock_.advance(Duration::nanoseconds(tick));
      service_->run_due(clock_.now());
    }
  }

  // ---- the end of the case ---------------------------------------------------------

  std::int64_t max_period() const { return max_period_.load(std::memory_order::relaxed); }

  // A random live task (null rec when none is live).
  Live pick_live(std::mt19937_64& rng) {
    std::lock_guard lk(recs_mu_);
    if (live_recs_.empty()) return {};
    return live_recs_[std::uniform_int_distribution<std::size_t>(0, live_recs_.size() - 1)(rng)];
  }

  // Whether some live one-shot task is due by `target` (unresolved: live).
  bool one_shot_due_by(std::int64_t target) {
    std::lock_guard lk(recs_mu_);
    for (const Live& l : live_recs_) {
      if (l.rec->kind == TaskKind::kOnce && l.rec->first_deadline <= target) return true;
    }
    return false;
  }

  // Lets the timer run until every one-shot task due by `target` is settled, or
  // until `drain_ns` after target. Steady: poll; virtual: advance and run_due.
  void drain(std::int64_t target, std::int64_t drain_ns) {
    const std::int64_t until = target + drain_ns;
    timer_actor_->set(Phase::kWaiting);
    for (;;) {
      const bool settled = !one_shot_due_by(target);
      const bool periodic_left = max_period() > 0 && now() < until;
      if ((settled && !periodic_left) || now() >= until || ctx_.stopping()) return;
      if constexpr (kVirtual) {
        clock_.advance(Duration::microseconds(s_.engine.tick_us));
        service_->run_due(clock_.now());
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  void drain_and_check() {
    const std::int64_t horizon = now();
    // The target: the latest one-shot deadline still open, but at most 1 s and a
    // third of the budget away (further tasks are pending at the end, not lost).
    // Then a grace of 50 ms or 20 ticks, and 30 periods for periodic tasks so that
    // drift has runs to show in.
    const std::int64_t budget_third = static_cast<std::int64_t>(ctx_.spec().budget_s * 1e9 / 3);
    std::int64_t last = horizon;
    {
      std::lock_guard lk(recs_mu_);
      for (const Live& l : live_recs_) {
        if (l.rec->kind == TaskKind::kOnce) last = std::max(last, l.rec->first_deadline);
      }
    }
    const std::int64_t target = std::min({last, horizon + 1'000'000'000, horizon + budget_third});
    const std::int64_t drain_ns = std::max(
        std::int64_t{0}, std::min(budget_third - (target - horizon),
                                  std::max({std::int64_t{50'000'000}, 20 * s_.engine.tick_us * 1000,
                                            30 * max_period()})));
    drain(target, drain_ns);

    // A dead timer thread: a probe due now must run promptly.
    if (!ctx_.stopping()) probe_timer_thread();

    const TimerServiceStats before = service_->stats();
    shutdown_bounded();
    check_tasks(target, before);
    check_waiters();
    ctx_.set_counter("service_tasks_run", before.tasks_run);
    ctx_.set_counter("service_exceptions", before.exceptions);
    ctx_.set_counter("service_cancelled", before.cancelled);
    ctx_.set_counter("service_skipped_cancelled", before.skipped_cancelled);
  }

  void probe_timer_thread() {
    std::atomic<bool> ran{false};
    auto probe = TimerTask<P>::make([&ran] { ran.store(true, std::memory_order::release); });
    const std::int64_t t0 = now();
    try {
      service_->schedule(probe, Duration::zero());
    } catch (const std::logic_error& e) {
      ctx_.violation(
          Oracle::kTaskExceptions,
          fmt::format("the service refused a probe task at {}: {}", ctx_.at(t0 - base_), e.what()));
      return;
    }
    const std::int64_t limit = steady_ns() + 200'000'000 + lost_wakeup_grace_ns(s_) / 4;
    while (!ran.load(std::memory_order::acquire)) {  // pairs with the probe's store
      if constexpr (kVirtual) {
        service_->run_due(clock_.now());
        if (!ran.load(std::memory_order::acquire)) break;
      } else {
        if (steady_ns() > limit || ctx_.stopping()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    if (!ran.load(std::memory_order::acquire)) {
      ctx_.violation(
          Oracle::kTaskExceptions,
          fmt::format("timer thread dead: a probe task due at {} did not run within {}; the "
                      "service's last error: '{}'",
                      ctx_.at(t0 - base_), fmt_ns(limit - steady_ns() + 200'000'000),
                      service_->last_error()));
      service_->cancel(probe);
    }
  }

  void shutdown_bounded() {
    if constexpr (kVirtual) {
      service_->shutdown_now();
      return;
    } else {
      auto done = std::make_shared<std::atomic<bool>>(false);
      const std::int64_t t0 = steady_ns();
      std::thread t([this, done] {
        service_->shutdown_now();
        done->store(true, std::memory_order::release);  // pairs with the load below
      });
      const std::int64_t limit = t0 + 1'000'000'000 + lost_wakeup_grace_ns(s_) / 2;
      while (!done->load(std::memory_order::acquire) && steady_ns() < limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (done->load(std::memory_order::acquire)) {
        t.join();
        return;
      }
      t.detach();
      ctx_.violation(
          Oracle::kLostWakeup,
          fmt::format("timer thread: shutdown_now() called at {} has not returned after {}: "
                      "the sleeping timer thread was never woken",
                      ctx_.at(t0 - steady_base_), fmt_ns(steady_ns() - t0)));
      emit_and_exit(ctx_, std::nullopt,
                    "engine timer_service: the timer thread could not be stopped; the case process "
                    "exits without joining it");
    }
  }

  // Resolved tasks were judged as they resolved (on_fire, cancel_task); what is
  // left is the live list: pending tasks, and one-shot tasks lost before `horizon`.
  void check_tasks(std::int64_t horizon, const TimerServiceStats& st) {
    std::uint64_t open = 0;
    {
      std::lock_guard lk(recs_mu_);
      for (const Live& l : live_recs_) {
        ++open;
        if (l.rec->kind == TaskKind::kOnce && l.rec->first_deadline <= horizon) lost(*l.rec, horizon);
      }
    }
    const std::uint64_t armed = armed_.load(), fired = fired_.load(),
                        cancelled = cancelled_.load();
    ctx_.set_counter("armed", armed);
    ctx_.set_counter("fired", fired);
    ctx_.set_counter("cancelled", cancelled);
    // Tombstones (task->cancel() leaves the entry queued) are not pending work.
    const std::uint64_t pending = st.pending - std::min(st.pending, st.tombstones);
    ctx_.set_counter("pending", pending);
    // Every task the runner armed and the service did not settle must be pending
    // in it, and vice versa (thrower tasks that ran are settled too).
    if (!ctx_.stopping() && armed != fired + cancelled + pending) {
      ctx_.violation(
          Oracle::kConservation,
          fmt::format("armed {} != fired {} + cancelled {} + pending {} (the service reports "
                      "{} pending; the runner counts {} unsettled)",
                      armed, fired, cancelled, pending, pending, open));
    }
    const std::uint64_t thrown = thrown_.load(std::memory_order::relaxed);
    if (st.exceptions != thrown) {
      ctx_.violation(Oracle::kTaskExceptions,
                     fmt::format("{} thrower tasks threw but the service counted {} exceptions",
                                 thrown, st.exceptions));
    }
  }

  void lost(const Rec& r, std::int64_t horizon) {
    ctx_.violation(
        Oracle::kLostTimer,
        fmt::format("task #{} of {} (deadline {}) neither ran nor was cancelled by {} (drain "
                    "horizon {})",
                    r.id, r.owner->name, ctx_.at(r.first_deadline - base_), ctx_.at(now() - base_),
                    ctx_.at(horizon - base_)));
  }

  void check_waiters() {
    ledger_->finish();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      Slot& slot = slots_[i];
      const auto c = slot.waiter.counters();
      if (c.double_resumes + c.stale_wakeups > 0) {
        ctx_.violation(
            Oracle::kDoubleResume,
            fmt::format("{}: the Waiter counted {} double resumes and {} stale wakeups over {} "
                        "armings (a resolver that lost, or a stale token, resumed it)",
                        slot.st->name, c.double_resumes, c.stale_wakeups, c.armings));
      }
      const std::uint64_t seen = ledger_->armings(i);
      if (c.armings != seen || c.cancels + c.expiries != c.resumes ||
          (c.double_resumes == 0 && c.resumes != c.armings)) {
        ctx_.violation(Oracle::kConservation,
                       fmt::format("{}: armings {} (runner saw {}) != cancels {} + expiries {}",
                                   slot.st->name, c.armings, seen, c.cancels, c.expiries));
      }
    }
    std::uint64_t armings = 0, cancels = 0, expiries = 0;
    for (Slot& slot : slots_) {
      const auto c = slot.waiter.counters();
      armings += c.armings;
      cancels += c.cancels;
      expiries += c.expiries;
    }
    if (!slots_.empty()) {
      ctx_.set_counter("waiter_armings", armings);
      ctx_.set_counter("waiter_cancels", cancels);
      ctx_.set_counter("waiter_expiries", expiries);
      ctx_.set_counter("watchdog_rescues", ledger_->rescues());
    }
  }

  CaseContext& ctx_;
  const Scenario& s_;
  typename P::Clock clock_{};
  std::unique_ptr<Service> service_;
  ActorState* timer_actor_ = nullptr;
  ActorLog* timer_log_ = nullptr;  // the timer thread's (or driver's) samples
  std::deque<Slot> slots_;
  std::deque<ActorRun> runs_;
  std::mutex recs_mu_;
  std::vector<Live> live_recs_;  // recs_mu_: unresolved tasks (TaskRec says when one leaves)
  std::uint64_t next_id_ = 0;    // recs_mu_
  std::atomic<std::uint64_t> armed_{0}, fired_{0}, cancelled_{0};
  std::atomic<std::int64_t> max_period_{0};
  std::atomic<std::uint64_t> lazy_cancels_{0};  // task->cancel() wins since the last purge
  // FIFO ties are checked on exact strategies only (strategy.h).
  const bool check_fifo_ = [this] {
    const auto strategy = strategy_from_name(ctx_.spec().strategy);
    return strategy && kStrategyInfo[static_cast<std::size_t>(*strategy)].exact;
  }();
  std::mutex fifo_mu_;
  std::map<std::pair<const ActorState*, std::int64_t>, FifoGroup> fifo_;  // fifo_mu_
  std::unique_ptr<ArmingLedger> ledger_;  // built by build_actors
  std::atomic<std::uint64_t> live_{0};
  std::atomic<std::uint64_t> thrown_{0};
  std::atomic<bool> producers_done_{false};
  const std::int64_t steady_base_ = steady_ns() - ctx_.elapsed_ns();
  // Subtracted from engine-clock instants before ctx_.at(): makes them case-relative.
  const std::int64_t base_ = kVirtual ? kVirtualEpochNs - steady_base_ : 0;
};

template <class P, unsigned Bits>
void run_on_strategy(CaseContext& ctx) {
  const auto strategy = strategy_from_name(ctx.spec().strategy);
  if (!strategy) throw std::invalid_argument("unknown strategy " + ctx.spec().strategy);
  with_queue_type<TimerTaskPtr<P>, P>(*strategy, [&]<class Q>() {
    ServiceCase<Q, P, Bits> c(ctx);
    c.run();
  });
}

}  // namespace

void run_service_engine(CaseContext& ctx) {
  const Scenario& s = ctx.scenario();
  if (s.engine.clock == ClockKind::kVirtual) {
    run_on_strategy<ManualStressPlatform, 32>(ctx);
    return;
  }
  with_token_bits(s.engine.token_bits,
                  [&]<unsigned B>() { run_on_strategy<StressPlatform, B>(ctx); });
}

}  // namespace tlab::tool::runner
