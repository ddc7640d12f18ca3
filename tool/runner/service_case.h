// tlab/tool/runner/service_case.h: the kService engine's case (engines.h):
// waiters, schedulers, throwers and cancellers against one TimerService<Q, P>.
// The engine runs it on real threads (engine_service.cc), on one thread with a
// manual clock (clock: virtual), or under deterministic simulation
// (engine_service_sim.cc, P = SimPlatform: every actor and the timer thread are
// tasks of one seeded scheduler and every wait is on virtual time).
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
//              (callback_* probabilities: each task's callback acts from inside
//              its run: service_scripts.h)
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
//                     resolve with ITS token (a stale token won: the ABA of RFC 0014)
//   early_fire        an arming EXPIRED before its deadline on the engine's clock
//   lost_wakeup       a waiter parked a grace past its deadline (the watchdog:
//                     stress_runner.cc, or sim_watchdog on virtual time); a
//                     shutdown_now() that did not return, or under simulation
//                     returned only at the timer thread's own deadline; a
//                     simulated run in which every task blocked (sim_run.h)
//   conservation      the Waiter's armings against the ledger's
//   the task oracles  (early_fire, fired_after_cancel, lost_timer, fifo_order,
//                     task_exceptions, conservation of tasks): service_tasks.h
// Latency: fire_lateness (run start - deadline; fixed-rate against the ideal
// schedule first + k * period, so drift shows), cancel_to_resume (a winning
// cancel to its waiter's return), schedule_cost, cancel_cost.
//
// Cost: the actors' operations plus O(1) bookkeeping each (TaskBook, the arming
// ledger); memory O(live tasks + cancels in flight). Ground rules: run() on the
// case child's main thread, or under simulation on the driver task (run_in_sim);
// it starts and joins every actor. The engine's own locks are std::mutex held
// only around plain code, never across a Platform operation (a simulated run
// would hang). Memory ordering: producers_done_ is a release/acquire pair between
// the driver and the cancellers; the counters are relaxed (read after joins).
//
// The end of the case (drain, probe, shutdown, final checks) is defined in
// service_case_end.h, which includes this header: include that one.
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "base/stall_clock.h"
#include "runner/arming_ledger.h"
#include "runner/engines.h"
#include "runner/service_tasks.h"
#include "runner/service_scripts.h"
#include "runner/sim_run.h"
#include "tlab/platform/platform.h"
#include "tlab/platform/sim_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"
#include "tlab/waiter.h"

namespace tlab::tool::runner {

// Where a virtual clock starts: 2^62 ns, so that a huge delay crosses INT64_MAX.
// A simulated case starts there too (its scheduler's epoch).
inline constexpr std::int64_t kVirtualEpochNs = std::int64_t{1} << 62;

template <class Q, class P, unsigned Bits>
class ServiceCase {
 public:
  using Service = TimerService<Q, P>;
  using W = Waiter<P, Bits>;
  using Token = typename W::Token;
  using Book = TaskBook<Q, P>;
  using Live = typename Book::Live;
  // kVirtual: one thread on a manual clock (run_virtual); kSim: every actor and the
  // timer thread are tasks of a deterministic simulation (sim_platform.h), so every
  // wait below is on virtual time; otherwise real threads on the steady clock.
  static constexpr bool kVirtual = P::Clock::kVirtual;
  static constexpr bool kSim = std::is_same_v<P, SimPlatform>;

  explicit ServiceCase(CaseContext& ctx) : ctx_(ctx), s_(ctx.scenario()) {}

