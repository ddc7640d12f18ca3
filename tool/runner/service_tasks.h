// tlab/tool/runner/service_tasks.h: the kService engine's timer tasks
// (engine_service.cc): scheduling and cancelling TimerTasks on one
// TimerService<Q, P>, and the per-task records their oracles are judged from.
//
// TaskBook<Q, P> is the half of the engine that owns tasks; ServiceCase
// (service_case.h) owns the actors, the waiters and the end of the case. The
// oracles decided here (the engine's header comment lists them all):
//   double_resume      a one-shot task that ran twice
//   wrong_result       a schedule*() that accepted a negative delay
//   early_fire         a task run before its deadline on the engine's clock; a
//                      rescheduled one-shot run before its new deadline; a Skip
//                      task (fixed_rate_skip) running a tick it missed, i.e. due a
//                      whole period before its previous run started
//   fired_after_cancel a one-shot run although a cancel won; a periodic task that
//                      started two runs after its cancel won
//   fifo_order         (runner key) aligned ties of one scheduler out of order, on
//                      exact strategies
//   late_fire          (virtual clock) a one-shot run a driver pass after a pass at
//                      or past its deadline plus the allowance (check_late)
//   lost_timer         check_tasks: a one-shot due before the horizon, unsettled
//   task_exceptions    check_tasks: thrown != the service's exception count
//   conservation       check_tasks: armed = fired + cancelled + pending; with
//                      engine.max_pending, also any schedule after which the
//                      service holds more pending tasks than the cap
//
// Memory: a record lives only while its task can still change an answer (TaskRec
// says when), so records cost O(live tasks), not O(run.operations). Cost per
// operation: one record allocation and the service call; cancels take rec.mu.
// Ground rules: every method may be called from any actor or the timer thread; the
// locks (rec.mu, recs_mu_, fifo_mu_) are std::mutex held only around plain code,
// never across a Platform operation, so the same code runs under SimPlatform
// (sim_scheduler.h: a std::mutex held across a scheduling point would hang the
// simulation). Memory ordering: the counters are relaxed (read after the actors are
// joined); everything else is under the locks above.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runner/case_context.h"
#include "runner/engines.h"
#include "runner/task_rec.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"

namespace tlab::tool::runner {

template <class Q, class P>
class TaskBook {
 public:
  using Service = TimerService<Q, P>;
  using Rec = TaskRec<P>;
  struct Live {
    std::shared_ptr<Rec> rec;
    TimerTaskPtr<P> task;
  };

  // `clock` is the engine's; `timer_log` takes the timer thread's samples
  // (fire_lateness); `base` is subtracted from engine-clock instants before
  // ctx.at() (case-relative times in explanations).
  TaskBook(CaseContext& ctx, Service& service, const typename P::Clock& clock,
           ActorLog& timer_log, std::int64_t base)
      : ctx_(ctx),
        s_(ctx.scenario()),
        service_(&service),
        clock_(clock),
        timer_log_(&timer_log),
        base_(base) {}

  // Tasks armed and not yet resolved (a one-shot's first run or winning cancel, a
  // series' winning cancel): what run.max_pending bounds. Decremented exactly once
  // per task, at its first resolution, whatever a buggy service does after it.
  std::uint64_t live() const { return live_.load(std::memory_order::relaxed); }
  // Of those, the periodic series (which only a cancel resolves).
  std::uint64_t live_series() const { return live_series_.load(std::memory_order::relaxed); }

 private:
  void on_fire(Rec* rec) {
    const std::int64_t start = now();
    const std::int64_t due = rec->task->scheduled_time().ns();
    std::uint64_t k;
    bool first_resolution = false;
    {
      std::lock_guard lk(rec->mu);
      k = rec->fires++;
      if (k == 0) {
        rec->first_start = start;
        rec->first_due = due;
      } else if (rec->kind == TaskKind::kFixedRateSkip) {
        check_skip(*rec, k, due);
      }
      rec->prev_start = start;
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
      live_.fetch_sub(1, std::memory_order::relaxed);
      if (rec->aligned && check_fifo_) check_fifo_tie(*rec, start);
      retire(*rec);
    }
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
    const std::uint64_t links = k == 0 ? same_pass_links(*rec) : 0;
    if (k == 0 && rec->kind == TaskKind::kOnce) check_late(*rec, start);
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
    if (rec->script != nullptr) perform_script(*rec, links);
  }

