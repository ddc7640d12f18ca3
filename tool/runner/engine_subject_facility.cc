// tlab/tool/runner/engine_subject_facility.cc: the facility case's calls and how
// each result is judged as it happens (engine_subject_facility.h has the tables).
#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "base/stall_clock.h"
#include "runner/engine_subject_facility.h"

namespace tlab::tool::runner {

std::int64_t FacilityCase::host_now() const {
  // relaxed: only the driver's main thread advances the virtual clock, and every
  // virtual-case call runs on that thread.
  return virtual_ ? vclock_.load(std::memory_order::relaxed) : monotonic_ns();
}

std::int64_t FacilityCase::waited_ns(std::int64_t since, std::int64_t now) const {
  // Real clock: the stall clock's effective time, so a grace counts only time the
  // case's threads (and an exec subject's) could run (stall_clock.h).
  return virtual_ ? now - since : stall_clock().effective_ns(since, now);
}

std::string FacilityCase::at(std::int64_t host_ns) const {
  // Real clock: CLOCK_MONOTONIC is the steady clock of the case's timeline.
  // Virtual: the case starts at the epoch.
  return virtual_ ? "t=" + fmt_ns(host_ns - kSubjectVirtualEpochNs) : ctx_.at(host_ns);
}

void FacilityCase::fired_cb(void* host, std::uint64_t cookie) {
  static_cast<FacilityCase*>(host)->on_fired(cookie);
}

// ---- fires ---------------------------------------------------------------------

namespace {
// The case whose fired() callback this thread is in (callback scripts).
thread_local const FacilityCase* t_inside = nullptr;
}  // namespace

bool FacilityCase::inside() const { return t_inside == this; }

void FacilityCase::on_fired(std::uint64_t cookie) {
  // "now" on the subject's clock: the poll's now for a HOST loop subject (what
  // it was told), else CLOCK_MONOTONIC as the subject itself would read it.
  // relaxed: poll_now_ is written by this same thread just before poll().
  const std::int64_t now = virtual_ || (loop_ && host_clock_)
                               ? poll_now_.load(std::memory_order::relaxed)
                               : monotonic_ns();
  const LedgerFired f = ledger_.fired(cookie, LedgerInstant{now, 0});
  if (declared_) {
    // The subject performs the script itself and reports each action next.
    if (f.first && (f.mark & kScriptActions) != 0 && !f.periodic) {
      const std::lock_guard lk(script_mu_);
      reporting_[cookie] = LedgerInstant{now, ledger_.step()};
    }
  } else if (scripts_ && f.first && (f.mark & kScriptActions) != 0 &&
             feeding_.load(std::memory_order::relaxed) && !ctx_.stopping()) {
    const FacilityCase* outer = t_inside;
    t_inside = this;
    perform_script(cookie, f, now);
    t_inside = outer;
  }
  if (f.periodic) {
    // The run's callback returns now (on the clock `now` was read on).
    const std::int64_t end = virtual_ || (loop_ && host_clock_)
                                 ? poll_now_.load(std::memory_order::relaxed)
                                 : monotonic_ns();
    ledger_.run_ended(cookie, LedgerInstant{end, 0});
  }
}

std::uint32_t FacilityCase::draw_script(const ActorRun& r, std::mt19937_64& rng) const {
  if (!scripts_ || !r.spec->scripts_callbacks()) return 0;
  auto draw = [&](double p) { return p > 0 && std::bernoulli_distribution(p)(rng); };
  std::uint32_t bits = 0;
  if (draw(r.spec->callback_rearm_probability)) bits |= kScriptRearm;
  if (draw(r.spec->callback_cancel_probability)) bits |= kScriptCancel;
  if (draw(r.spec->callback_self_cancel_probability)) bits |= kScriptSelfCancel;
  return bits | static_cast<std::uint32_t>(r.index + 1) << 8;
}

void FacilityCase::perform_script(std::uint64_t cookie, const LedgerFired& f, std::int64_t now) {
  const std::size_t index = (f.mark >> 8) - 1;
  const ActorRun& owner = runs_[index];
  // A LOOP subject fires from tlab's polling thread only, which also keeps
  // poll_number_ and starving_; a SELF subject has no passes.
  const std::uint64_t pass = loop_ ? poll_number_ : 0;
  if (loop_ && f.starving) starving_ = true;
  std::uint64_t sibling = 0;
  std::int64_t delay = 0;
  std::uint32_t next = 0;
  {
    // The draws only: the calls below may block on the subject's own locks.
    std::lock_guard lk(script_mu_);
    if ((f.mark & kScriptCancel) != 0) {
      sibling = ledger_.pick_due(now, script_rng_);
      if (sibling == 0) sibling = ledger_.pick_live(script_rng_);
    }
    if ((f.mark & kScriptRearm) != 0) {
      // |callback_rearm_delay_us| <= 9e15 (the schema), so * 1000 fits.
      delay = owner.spec->callback_rearm_delay_us
                  ? owner.spec->callback_rearm_delay_us->sample(script_rng_) * 1000
                  : 0;
      next = draw_script(owner, script_rng_);
    }
  }
  if ((f.mark & kScriptSelfCancel) != 0 && f.has_handle) {
    LedgerCancel c;
    c.cookie = cookie;
    c.handle = f.handle;
    // A series stopped from its own callback answers PREVENTED (subject.h).
    if (!f.periodic) {
      c.why =
          "; a cancel from the timer's own callback (it is firing: it must answer TOO_LATE or "
          "UNKNOWN)";
    }
    ctx_.add("callback_self_cancels");
    call_cancel(c, *callback_.st, *callback_.log);
  }
  if (sibling != 0 && sibling != cookie) {
    ctx_.add("callback_cancels");
    cancel_one(sibling, *callback_.st, *callback_.log);
  }
  if ((f.mark & kScriptRearm) != 0 && !starving_) {
    std::uint64_t c = 0, h = 0;
    if (schedule_timer(callback_, delay, false, c, h, next,
                       ScheduledFrom{pass, f.chain, f.chain_origin})) {
      ctx_.add("callback_rearms");
    }
  }
}

std::vector<ScriptAction> FacilityCase::declare_script(const ActorRun& r, std::uint64_t cookie,
                                                       std::uint32_t mark, std::int64_t due,
                                                       int depth) {
  std::vector<ScriptAction> then;
  const std::size_t index = (mark >> 8) - 1;
  const ActorRun& owner = runs_[index];
  std::unique_lock lk(script_mu_);
  if ((mark & kScriptSelfCancel) != 0) then.push_back(ScriptAction{true, cookie, 0, {}});
  if ((mark & kScriptCancel) != 0) {
    // A sibling: preferably a live timer due just after this one (the one a
    // subject that takes every due timer off its queue before it runs their
    // callbacks would run anyway), else one due by then, else any live one.
    const std::int64_t window = std::max<std::int64_t>(tick_ns_, kSiblingWindowNs);
    std::uint64_t sibling = 0;
    for (int i = 0; i < kSiblingTries && sibling == 0; ++i) {
      const std::uint64_t c = ledger_.pick_due(sat_add(due, window), script_rng_);
      const std::optional<LedgerView> v = c != 0 ? ledger_.view(c) : std::nullopt;
      if (v && v->deadline >= due) sibling = c;
    }
    if (sibling == 0) sibling = ledger_.pick_due(due, script_rng_);
    if (sibling == 0) {
      // Only an armed one: a timer whose schedule has not returned may not have
      // reached the subject yet (another sender's request), and a script cannot
      // name a timer the subject does not know.
      const std::uint64_t c = ledger_.pick_live(script_rng_);
      const std::optional<LedgerView> v = c != 0 ? ledger_.view(c) : std::nullopt;
      if (v && v->has_handle) sibling = c;
    }
    if (sibling != 0 && sibling != cookie) then.push_back(ScriptAction{true, sibling, 0, {}});
  }
  if ((mark & kScriptRearm) != 0 && depth < kScriptDepth) {
    // |callback_rearm_delay_us| <= 9e15 (the schema), so * 1000 fits.
    const std::int64_t delay = owner.spec->callback_rearm_delay_us
                                   ? owner.spec->callback_rearm_delay_us->sample(script_rng_) * 1000
                                   : 0;
    const std::uint32_t next = draw_script(owner, script_rng_);
    const std::uint64_t id = next_cookie_.fetch_add(1, std::memory_order::relaxed);
    planned_[id] = Planned{delay, next};
    ScriptAction a{false, id, delay, {}};
    then.push_back(std::move(a));
    // Its own script, drawn now (the lock is released for the recursion).
    lk.unlock();
    std::vector<ScriptAction> inner =
        (next & kScriptActions) != 0
            ? declare_script(r, id, next, sat_add(due, std::max<std::int64_t>(delay, 0)), depth + 1)
            : std::vector<ScriptAction>{};
    lk.lock();
    then.back().then = std::move(inner);
  }
  return then;
}

void FacilityCase::script_scheduled(std::uint64_t by, std::uint64_t id, bool ok) {
  Planned p;
  LedgerInstant from;
  {
    const std::lock_guard lk(script_mu_);
    auto it = planned_.find(id);
    if (it == planned_.end()) {
      driver_error(
          fmt::format("the subject reported a scheduled id {} by id {}, which no "
                      "declared script of a fired timer holds",
                      id, by));
      return;
    }
    p = it->second;
    planned_.erase(it);
    // Scheduled in the callback of `by`, after `by` was scheduled: that is the
    // instant known to precede it (the fire was read later than it began; early
    // is judged exactly by the session, on the subject's own clock).
    // (`by`'s own lower bound was recorded when it was scheduled.)
    auto lb = script_from_.find(by);
    from = LedgerInstant{lb == script_from_.end() ? host_now() : lb->second, 0};
    if ((p.mark & kScriptActions) != 0) script_from_[id] = from.t;
  }
  ledger_.schedule(id, LedgerSchedule{callback_.st->name, from, p.delay, false, p.mark});
  if (ok) {
    ctx_.add("callback_rearms");
    ledger_.armed(id, id, from.t);
  } else if (p.delay < 0 || p.delay > max_delay_) {
    ledger_.refused(id, LedgerInstant{host_now(), 0});
    ctx_.add("refused");
  } else {
    ledger_.refused(id, LedgerInstant{host_now(), 0});
    ctx_.violation(Oracle::kLostTimer,
                   fmt::format("the callback of cookie {} scheduled cookie {} (delay={} ns) and "
                               "the subject refused it: a timer within the subject's range was "
                               "refused",
                               by, id, p.delay));
  }
}

void FacilityCase::script_cancelled(std::uint64_t by, std::uint64_t id, bool ok,
                                    std::int32_t result) {
  LedgerInstant begin;
  {
    const std::lock_guard lk(script_mu_);
    // The fire of `by` began the script; a fire that was a finding (after a
    // PREVENTED) was not recorded, and the cancel then counts from now.
    auto rep = reporting_.find(by);
    begin = rep != reporting_.end() ? rep->second : LedgerInstant{host_now(), ledger_.step()};
  }
  ctx_.add(id == by ? "callback_self_cancels" : "callback_cancels");
  if (!ok) return;  // an error: no claim
  LedgerCancel c;
  c.cookie = id;
  c.handle = id;
  c.who = callback_.st->name;
  c.begin = begin;
  c.end = LedgerInstant{host_now(), ledger_.step()};
  if (id == by) {
    c.why =
        "; a cancel from the timer's own callback (it is firing: it must answer TOO_LATE or "
        "UNKNOWN)";
  }
  on_cancel_result(c, result);
}

bool FacilityCase::excused_by_failure(std::uint64_t cookie) const {
  return !extras_.contains_errors && extras_.excused_after_failure != nullptr &&
         extras_.excused_after_failure(calls_.self, cookie, overdue_grace_);
}

// ---- schedule and cancel ---------------------------------------------------------

bool FacilityCase::schedule_one(ActorRun& r, std::mt19937_64& rng) {
  // |delay_us| <= 9e15 (the schema), so delay_us * 1000 fits in int64.
  const std::int64_t delay = r.spec->delay_us->sample(rng) * 1000;
  // Every other timer of a scheduler is stretched to a tick boundary, so that one
  // scheduler's timers share deadlines (FIFO ties), as the service engine's
  // schedule_at path does. Only on a HOST subject: one that reads its own clock
  // adds its own (varying) skew to now + delay, so tlab cannot make exact ties.
  const bool align = host_clock_ && r.st->ops.load(std::memory_order::relaxed) % 2 == 1;
  // Activity on the held timer's connection comes before this operation's timer.
  if (r.held_cookie != 0 && std::bernoulli_distribution(r.spec->rearm_probability)(rng)) {
    rearm_held(r, rng);
  }
  // A periodic mode (the subject has that kind: subject_accepts) arms a series.
  const std::int64_t period = r.spec->mode != ScheduleMode::kOnce && r.spec->period_us
                                  ? std::max<std::int64_t>(1, r.spec->period_us->sample(rng) * 1000)
                                  : 0;
  std::uint64_t cookie = 0, handle = 0;
  if (!schedule_timer(r, delay, align && period == 0, cookie, handle, draw_script(r, rng), {},
                      period)) {
    return false;
  }
  const double p = r.spec->cancel_probability;
  const bool cancel = p > 0 && std::bernoulli_distribution(p)(rng);
  if (cancel) {
    cancel_one(cookie, *r.st, *r.log);
  } else if (r.held_cookie == 0 && r.spec->rearm_probability > 0 &&
             std::bernoulli_distribution(r.spec->rearm_probability)(rng)) {
    r.held_cookie = cookie;
    r.held_handle = handle;
  }
  // Right after a schedule: the new timer may hold the storage a settled one had.
  if (r.stale > 0 && std::bernoulli_distribution(r.stale)(rng)) cancel_stale(rng, *r.st, *r.log);
  return true;
}

bool FacilityCase::schedule_timer(ActorRun& r, std::int64_t delay, bool align,
                                  std::uint64_t& cookie, std::uint64_t& handle, std::uint32_t mark,
                                  ScheduledFrom from, std::int64_t period) {
  const tlab_subject& d = calls_.d();
  const bool fail = r.spec != nullptr && r.spec->role == Role::kThrower;
  cookie = next_cookie_.fetch_add(1, std::memory_order::relaxed);  // a unique number
  std::int64_t t = 0, used = delay, c0 = 0, c1 = 0, returned = 0;
  std::uint64_t h = 0;
  std::int32_t st = TLAB_EFAIL;
  const bool in_callback = inside();
  // A declared script travels with a one-shot timer's schedule.
  const std::int64_t before = host_now();
  const std::vector<ScriptAction> then =
      declared_ && !fail && period == 0 && (mark & kScriptActions) != 0
          ? declare_script(r, cookie, mark, sat_add(before, std::max<std::int64_t>(delay, 0)), 0)
          : std::vector<ScriptAction>{};
  if (!then.empty()) {
    // Before the call: its fire (and the script's reports) may come before it returns.
    const std::lock_guard lk(script_mu_);
    script_from_[cookie] = before;
  }
  auto make_call = [&] {
    // Inside a HOST subject's poll its time is the poll's now (subject.h).
    // relaxed: poll_now_ is written by this same (polling) thread.
    t = in_callback && loop_ && host_clock_ ? poll_now_.load(std::memory_order::relaxed)
                                            : host_now();
    bool aligned = false;
    if (align && delay >= 0) {
      const std::int64_t due = sat_add(t, delay);
      if (due < INT64_MAX - tick_ns_) {
        const std::int64_t up = (due + tick_ns_ - 1) / tick_ns_ * tick_ns_;
        if (up - t <= max_delay_) {
          used = up - t;
          aligned = true;
        }
      }
    }
    const std::uint32_t kind = period > 0 ? periodic_kind_of(r.spec->mode) : 0;
    ledger_.schedule(cookie,
                     LedgerSchedule{r.st->name, LedgerInstant{t, 0}, used, aligned, mark, from.pass,
                                    from.chain, from.chain_origin, period, kind});
    c0 = steady_ns();
    st = period > 0      ? d.schedule_periodic(calls_.self, t, used, period, kind, cookie, &h)
         : fail          ? extras_.schedule_failing(calls_.self, t, used, cookie, &h)
         : !then.empty() ? extras_.schedule_scripted(calls_.self, used, cookie, then, &h)
                         : d.schedule(calls_.self, t, used, cookie, &h);
    c1 = steady_ns();
    // A subject reading its own clock read it somewhere in the call: its
    // lateness counts from the call's return (subject.h, "Lateness").
    if (!host_clock_) returned = host_now();
  };
  // Inside a callback the firing thread already holds the call mutex (its poll).
  if (in_callback) {
    make_call();
  } else {
    calls_(make_call, r.st, cookie);
  }
  if (st == TLAB_OK) {
    r.log->sample(Latency::kScheduleCost, c1 - c0);
    ctx_.add(fail ? "thrower_tasks" : period > 0 ? "scheduled_periodic" : "scheduled");
    handle = h;
    ledger_.armed(cookie, h, host_clock_ ? t : returned);
    return true;
  }
  const std::string call =
      period > 0 ? fmt::format(
                       "{}: schedule_periodic(now, delay={} ns, period={} ns, {}, "
                       "cookie={}) at {}",
                       r.st->name, used, period, periodic_kind_name(periodic_kind_of(r.spec->mode)),
                       cookie, at(t))
                 : fmt::format("{}: schedule(now, delay={} ns, cookie={}) at {}", r.st->name, used,
                               cookie, at(t));
  const bool excused = excused_by_failure(cookie);
  ledger_.refused(cookie, LedgerInstant{t, 0});
  if (st == TLAB_EINVAL && (used < 0 || used > max_delay_)) {
    ctx_.add("refused");
  } else if (st == TLAB_EINVAL && excused) {
    ctx_.add("refused_after_failure");
  } else if (st == TLAB_EINVAL) {
    ctx_.violation(Oracle::kLostTimer,
                   fmt::format("{} returned TLAB_EINVAL, but 0 <= delay <= max_delay_ns ({}): "
                               "a timer within the subject's range was refused",
                               call, max_delay_));
  } else if (st == TLAB_ENOMEM) {
    ctx_.add("schedule_enomem");
  } else {
    driver_error(fmt::format("{} returned {}", call, status_name(st)));
  }
  return false;
}

void FacilityCase::cancel_one(std::uint64_t cookie, ActorState& who, ActorLog& log) {
  const std::optional<LedgerView> v = ledger_.view(cookie);
  if (!v || !v->has_handle) return;
  LedgerCancel c;
  c.cookie = cookie;
  c.handle = v->handle;
  call_cancel(c, who, log);
}

void FacilityCase::rearm_held(ActorRun& r, std::mt19937_64& rng) {
  LedgerCancel c;
  c.cookie = r.held_cookie;
  c.handle = r.held_handle;
  c.why =
      "; a re-arm (a scheduler cancelled the timer it holds, which had settled meanwhile: "
      "it must answer TOO_LATE or UNKNOWN and touch no other timer)";
  r.held_cookie = 0;
  const std::int32_t res = call_cancel(c, *r.st, *r.log);
  if (res != TLAB_CANCEL_PREVENTED && res != TLAB_CANCEL_TOO_LATE) return;
  // |delay_us| <= 9e15 and rearm_delay_us <= 6e8 (the schema), so * 1000 fits.
  const std::int64_t delay = r.spec->rearm_delay().sample(rng) * 1000;
  std::uint64_t cookie = 0, handle = 0;
  if (!schedule_timer(r, delay, false, cookie, handle)) return;
  ctx_.add("rearmed");
  r.held_cookie = cookie;
  r.held_handle = handle;
}

void FacilityCase::cancel_stale(std::mt19937_64& rng, ActorState& who, ActorLog& log) {
  const auto settled = ledger_.pick_settled(rng);
  if (!settled) return;
  LedgerCancel c;
  c.cookie = settled->first;
  c.handle = settled->second;
  c.why =
      "; a stale cancel (tlab cancelled a settled timer's handle on purpose: it must "
      "answer TOO_LATE or UNKNOWN and touch no other timer)";
  ctx_.add("stale_cancels");
  call_cancel(c, who, log);
}

std::int32_t FacilityCase::call_cancel(LedgerCancel& c, ActorState& who, ActorLog& log) {
  const tlab_subject& d = calls_.d();
  std::int32_t res = 0, st = TLAB_EFAIL;
  std::int64_t c0 = 0, c1 = 0;
  c.who = who.name;
  auto call = [&] {
    const std::int64_t t0 = host_now();
    c.begin = LedgerInstant{t0, ledger_.step()};
    c0 = steady_ns();
    st = d.cancel(calls_.self, c.handle, &res);
    c1 = steady_ns();
    const std::int64_t t1 = host_now();
    // Taken before any other thread can judge a later call against this one.
    c.end = LedgerInstant{t1, ledger_.step()};
  };
  // Inside a callback the firing thread already holds the call mutex (its poll).
  if (inside()) {
    call();
  } else {
    calls_(call, &who, c.cookie);
  }
  log.sample(Latency::kCancelCost, c1 - c0);
  if (st == TLAB_EINVAL) {
    ctx_.add("cancel_einval");  // a handle the subject no longer knows: no claim
  } else if (st == TLAB_ENOMEM) {
    ctx_.add("cancel_enomem");
  } else if (st != TLAB_OK) {
    driver_error(fmt::format("{}: cancel(handle 0x{:x}) of cookie {} at {} returned {}", who.name,
                             c.handle, c.cookie, at(c.begin.t), status_name(st)));
  } else {
    on_cancel_result(c, res);
    return res;
  }
  return 0;
}

void FacilityCase::on_cancel_result(const LedgerCancel& c, std::int32_t result) {
  switch (result) {
    case TLAB_CANCEL_PREVENTED:
    case TLAB_CANCEL_TOO_LATE:
      break;
    case TLAB_CANCEL_UNKNOWN:
      ctx_.add("cancel_unknown");
      break;
    default:
      driver_error(
          fmt::format("{}'s cancel(handle 0x{:x}) of cookie {}, called at {} returned "
                      "TLAB_OK with result {}, which is no tlab_cancel_result",
                      c.who, c.handle, c.cookie, at(c.begin.t), result));
      return;
  }
  ledger_.cancelled(c, result);
}

bool FacilityCase::blocked_by_pending() {
  if (ledger_.outstanding() < s_.run.max_pending) return false;
  const std::int64_t now = host_now();
  // Doubtful timers (TOO_LATE, UNKNOWN) are already left out.
  return ledger_.outstanding([&](std::int64_t deadline) {
    return deadline < now && waited_ns(deadline, now) > overdue_grace_;
  }) >= s_.run.max_pending;
}

void FacilityCase::poll_once() {
  std::int32_t st = TLAB_EFAIL;
  std::int64_t t = 0;
  calls_(
      [&] {
        t = host_now();
        poll_now_.store(t, std::memory_order::relaxed);  // read by fired() on this thread
        poll_number_ = ledger_.poll_began(LedgerInstant{t, 0});
        starving_ = false;
        st = calls_.d().poll(calls_.self, t);
      },
      timer_st_);
  if (st != TLAB_OK)
    driver_error(fmt::format("poll(now) at {} returned {}", at(t), status_name(st)));
}

void FacilityCase::driver_error(const std::string& what) {
  {
    std::lock_guard lk(err_mu_);
    if (error_.empty()) error_ = fmt::format("subject {}: {}", calls_.d().name, what);
  }
  ctx_.stop();
}

void FacilityCase::throw_if_error() {
  std::lock_guard lk(err_mu_);
  if (!error_.empty()) throw std::runtime_error(error_);
}

// ---- actors on threads (real clock) ------------------------------------------------

void FacilityCase::scheduler_loop(ActorRun& r, std::mt19937_64& rng) {
  while (ctx_.take_op(r.quota)) {
    while (blocked_by_pending() && !ctx_.stopping()) {
      r.st->set(Phase::kWaiting);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    r.st->set(Phase::kWorking);
    schedule_one(r, rng);
    r.st->ops.fetch_add(1, std::memory_order::relaxed);
  }
}

void FacilityCase::canceller_loop(ActorRun& r, std::mt19937_64& rng) {
  // relaxed would do for the flag's value; acquire pairs with run_threads' release
  // so that the loop sees every scheduler's last timer.
  while (!producers_done_.load(std::memory_order::acquire) && !ctx_.stopping()) {
    const bool stale = r.stale > 0 && std::bernoulli_distribution(r.stale)(rng);
    const std::int64_t delay = r.spec->delay_us->sample(rng);
    const std::uint64_t cookie = stale ? 0 : ledger_.pick_live(rng);
    r.st->set(Phase::kSleeping, cookie);
    sleep_us(ctx_, delay);
    r.st->set(Phase::kWorking, cookie);
    if (stale) {
      cancel_stale(rng, *r.st, *r.log);  // picked now: the most recent settled count
    } else if (cookie != 0) {
      cancel_one(cookie, *r.st, *r.log);
    } else {
      continue;
    }
    r.st->ops.fetch_add(1, std::memory_order::relaxed);
  }
}

void FacilityCase::poller_loop() {
  // Half a tick between polls: a timer is then fired within tick_ns of its
  // deadline (config.tick_ns), at most 1 ms and at least 20 us apart (below that
  // a sleep is mostly wake-up latency).
  const auto nap =
      std::chrono::microseconds(std::clamp<std::int64_t>(s_.engine.tick_us / 2, 20, 1000));
  // acquire: pairs with drain_and_check's release; stops after the last drain poll.
  while (!poller_stop_.load(std::memory_order::acquire) && !ctx_.stopping()) {
    poll_once();
    timer_st_->ops.fetch_add(1, std::memory_order::relaxed);
    std::this_thread::sleep_for(nap);
  }
}

}  // namespace tlab::tool::runner