  void run() {
    if constexpr (kVirtual) {
      clock_.set(Instant::from_ns(kVirtualEpochNs));
    }
    TimerServiceOptions opts;
    opts.start_thread = !kVirtual;
    opts.queue = queue_config_of(s_);
    opts.max_pending = s_.engine.max_pending;
    service_ = std::make_unique<Service>(clock_, opts);
    timer_actor_ = &ctx_.add_actor(kVirtual ? "driver#0" : "timer_thread#0");
    tasks_ = std::make_unique<Book>(ctx_, *service_, clock_, ctx_.log_of(*timer_actor_), base_);
    build_actors();
    if constexpr (kVirtual) {
      ctx_.actors_ready();
      run_virtual();
    } else {
      // Under simulation the watchdog is a task on virtual time (sim_watchdog); the
      // monitor thread's rescue would call into the simulation from outside it.
      if constexpr (!kSim) set_rescue_hook([this](std::size_t i) { rescue(i); });
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
    std::int64_t deadline = 0;  // engine clock ns of the live arming (sim_watchdog)
    bool live = false;
    W waiter;
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
      if constexpr (!kSim) r.st->deadline_ns.store(steady_ns() + d.ns(), std::memory_order::relaxed);
      const TimeoutResult res = slot.waiter.timeout(*service_, d, [&](Token t) {
        std::lock_guard lk(slot.mu);
        slot.token = t;
        slot.seq = seq;
        slot.deadline = deadline;
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
        const Live target = tasks_->pick_live(rng);
        pause_us(delay);
        if (target.rec != nullptr && target.task->state() == TaskState::kScheduled) {
          tasks_->cancel_task(*target.rec, target.task, r.st->name, log, true);
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
        P::yield();
        continue;
      }
      r.st->set(Phase::kSleeping, t.raw());
      pause_us(delay);
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
      while (at_cap() && !ctx_.stopping()) {
        r.st->set(Phase::kWaiting);
        pause_us(100);
      }
      tasks_->schedule_one(*r.spec, *r.st, rng, log);
      r.st->ops.fetch_add(1, std::memory_order::relaxed);
    }
  }

  // run.max_pending: a producer waits while that many tasks are live, for a run or a
  // cancel to resolve one. A periodic series resolves only by a cancel, so with no
  // canceller it would wait forever once series fill the cap: the cap then counts
  // only the one-shot tasks' share, and the wait ends when none is left to run.
  bool at_cap() const {
    if (tasks_->live() < s_.run.max_pending) return false;
    return has_canceller_ || tasks_->live() > tasks_->live_series();
  }

  // The watchdog's rescue: cancel the parked waiter's current token (the canceller
  // "watchdog" wins, so the arming is accounted for).
  void rescue(std::size_t actor_index) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (&ctx_.actors()[actor_index] == slots_[i].st) rescue_slot(i);
    }
  }
  void rescue_slot(std::size_t i) {
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

  // pause_us: an actor's pause (a canceller's delay, a producer's back-off, the
  // drain's poll): real sleep, or under simulation a timed block on virtual time.
  void pause_us(std::int64_t us) {
    if constexpr (kSim) {
      sim_sleep_us(us);
    } else {
      sleep_us(ctx_, us);
    }
  }
  // wall_ns: the clock the end-of-case limits are measured on (virtual under
  // simulation, where a limit must not depend on how fast the host is).
  std::int64_t wall_ns() const {
    if constexpr (kSim) return now();
    return steady_ns();
  }
  // waited_ns: how long the case has given the engine since `since` (the engine's
  // clock, which on real threads is the steady clock): on real threads the stall
  // clock's effective time (stall_clock.h), so a limit counts only time the threads
  // could run; elapsed time on a virtual or simulated clock.
  std::int64_t waited_ns(std::int64_t since) const {
    if constexpr (kSim || kVirtual) {
      return now() - since;
    } else {
      return stall_clock().effective_ns(since, wall_ns());
    }
  }

  // The watchdog under simulation: every half grace of virtual time, a waiter still
  // parked a grace past its deadline is a lost wakeup (as monitor_loop says on real
  // threads) and is rescued. It stops with the producers.
  void sim_watchdog() {
    const std::int64_t grace = lost_wakeup_grace_ns(s_);
    std::vector<std::uint64_t> reported(slots_.size(), 0);
    while (!producers_done_.load(std::memory_order::acquire)) {
      pause_us(grace / 2000);
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        Slot& slot = slots_[i];
        std::int64_t deadline;
        std::uint64_t seq;
        {
          std::lock_guard lk(slot.mu);
          if (!slot.live || reported[i] == slot.seq) continue;
          deadline = slot.deadline;
          seq = slot.seq;
        }
        if (now() - deadline < grace) continue;
        reported[i] = seq;
        ctx_.violation(Oracle::kLostWakeup,
                       fmt::format("{}: arming {} parked past its deadline {}, and nobody woke it "
                                   "within {} of simulated time (the watchdog unparked it)",
                                   slot.st->name, seq, ctx_.at(deadline - base_), fmt_ns(grace)));
        rescue_slot(i);
      }
    }
  }

