// tlab/tool/runner/engine_subject_facility_end.cc: the facility case's run (real
// clock threads or one virtual thread), its drain, the end-of-case checks and the
// shutdown with pending timers (engine_subject_facility.h has the tables).
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "base/stall_clock.h"
#include "runner/engine_subject.h"
#include "runner/engine_subject_facility.h"
#include "runner/engines.h"

namespace tlab::tool::runner {

FacilityCase::FacilityCase(CaseContext& ctx, const tlab_subject& d, const SubjectExtras& extras)
    : ctx_(ctx),
      s_(ctx.scenario()),
      calls_(d),
      extras_(extras),
      virtual_(s_.engine.clock == ClockKind::kVirtual && (d.promises & TLAB_PROMISE_VIRTUAL) != 0),
      loop_(d.drive == TLAB_DRIVE_LOOP),
      host_clock_(d.clock == TLAB_CLOCK_HOST),
      tick_ns_(s_.engine.tick_us * 1000),
      max_delay_(d.max_delay_ns == 0 ? INT64_MAX : d.max_delay_ns),
      overdue_grace_(virtual_ ? 20 * tick_ns_ : lost_wakeup_grace_ns(s_)),
      scripts_(
          ((d.promises & TLAB_PROMISE_REENTRANT) != 0 || extras.schedule_scripted != nullptr) &&
          std::any_of(s_.actors.begin(), s_.actors.end(),
                      [](const Actor& a) { return a.scripts_callbacks(); })),
      script_rng_(ctx.rng_for(s_.actors.size() + 1000)),
      declared_(scripts_ && extras.schedule_scripted != nullptr &&
                (d.promises & TLAB_PROMISE_REENTRANT) == 0),
      ledger_(ledger_options()) {}

TimerLedger::Options FacilityCase::ledger_options() {
  TimerLedger::Options o;
  // The driver's order cannot judge a tie before the earlier one's outcome is
  // known; a pending list is an exec subject's, judged by its session.
  o.rules =
      LedgerRules::all().without(LedgerRule::kFifoEarlierArmed).without(LedgerRule::kPendingList);
  o.order = LedgerOrder::kOverlapping;
  o.format = &format_;
  o.sink = [this](Oracle oracle, const std::string& sentence) { ctx_.violation(oracle, sentence); };
  o.lateness = [this](std::int64_t late) { fire_log_->sample(Latency::kFireLateness, late); };
  // subject.h, "Lateness": judged where tlab polls; the allowance is the tick, or
  // the subject's own resolution where that is coarser.
  if (loop_) o.late_allowance = std::max(tick_ns_, calls_.d().resolution_ns);
  return o;
}

void FacilityCase::build_actors() {
  timer_st_ = &ctx_.add_actor(virtual_ ? "driver#0" : loop_ ? "timer_thread#0" : "subject#0");
  fire_log_ = &ctx_.log_of(*timer_st_);
  timer_st_->set(Phase::kWorking);
  std::array<int, kRoleCount> per_role{};
  std::size_t index = 0;
  std::size_t producers = 0;
  for (const Actor& a : s_.actors) {
    if (a.role == Role::kTimerThread || !plays_on(a, calls_.d().periodic)) continue;
    if (a.role == Role::kScheduler || a.role == Role::kThrower) {
      producers += static_cast<std::size_t>(a.count);
    }
    for (int i = 0; i < a.count; ++i, ++index) {
      const int n = per_role[static_cast<std::size_t>(a.role)]++;
      ActorRun& r = runs_.emplace_back();
      r.spec = &a;
      r.st = &ctx_.add_actor(fmt::format("{}#{}", name_of(a.role), n));
      r.log = &ctx_.log_of(*r.st);
      r.index = index;
      r.stale = a.stale_probability.value_or(kDefaultStaleProbability);
    }
  }
  std::size_t k = 0;
  for (ActorRun& r : runs_) {
    if (r.spec->role != Role::kCanceller) r.quota = ctx_.share(k++, producers);
  }
  if (scripts_) {
    callback_.st = &ctx_.add_actor("callback#0");
    callback_.log = &ctx_.log_of(*callback_.st);
    // A SELF subject may fire on several threads at once (the executor's workers,
    // a thread pool), each performing scripts: one log, written by all of them.
    callback_.log->share();
    callback_.st->set(Phase::kWorking);
  }
  probe_.st = &ctx_.add_actor("probe#0");
  probe_.log = &ctx_.log_of(*probe_.st);
  probe_.st->set(Phase::kWaiting);  // for the drain
  shutdown_.st = &ctx_.add_actor("shutdown#0");
  shutdown_.log = &ctx_.log_of(*shutdown_.st);
  shutdown_.st->set(Phase::kWaiting);  // for the others to finish
}

void FacilityCase::run() {
  const tlab_subject& d = calls_.d();
  const bool wants_virtual = s_.engine.clock == ClockKind::kVirtual;
  if (wants_virtual && !virtual_) {
    ctx_.note(
        fmt::format("engine.clock virtual: subject {} cannot run on tlab's clock (no "
                    "TLAB_PROMISE_VIRTUAL), so the case ran on the real clock{} (its latency "
                    "bounds measured, not judged)",
                    d.name, loop_ ? " with a poller thread" : ""));
    ctx_.add(std::string(kOffClockCounter));
  }
  if (!virtual_ && !loop_) {
    ctx_.note("timer_thread: the subject's own threads fire (TLAB_DRIVE_SELF); tlab polls nothing");
  }
  if (!s_.faults.empty()) ctx_.note("faults not injected (core fault points)");
  if (!scripts_ && std::any_of(s_.actors.begin(), s_.actors.end(),
                               [](const Actor& a) { return a.scripts_callbacks(); })) {
    ctx_.note(
        fmt::format("callback scripts not performed: subject {} does not declare "
                    "TLAB_PROMISE_REENTRANT (its callbacks may not call it) nor take scripts with "
                    "its schedules",
                    d.name));
  }
  if (calls_.serial()) ctx_.note("calls serialised on one mutex (no TLAB_PROMISE_THREAD_SAFE)");
  for (std::size_t i = 0; i < s_.actors.size(); ++i) {
    const Actor& a = s_.actors[i];
    if (plays_on(a, d.periodic)) continue;
    ctx_.note(
        fmt::format("/actors/{} not run: mode {} needs {} series, which subject {} does not "
                    "have",
                    i, mode_name(a.mode), periodic_kind_name(periodic_kind_of(a.mode)), d.name));
  }
  build_actors();
  tlab_subject_config config{};
  config.struct_size = sizeof config;
  config.permits = 0;
  config.now_ns = host_now();
  config.tick_ns = tick_ns_;
  config.host = this;
  config.fired = &FacilityCase::fired_cb;
  const std::int32_t st = d.create(&config, &calls_.self);
  if (st != TLAB_OK) {
    throw std::runtime_error(fmt::format("subject {}: create(tick_ns={}) returned {}", d.name,
                                         tick_ns_, status_name(st)));
  }
  if (declared_) {
    extras_.bind_script_host(calls_.self, this);
    ctx_.note(
        "callback scripts declared with each schedule (the subject performs them in its "
        "callbacks; periodic series carry none)");
  }
  ctx_.actors_ready();
  if (virtual_) {
    run_virtual();
  } else {
    run_threads();
  }
  throw_if_error();
  drain_and_check();
  throw_if_error();
  shutdown_with_pending();
  throw_if_error();
}

void FacilityCase::run_threads() {
  if (loop_) poller_ = std::thread([this] { poller_loop(); });
  std::vector<std::thread> schedulers, cancellers;
  for (ActorRun& r : runs_) {
    auto body = [this, &r] {
      std::mt19937_64 rng = ctx_.rng_for(r.index);
      if (r.spec->role == Role::kCanceller) {
        canceller_loop(r, rng);
      } else {
        scheduler_loop(r, rng);
      }
      r.st->set(Phase::kDone);
    };
    (r.spec->role == Role::kCanceller ? cancellers : schedulers).emplace_back(body);
  }
  for (std::thread& t : schedulers) t.join();
  if (scripts_) {
    // On real threads the schedulers finish long before their timers are due:
    // let the scripts run until the timers due by the latest deadline now (at
    // most 1 s or a tenth of the budget ahead) have fired, then stop feeding
    // before the drain. A starved poller makes this wait longer, not shorter;
    // what the subject never fires ends it at the cap (the drain judges it).
    const std::int64_t now = host_now();
    const std::int64_t cap = std::min<std::int64_t>(
        1'000'000'000, static_cast<std::int64_t>(ctx_.spec().budget_s * 1e8));
    const std::int64_t until = std::min(ledger_.latest_deadline(now), sat_add(now, cap));
    while ((host_now() < until || ledger_.any_due_by(until)) &&
           waited_ns(now, host_now()) < 2 * cap && !ctx_.stopping()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  feeding_.store(false, std::memory_order::relaxed);        // a flag (on_fired)
  producers_done_.store(true, std::memory_order::release);  // pairs with canceller_loop
  for (std::thread& t : cancellers) t.join();
}

void FacilityCase::run_virtual() {
  std::vector<std::mt19937_64> rngs;
  for (ActorRun& r : runs_) rngs.push_back(ctx_.rng_for(r.index));
  std::mt19937_64 order = ctx_.rng_for(runs_.size() + 1);
  std::vector<std::size_t> idx(runs_.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  bool producing = true;
  while (producing && !ctx_.stopping()) {
    std::shuffle(idx.begin(), idx.end(), order);
    producing = false;
    for (std::size_t i : idx) {
      ActorRun& r = runs_[i];
      if (r.spec->role == Role::kCanceller) {
        if (r.next_virtual == 0) {
          r.next_virtual = sat_add(host_now(), r.spec->delay_us->sample(rngs[i]) * 1000);
        }
        if (host_now() < r.next_virtual) continue;
        if (r.stale > 0 && std::bernoulli_distribution(r.stale)(rngs[i])) {
          cancel_stale(rngs[i], *r.st, *r.log);
        } else {
          const std::uint64_t cookie = ledger_.pick_live(rngs[i]);
          if (cookie == 0) continue;
          cancel_one(cookie, *r.st, *r.log);
        }
        r.st->ops.fetch_add(1, std::memory_order::relaxed);
        r.next_virtual = 0;
        continue;
      }
      if (blocked_by_pending()) {
        producing = true;
        continue;
      }
      if (!ctx_.take_op(r.quota)) continue;
      producing = true;
      schedule_one(r, rngs[i]);
      r.st->ops.fetch_add(1, std::memory_order::relaxed);
    }
    vclock_.store(host_now() + tick_ns_, std::memory_order::relaxed);  // this thread only
    poll_once();
    check_conservation("after a virtual step");
  }
  feeding_.store(false, std::memory_order::relaxed);  // this thread only
}

void FacilityCase::drain_and_check() {
  const std::int64_t horizon = host_now();
  // As the service engine: the target is the latest open deadline, but at most
  // 1 s and a third of the budget away (further timers are pending at the end,
  // not lost); then a grace of 50 ms or 20 ticks for the last polls.
  const auto budget_third = static_cast<std::int64_t>(ctx_.spec().budget_s * 1e9 / 3);
  const std::int64_t last = ledger_.latest_deadline(horizon);
  const std::int64_t target =
      std::min({last, sat_add(horizon, 1'000'000'000), sat_add(horizon, budget_third)});
  const std::int64_t drain_ns =
      std::max(std::int64_t{0}, std::min(budget_third - (target - horizon),
                                         std::max(std::int64_t{50'000'000}, 20 * tick_ns_)));
  while (ledger_.any_due_by(target) &&
         (host_now() <= target || waited_ns(target, host_now()) < drain_ns) && !ctx_.stopping()) {
    wait_step(std::chrono::milliseconds(1));
  }
  if (!ctx_.stopping()) idle_probes();
  poller_stop_.store(true, std::memory_order::release);  // pairs with poller_loop
  if (poller_.joinable()) poller_.join();
  if (ctx_.stopping()) return;  // a mutant's first finding, or a driver error
  const std::uint64_t excused = ledger_.overdue(
      LedgerInstant{host_now(), 0}, target, fmt::format(" (drain horizon {})", at(target)),
      [this](std::uint64_t cookie) { return excused_by_failure(cookie); });
  if (excused > 0) ctx_.add("undelivered_after_failure", excused);
  const LedgerCounts n = ledger_.counts();
  ctx_.set_counter("armed", n.armed);
  ctx_.set_counter("fired", n.fired);
  ctx_.set_counter("cancelled", n.prevented);
  ctx_.set_counter("pending", n.live);
  if (n.runs > 0) ctx_.set_counter("periodic_runs", n.runs);
  check_conservation("after the drain");
}

void FacilityCase::wait_step(std::chrono::nanoseconds real_sleep) {
  if (virtual_) {
    vclock_.store(host_now() + tick_ns_, std::memory_order::relaxed);  // this thread only
    poll_once();
    check_conservation("after a virtual step");
  } else {
    std::this_thread::sleep_for(real_sleep);
  }
}

void FacilityCase::idle_probes() {
  if ((calls_.d().promises & TLAB_PROMISE_DELIVERY) == 0) return;  // nothing promised
  probe_.st->set(Phase::kWorking);
  const std::int64_t delay = std::min(tick_ns_, max_delay_);
  int sent = 0;
  for (int i = 0; i < kIdleProbes && !ctx_.stopping(); ++i) {
    std::uint64_t cookie = 0, handle = 0;
    if (!schedule_timer(probe_, delay, false, cookie, handle)) break;  // judged there
    ++sent;
    probe_.st->ops.fetch_add(1, std::memory_order::relaxed);
    const std::optional<LedgerView> v = ledger_.view(cookie);
    if (!v) continue;  // fired already
    // The timers besides the probe, and those of them already due when it was
    // scheduled: what the subject held when it was told of the probe.
    const std::uint64_t others = std::max<std::uint64_t>(ledger_.counts().live, 1) - 1;
    const std::uint64_t overdue = ledger_.due_by(v->scheduled.t, cookie);
    while (ledger_.is_live(cookie) &&
           (host_now() <= v->deadline || waited_ns(v->deadline, host_now()) < overdue_grace_) &&
           !ctx_.stopping()) {
      wait_step(std::chrono::microseconds(100));
    }
    if (ctx_.stopping()) continue;
    const std::string context = fmt::format(
        "idle probe {}/{} into a drained subject ({} other timers pending, {} of them "
        "past due): ",
        i + 1, kIdleProbes, others, overdue);
    if (!ledger_.lost(cookie, LedgerInstant{host_now(), 0}, context,
                      " (a timer added while the subject idles must wake it)")) {
      continue;
    }
    break;  // the subject is no longer idle: later probes would prove nothing new
  }
  ctx_.set_counter("idle_probes", static_cast<std::uint64_t>(sent));
  probe_.st->set(Phase::kDone);
}

void FacilityCase::check_conservation(const char* when) {
  const tlab_subject& d = calls_.d();
  if (d.pending == nullptr) return;
  const LedgerWindow before = ledger_.pending_window();
  std::uint64_t pending = 0;
  std::int32_t st = TLAB_EFAIL;
  calls_([&] { st = d.pending(calls_.self, &pending); });
  if (st != TLAB_OK) {
    driver_error(fmt::format("pending() {} returned {}", when, status_name(st)));
    return;
  }
  ledger_.pending_count(pending, before, when, LedgerInstant{host_now(), 0});
}

void FacilityCase::shutdown_with_pending() {
  // Shutdown with pending timers: four due now (a SELF subject may be firing them
  // while destroy() runs), four due in 1 ms (within the 5 ms watched after
  // destroy() below, so a SELF subject that keeps firing shows) and four an hour
  // ahead (or at max_delay_ns).
  const std::int64_t far = std::min<std::int64_t>(3'600'000'000'000, max_delay_);
  const std::int64_t soon = std::min<std::int64_t>(1'000'000, max_delay_);
  for (std::int64_t delay : {std::int64_t{0}, soon, far}) {
    for (int i = 0; i < 4; ++i) {
      std::uint64_t cookie = 0, handle = 0;
      schedule_timer(shutdown_, delay, false, cookie, handle);
    }
  }
  ctx_.set_counter("pending_at_destroy", ledger_.counts().live);
  calls_([&] { calls_.d().destroy(calls_.self); }, shutdown_.st);
  ledger_.destroyed();
  shutdown_.st->set(Phase::kDone);
  // A SELF subject's thread that outlives destroy() would fire now.
  if (!loop_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void run_facility_case(CaseContext& ctx, const tlab_subject& d, const SubjectExtras& extras) {
  auto c = std::make_unique<FacilityCase>(ctx, d, extras);
  c->run();
  // A SELF subject whose destroy() did not join its threads may still call
  // fired(c) until the case's process exits; that call must find the case (and
  // count fired_after_cancel), not freed memory. One case per child process.
  if (d.drive == TLAB_DRIVE_SELF) static_cast<void>(c.release());
}

}  // namespace tlab::tool::runner