  // late_fire on the virtual driver's passes (defined in service_scripts.h, with
  // the other pass rules).
  void check_late(const Rec& rec, std::int64_t start);

  // Callback scripts, inside the running task: defined in service_scripts.h, which
  // whoever instantiates a TaskBook includes (service_case.h).
  std::uint64_t same_pass_links(const Rec& rec);
  void perform_script(Rec& rec, std::uint64_t links);
  Live pick_sibling(const Rec& self, std::int64_t now_ns);
  void schedule_scripted(const Rec& parent, std::int64_t delay_ns, std::uint64_t links);

  // MissedTick::kSkip: run k (k >= 1) is due on the grid of run 0 and after the
  // instant the previous run was taken, which is at most its start. A run due a
  // whole period before the previous run STARTED is a missed tick that was run
  // rather than skipped (kBurst's catch-up); the period of slack keeps a run that
  // merely started late (the timer thread took it, then a fault delayed it) from
  // counting. Requires rec.mu.
  void check_skip(const Rec& rec, std::uint64_t k, std::int64_t due) {
    const bool on_grid = rec.period > 0 && (due - rec.first_due) % rec.period == 0;
    if (on_grid && due + rec.period > rec.prev_start) return;
    ctx_.violation(Oracle::kEarlyFire,
                   fmt::format("skip task #{} of {}: run {} was due at {}, {}; a MissedTick::kSkip "
                               "task runs the next tick after now, not a missed one (run {} "
                               "started at {}, period {})",
                               rec.id, rec.owner->name, k, ctx_.at(due - base_),
                               on_grid ? "a whole period before the previous run started"
                                       : "off the grid of its first run",
                               k - 1, ctx_.at(rec.prev_start - base_), fmt_ns(rec.period)));
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

  // `first_deadline` is set before the record is published in the live list: a
  // callback's re-arm creates records while the drain reads the list.
  Live new_rec(const ActorState* owner, bool thrower, std::int64_t first_deadline = 0) {
    auto rec = std::make_shared<Rec>();
    rec->owner = owner;
    rec->thrower = thrower;
    rec->first_deadline = first_deadline;
    TimerTaskPtr<P> task = TimerTask<P>::make([this, rec] { on_fire(rec.get()); });
    rec->task = task.get();
    std::lock_guard lk(recs_mu_);
    rec->id = ++next_id_;
    rec->live_at = live_recs_.size();
    live_recs_.push_back({rec, task});
    return {rec, task};
  }

 public:
  // One scheduler or thrower operation. Returns false if nothing was scheduled.
  bool schedule_one(const Actor& a, ActorState& st, std::mt19937_64& rng, ActorLog& log) {
    const bool thrower = a.role == Role::kThrower;
    const std::int64_t d_us = a.delay_us->sample(rng);
    const Live held = new_rec(&st, thrower);
    Rec& rec = *held.rec;
    const TimerTaskPtr<P>& task = held.task;
    const Duration d = Duration::microseconds(d_us);
    const std::int64_t t0 = now();
    rec.first_deadline = (Instant::from_ns(t0) + d).ns();
    const ScheduleMode mode = thrower ? ScheduleMode::kOnce : a.mode;
    st.set(Phase::kWorking, rec.id);
    rec.queued_pass = pass_.load(std::memory_order::relaxed);
    if (!thrower && a.scripts_callbacks()) {
      rec.script = &a;
      rec.root = rec.id;
    }
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
        } else if (mode == ScheduleMode::kFixedRateSkip) {
          rec.kind = TaskKind::kFixedRateSkip;
          service_->schedule_periodic(task, d, period, MissedTick::kSkip);
        } else {
          rec.kind = TaskKind::kFixedRate;
          service_->schedule_at_fixed_rate(task, d, period);
        }
      }
    } catch (const RejectedError&) {
      // engine.max_pending: refused, and the task is untouched (never armed).
      ctx_.add("rejected_by_cap");
      {
        std::lock_guard lk(rec.mu);
        rec.resolved = true;
      }
      retire(rec);
      check_cap(st);
      return false;
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
                                 st.name, rec.id, d_us, ctx_.at(t0 - base_)));
    }
    ctx_.add(thrower ? "thrower_tasks" : "scheduled");
    armed_.fetch_add(1, std::memory_order::relaxed);
    live_.fetch_add(1, std::memory_order::relaxed);
    if (rec.kind != TaskKind::kOnce) live_series_.fetch_add(1, std::memory_order::relaxed);
    check_cap(st);
    if (!thrower && rec.kind == TaskKind::kOnce && a.rearm_probability > 0 &&
        std::bernoulli_distribution(a.rearm_probability)(rng)) {
      const std::int64_t us = std::max<std::int64_t>(0, a.rearm_delay().sample(rng));
      reschedule_task(rec, task, Duration::microseconds(us));
    }
    if (!thrower && a.cancel_probability > 0 &&
        std::bernoulli_distribution(a.cancel_probability)(rng)) {
      cancel_task(rec, task, st.name, log, (rec.id / 2) % 2 == 0);
    }
    return true;
  }

  // TimerService::reschedule of a one-shot task just scheduled, racing its run
  // (rearm_probability), to an Actor::rearm_delay() sample. Its deadline for
  // early_fire becomes the earlier of the two while the call is in flight (a run
  // racing it may be at either), then t0 + delay once it returned true (the
  // service's deadline is its own now + delay, not earlier).
  void reschedule_task(Rec& rec, const TimerTaskPtr<P>& task, Duration delay) {
    const std::int64_t t0 = now();
    const std::int64_t moved = (Instant::from_ns(t0) + delay).ns();
    std::int64_t before;
    {
      std::lock_guard lk(rec.mu);
      if (rec.resolved) return;
      before = rec.first_deadline;
      rec.first_deadline = std::min(before, moved);
    }
    const bool ok = service_->reschedule(task, delay);
    std::lock_guard lk(rec.mu);
    if (!ok) {
      rec.first_deadline = before;
      return;
    }
    ctx_.add("rescheduled");
    if (rec.fires == 0) {
      rec.first_deadline = moved;
      rec.queued_pass = pass_.load(std::memory_order::relaxed);
    }
  }

  // engine.max_pending: the service never holds more pending tasks than its cap
  // (tombstones included until purged, as TimerServiceOptions says), whatever
  // races with this schedule. pending() is read under the service's lock, so a
  // count above the cap is one the service really held.
  void check_cap(const ActorState& st) {
    const std::size_t cap = s_.engine.max_pending;
    if (cap == 0) return;
    const std::size_t pending = service_->pending();
    if (pending <= cap) return;
    ctx_.violation(Oracle::kConservation,
                   fmt::format("after a schedule by {} the service holds {} pending tasks, above "
                               "its max_pending of {}",
                               st.name, pending, cap));
  }

  // Returns whether the cancel won.
  bool cancel_task(Rec& rec, const TimerTaskPtr<P>& task, const std::string& who, ActorLog& log,
                   bool via_service) {
    const std::int64_t t0 = now();
    const bool won = via_service ? service_->cancel(task) : task->cancel();
    const std::int64_t t1 = now();
    log.sample(Latency::kCancelCost, t1 - t0);
    if (!won) return false;
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
      live_.fetch_sub(1, std::memory_order::relaxed);
      if (rec.kind != TaskKind::kOnce) live_series_.fetch_sub(1, std::memory_order::relaxed);
      retire(rec);
    }
    return true;
  }


  std::int64_t max_period() const { return max_period_.load(std::memory_order::relaxed); }

  // The virtual driver's run_due() passes, counted so that a task armed by a
  // callback of one pass and run in that same pass is judged (same_pass_fire,
  // starvation). On threads and under simulation the service's own thread has no
  // passes: none are counted, and neither rule is judged.
  // `now`: the pass's instant (late_fire compares with the previous pass's).
  void begin_pass(std::int64_t now) {
    prev_pass_now_ = pass_now_;
    pass_now_ = now;
    pass_.fetch_add(1, std::memory_order::relaxed);
  }
  // Callbacks act (re-arm, cancel, self-cancel) only in runs that start by `t`
  // on the engine's clock, so a chain that always re-arms cannot keep the drain
  // from ending. Called as the drain begins, with its target.
  void stop_scripts_after(std::int64_t t) { scripts_until_.store(t, std::memory_order::relaxed); }

  // A random live task (null rec when none is live).
  Live pick_live(std::mt19937_64& rng) {
    std::lock_guard lk(recs_mu_);
    if (live_recs_.empty()) return {};
    return live_recs_[std::uniform_int_distribution<std::size_t>(0, live_recs_.size() - 1)(rng)];
  }

  // The latest deadline of a live one-shot task (INT64_MIN when there is none).
  std::int64_t last_one_shot_deadline() {
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    std::lock_guard lk(recs_mu_);
    for (const Live& l : live_recs_) {
      if (l.rec->kind == TaskKind::kOnce) last = std::max(last, l.rec->first_deadline);
    }
    return last;
  }

  // Whether some live one-shot task is due by `target` (unresolved: live).
  bool one_shot_due_by(std::int64_t target) {
    std::lock_guard lk(recs_mu_);
    for (const Live& l : live_recs_) {
      if (l.rec->kind == TaskKind::kOnce && l.rec->first_deadline <= target) return true;
    }
    return false;
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

 private:
  void lost(const Rec& r, std::int64_t horizon) {
    ctx_.violation(
        Oracle::kLostTimer,
        fmt::format("task #{} of {} (deadline {}) neither ran nor was cancelled by {} (drain "
                    "horizon {})",
                    r.id, r.owner->name, ctx_.at(r.first_deadline - base_), ctx_.at(now() - base_),
                    ctx_.at(horizon - base_)));
  }


  struct FifoGroup {
    std::uint64_t unresolved = 0;
    std::uint64_t ran_id = 0;
  };

  std::int64_t now() const { return clock_.now().ns(); }

  CaseContext& ctx_;
  const Scenario& s_;
  Service* service_;
  const typename P::Clock& clock_;
  ActorLog* timer_log_;
  const std::int64_t base_;
  std::mutex recs_mu_;
  std::vector<Live> live_recs_;  // recs_mu_: unresolved tasks (TaskRec says when one leaves)
  std::uint64_t next_id_ = 0;    // recs_mu_
  std::atomic<std::uint64_t> armed_{0}, fired_{0}, cancelled_{0};
  std::atomic<std::int64_t> max_period_{0};
  std::atomic<std::uint64_t> lazy_cancels_{0};  // task->cancel() wins since the last purge
  std::atomic<std::uint64_t> live_{0};
  std::atomic<std::uint64_t> live_series_{0};
  std::atomic<std::uint64_t> thrown_{0};
  // FIFO ties are checked on exact strategies only (strategy.h).
  const bool check_fifo_ = [this] {
    const auto strategy = strategy_from_name(ctx_.spec().strategy);
    return strategy && kStrategyInfo[static_cast<std::size_t>(*strategy)].exact;
  }();
  std::mutex fifo_mu_;
  std::map<std::pair<const ActorState*, std::int64_t>, FifoGroup> fifo_;  // fifo_mu_
  // Callback scripts: one generator for every draw made inside a callback (the
  // virtual driver and the simulated timer thread are the only firing threads, so
  // those cases replay exactly), the pass count, and the pass a chain starved in.
  std::mutex script_mu_;
  std::mt19937_64 script_rng_ = ctx_.rng_for(~std::size_t{0});  // script_mu_
  std::uint64_t starved_pass_ = ~std::uint64_t{0};               // script_mu_: none yet
  std::atomic<std::uint64_t> pass_{0};
  // The virtual driver's thread only (begin_pass, and on_fire inside its passes).
  std::int64_t pass_now_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t prev_pass_now_ = std::numeric_limits<std::int64_t>::min();
  std::atomic<std::int64_t> scripts_until_{std::numeric_limits<std::int64_t>::max()};
};

}  // namespace tlab::tool::runner