  void run_threads() {
    std::vector<ThreadOf<P>> producers, cancellers;
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
      (r.spec->role == Role::kCanceller ? cancellers : producers)
          .push_back(spawn_thread<P>(body));
    }
    if constexpr (kSim) {
      if (!slots_.empty()) cancellers.push_back(spawn_thread<P>([this] { sim_watchdog(); }));
    }
    for (auto& t : producers) t.join();
    producers_done_.store(true, std::memory_order::release);  // pairs with canceller_loop
    for (auto& t : cancellers) t.join();
  }

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
          const Live target = tasks_->pick_live(rngs[i]);
          if (target.rec == nullptr) continue;
          if (target.task->state() == TaskState::kScheduled)
            tasks_->cancel_task(*target.rec, target.task, r.st->name, log, true);
          r.next_virtual = 0;
          continue;
        }
        if (at_cap()) {
          producing = true;
          continue;
        }
        if (!ctx_.take_op(r.quota)) continue;
        producing = true;
        tasks_->schedule_one(*r.spec, *r.st, rngs[i], log);
        r.st->ops.fetch_add(1, std::memory_order::relaxed);
      }
      clock_.advance(Duration::nanoseconds(tick));
      run_pass();
    }
  }

  // One run_due() pass of the virtual driver, counted for the callback scripts'
  // same-pass rules (service_scripts.h).
  void run_pass() {
    tasks_->begin_pass(now());
    service_->run_due(clock_.now());
  }

  // The end of the case, defined in service_case_end.h.
  // drain: until `drain_ns` after target. Steady: poll; virtual: advance and run_due;
  // until every one-shot due by `target` has settled, or drain_ns past the
  // target (on real threads counted on the stall clock: a timer thread starved of
  // CPU is given the time it lost), and periodic tasks have had drain_ns to run.
  void drain(std::int64_t target, std::int64_t drain_ns);
  // drain_and_check: the drain, the probe, the shutdown and every final check.
  void drain_and_check();
  // probe_timer_thread: a task due now must run promptly (a dead timer thread).
  void probe_timer_thread();
  // shutdown_bounded: shutdown_now(), bounded on real threads and under simulation.
  void shutdown_bounded();
  // check_waiters: the Waiters' own counters against the arming ledger.
  void check_waiters();

  CaseContext& ctx_;
  const Scenario& s_;
  typename P::Clock clock_{};
  std::unique_ptr<Service> service_;
  ActorState* timer_actor_ = nullptr;
  std::unique_ptr<Book> tasks_;  // built once the service exists
  std::deque<Slot> slots_;
  std::deque<ActorRun> runs_;
  std::unique_ptr<ArmingLedger> ledger_;  // built by build_actors
  std::atomic<bool> producers_done_{false};
  const bool has_canceller_ = count_of(s_, Role::kCanceller) > 0;
  // Exactly at()'s origin: a simulated case's explanations must replay bit for bit.
  const std::int64_t steady_base_ = ctx_.start_ns();
  // Subtracted from engine-clock instants before ctx_.at(): makes them case-relative.
  // Simulated time starts at the run's epoch, which is now() on construction.
  const std::int64_t base_ = kVirtual ? kVirtualEpochNs - steady_base_
                             : kSim   ? clock_.now().ns() - steady_base_
                                      : 0;
};

}  // namespace tlab::tool::runner
