// tlab/tool/runner/engine_subject_facility.cc: the facility case's calls and how
// each result is judged as it happens (engine_subject_facility.h has the tables).
#include <algorithm>
#include <chrono>
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

void FacilityCase::on_fired(std::uint64_t cookie) {
  // "now" on the subject's clock: the poll's now for a HOST loop subject (what
  // it was told), else CLOCK_MONOTONIC as the subject itself would read it.
  // relaxed: poll_now_ is written by this same thread just before poll().
  const std::int64_t now =
      virtual_ || (loop_ && host_clock_) ? poll_now_.load(std::memory_order::relaxed) : monotonic_ns();
  std::lock_guard lk(mu_);
  ++seq_;
  if (destroyed_) {
    ctx_.violation(Oracle::kFiredAfterCancel,
                   fmt::format("fired(cookie {}) was called at {}, after destroy() had returned "
                               "(destroy must drop pending timers and join the subject's threads)",
                               cookie, at(now)));
    return;
  }
  auto it = live_.find(cookie);
  if (it == live_.end()) {
    late_fire(cookie, now);
    return;
  }
  Live& r = it->second;
  fire_log_->sample(Latency::kFireLateness, now - r.deadline);
  if (now < r.deadline) {
    ctx_.violation(Oracle::kEarlyFire,
                   fmt::format("cookie {} of {}: schedule(now, delay={} ns) called at {} (due at "
                               "{}) fired at {}, {} before its deadline",
                               cookie, r.owner->name, r.delay, at(r.scheduled_at), at(r.deadline),
                               at(now), fmt_ns(r.deadline - now)));
  }
  if (r.aligned) {
    auto g = fifo_.find({r.owner, r.deadline});
    if (g != fifo_.end()) {
      if (g->second.fired_cookie > cookie) {
        ctx_.violation_named(
            "fifo_order",
            fmt::format("{}: cookies {} and {} share the deadline {} and were scheduled in that "
                        "order, but cookie {} fired first (cookie {} at {})",
                        r.owner->name, cookie, g->second.fired_cookie, at(r.deadline),
                        g->second.fired_cookie, cookie, at(now)));
      }
      g->second.fired_cookie = std::max(g->second.fired_cookie, cookie);
    }
  }
  ++fired_;
  settle(cookie, r, Outcome::kFired, now, seq_, nullptr);
}

bool FacilityCase::excused_by_failure(std::uint64_t cookie) const {
  return !extras_.contains_errors && extras_.excused_after_failure != nullptr &&
         extras_.excused_after_failure(calls_.self, cookie, overdue_grace_);
}

void FacilityCase::late_fire(std::uint64_t cookie, std::int64_t now) {
  if (cookie == 0 || cookie >= next_cookie_.load(std::memory_order::relaxed)) {
    ctx_.violation(Oracle::kDoubleResume,
                   fmt::format("fired(cookie {}) at {}: tlab never passed that cookie to "
                               "schedule()",
                               cookie, at(now)));
    return;
  }
  const Settled* s = settled(cookie);
  if (s == nullptr) {
    ctx_.violation(Oracle::kDoubleResume,
                   fmt::format("fired(cookie {}) at {}, but that timer had already fired or been "
                               "prevented (more than {} timers ago, so its first outcome is no "
                               "longer kept)",
                               cookie, at(now), kSettledRing));
    return;
  }
  switch (s->how) {
    case Outcome::kFired:
      ctx_.violation(Oracle::kDoubleResume,
                     fmt::format("cookie {} (handle 0x{:x}) fired twice: first at {}, again at {}",
                                 cookie, s->handle, at(s->at), at(now)));
      return;
    case Outcome::kPrevented: {
      // The PREVENTED result was judged first, so in tlab's steps this fire came
      // after the call returned; the clocks say whether fired() began while the
      // call was still in flight (a subject's thread waiting for the record lock).
      const FireWhen when = now < s->called_at ? FireWhen::kBefore
                            : now <= s->at     ? FireWhen::kDuring
                                               : FireWhen::kAfter;
      fire_vs_prevented(cookie, s->handle, now, when, *s->by, s->called_at, s->at);
      return;
    }
    case Outcome::kRefused:
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("cookie {} fired at {} although its schedule() at {} returned "
                                 "an error (nothing was to be armed)",
                                 cookie, at(now), at(s->at)));
      return;
    case Outcome::kNone:
      return;
  }
}

void FacilityCase::settle(std::uint64_t cookie, Live& r, Outcome how, std::int64_t when,
                          std::uint64_t seq, const std::string* by, std::int64_t called_at) {
  if (r.aligned) {
    auto g = fifo_.find({r.owner, r.deadline});
    if (g != fifo_.end() && --g->second.unresolved == 0) fifo_.erase(g);
  }
  if (r.unknown) --unknown_open_;
  if (r.unknown || r.too_late) --disowned_;
  const std::uint64_t last = live_ids_.back();
  live_[last].at_index = r.at_index;
  live_ids_[r.at_index] = last;
  live_ids_.pop_back();
  ring_[cookie % kSettledRing] = {cookie, how, when, called_at, seq, r.handle, by};
  if (how != Outcome::kRefused && r.has_handle) stale_[stale_count_++ % kStaleRing] = {cookie, r.handle};
  live_.erase(cookie);
}

const FacilityCase::Settled* FacilityCase::settled(std::uint64_t cookie) const {
  const Settled& s = ring_[cookie % kSettledRing];
  return s.cookie == cookie ? &s : nullptr;
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
  std::uint64_t cookie = 0, handle = 0;
  if (!schedule_timer(r, delay, align, cookie, handle)) return false;
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
                                  std::uint64_t& cookie, std::uint64_t& handle) {
  const tlab_subject& d = calls_.d();
  const bool fail = r.spec != nullptr && r.spec->role == Role::kThrower;
  cookie = next_cookie_.fetch_add(1, std::memory_order::relaxed);  // a unique number
  std::int64_t t = 0, used = delay, c0 = 0, c1 = 0;
  std::uint64_t h = 0;
  std::int32_t st = TLAB_EFAIL;
  calls_(
      [&] {
        t = host_now();
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
        {
          std::lock_guard lk(mu_);
          Live& l = live_[cookie];
          l.owner = r.st;
          l.scheduled_at = t;
          l.delay = used;
          l.deadline = sat_add(t, used);
          l.aligned = aligned;
          l.at_index = live_ids_.size();
          live_ids_.push_back(cookie);
          if (aligned) ++fifo_[{r.st, l.deadline}].unresolved;
        }
        c0 = steady_ns();
        st = fail ? extras_.schedule_failing(calls_.self, t, used, cookie, &h)
                  : d.schedule(calls_.self, t, used, cookie, &h);
        c1 = steady_ns();
      },
      r.st, cookie);
  if (st == TLAB_OK) {
    r.log->sample(Latency::kScheduleCost, c1 - c0);
    ctx_.add(fail ? "thrower_tasks" : "scheduled");
    handle = h;
    std::lock_guard lk(mu_);
    ++armed_;
    auto it = live_.find(cookie);
    if (it != live_.end()) {
      it->second.handle = h;
      it->second.has_handle = true;
    }
    return true;
  }
  const std::string call =
      fmt::format("{}: schedule(now, delay={} ns, cookie={}) at {}", r.st->name, used, cookie, at(t));
  const bool excused = excused_by_failure(cookie);
  {
    std::lock_guard lk(mu_);
    auto it = live_.find(cookie);
    if (it != live_.end()) settle(cookie, it->second, Outcome::kRefused, t, seq_, nullptr);
  }
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
  CancelCall c{cookie};
  {
    std::lock_guard lk(mu_);
    auto it = live_.find(cookie);
    if (it == live_.end() || !it->second.has_handle) return;
    c.handle = it->second.handle;
  }
  call_cancel(c, who, log);
}

void FacilityCase::rearm_held(ActorRun& r, std::mt19937_64& rng) {
  CancelCall c{r.held_cookie, r.held_handle};
  c.rearm = true;
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
  CancelCall c;
  c.stale = true;
  {
    std::lock_guard lk(mu_);
    if (stale_count_ == 0) return;
    const std::uint64_t n = std::min<std::uint64_t>(stale_count_, kStaleRing);
    const Stale& s = stale_[std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng)];
    c.cookie = s.cookie;
    c.handle = s.handle;
  }
  ctx_.add("stale_cancels");
  call_cancel(c, who, log);
}

std::string FacilityCase::holder_of(std::uint64_t handle, std::uint64_t cookie) const {
  for (const auto& [k, l] : live_) {
    if (k != cookie && l.has_handle && l.handle == handle) {
      return fmt::format("; the handle's value now names live cookie {} of {} (scheduled at {}), "
                         "which must still fire",
                         k, l.owner->name, at(l.scheduled_at));
    }
  }
  return "";
}

std::int32_t FacilityCase::call_cancel(CancelCall& c, ActorState& who, ActorLog& log) {
  const tlab_subject& d = calls_.d();
  const std::uint64_t cookie = c.cookie;
  std::int32_t res = 0, st = TLAB_EFAIL;
  std::int64_t c0 = 0, c1 = 0;
  calls_([&] {
    c.t0 = host_now();
    {
      std::lock_guard lk(mu_);
      c.began = ++seq_;
    }
    c0 = steady_ns();
    st = d.cancel(calls_.self, c.handle, &res);
    c1 = steady_ns();
    c.t1 = host_now();
    {
      std::lock_guard lk(mu_);
      c.ended = ++seq_;  // before any other thread can judge a later call against it
    }
  }, &who, cookie);
  log.sample(Latency::kCancelCost, c1 - c0);
  if (st == TLAB_EINVAL) {
    ctx_.add("cancel_einval");  // a handle the subject no longer knows: no claim
  } else if (st == TLAB_ENOMEM) {
    ctx_.add("cancel_enomem");
  } else if (st != TLAB_OK) {
    driver_error(fmt::format("{}: cancel(handle 0x{:x}) of cookie {} at {} returned {}", who.name,
                             c.handle, cookie, at(c.t0), status_name(st)));
  } else {
    on_cancel_result(c, res, who.name);
    return res;
  }
  return 0;
}

void FacilityCase::fire_vs_prevented(std::uint64_t cookie, std::uint64_t handle,
                                     std::int64_t fired_at, FireWhen when, const std::string& who,
                                     std::int64_t t0, std::int64_t t1,
                                     const std::string& note) {
  const std::string call = fmt::format("{}'s cancel(handle 0x{:x}) of cookie {}, called at {}", who,
                                       handle, cookie, at(t0));
  switch (when) {
    case FireWhen::kBefore:
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("{} returned PREVENTED at {}, but the timer had fired at {}, "
                                 "before the call began{}",
                                 call, at(t1), at(fired_at), note));
      return;
    case FireWhen::kDuring:
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("{} returned PREVENTED at {}, but the timer fired at {}, while "
                                 "the call was in flight (PREVENTED promises it never fires){}",
                                 call, at(t1), at(fired_at), note));
      return;
    case FireWhen::kAfter:
      ctx_.violation(Oracle::kFiredAfterCancel,
                     fmt::format("cookie {} fired at {} although {} had returned "
                                 "TLAB_CANCEL_PREVENTED at {}{}",
                                 cookie, at(fired_at), call, at(t1), note));
      return;
  }
}

// Each result is judged against what is already recorded, whichever thread got
// there first; a contradiction between two calls counts only when one returned
// before the other began (c.began, c.ended against the other's steps).
void FacilityCase::on_cancel_result(const CancelCall& c, std::int32_t result,
                                    const std::string& who) {
  const std::string call = fmt::format("{}'s cancel(handle 0x{:x}) of cookie {}, called at {}",
                                       who, c.handle, c.cookie, at(c.t0));
  std::lock_guard lk(mu_);
  auto it = live_.find(c.cookie);
  const Settled* s = it == live_.end() ? settled(c.cookie) : nullptr;
  switch (result) {
    case TLAB_CANCEL_PREVENTED: {
      if (it != live_.end()) {
        const Live& l = it->second;
        if (l.too_late && l.too_late_seq < c.began) {
          ctx_.violation(Oracle::kWrongResult,
                         fmt::format("{} returned PREVENTED at {}, but {}'s cancel had returned "
                                     "TOO_LATE at {}, before this call began (it had not fired)",
                                     call, at(c.t1), *l.too_late_by, at(l.too_late_at)));
        }
        ++prevented_;
        settle(c.cookie, it->second, Outcome::kPrevented, c.t1, c.began, &who, c.t0);
        return;
      }
      const std::string note =
          c.stale   ? "; a stale cancel (tlab cancelled a settled timer's handle on purpose: it "
                      "must answer TOO_LATE or UNKNOWN and touch no other timer)" +
                          holder_of(c.handle, c.cookie)
          : c.rearm ? "; a re-arm (a scheduler cancelled the timer it holds, which had settled "
                      "meanwhile: it must answer TOO_LATE or UNKNOWN and touch no other timer)" +
                          holder_of(c.handle, c.cookie)
                    : std::string();
      if (s != nullptr && s->how == Outcome::kFired) {
        // Exact here: both the fire and the call's ends are steps of seq_.
        const FireWhen when = s->seq < c.began   ? FireWhen::kBefore
                              : s->seq < c.ended ? FireWhen::kDuring
                                                 : FireWhen::kAfter;
        fire_vs_prevented(c.cookie, c.handle, s->at, when, who, c.t0, c.t1, note);
      } else if (s != nullptr && s->how == Outcome::kPrevented) {
        ctx_.violation(Oracle::kWrongResult,
                       fmt::format("{} returned PREVENTED at {}, but {}'s cancel, called at {}, "
                                   "had also returned PREVENTED for it (at {}): only one cancel "
                                   "can prevent a timer{}",
                                   call, at(c.t1), *s->by, at(s->called_at), at(s->at), note));
      } else if (s == nullptr) {
        ctx_.violation(Oracle::kWrongResult,
                       fmt::format("{} returned PREVENTED at {}, but that timer had already fired "
                                   "or been prevented (more than {} timers ago, so its outcome "
                                   "is no longer kept){}",
                                   call, at(c.t1), kSettledRing, note));
      }
      return;
    }
    case TLAB_CANCEL_TOO_LATE:
      // Judged at the end: a TOO_LATE timer must have fired (or been prevented by
      // a call that began before this one returned) by then.
      if (it != live_.end()) {
        Live& l = it->second;
        if (!l.too_late || c.ended < l.too_late_seq) {
          if (!l.too_late && !l.unknown) ++disowned_;
          l.too_late = true;
          l.too_late_at = c.t1;
          l.too_late_seq = c.ended;
          l.too_late_by = &who;
        }
      } else if (s != nullptr && s->how == Outcome::kPrevented && c.ended < s->seq) {
        ctx_.violation(Oracle::kWrongResult,
                       fmt::format("{} returned TOO_LATE at {}, before {}'s cancel, called at {}, "
                                   "returned PREVENTED for it at {} (it had not fired)",
                                   call, at(c.t1), *s->by, at(s->called_at), at(s->at)));
      }
      return;
    case TLAB_CANCEL_UNKNOWN:
      ctx_.add("cancel_unknown");
      if (it != live_.end() && !it->second.unknown) {
        if (!it->second.too_late) ++disowned_;
        it->second.unknown = true;
        ++unknown_open_;
      }
      return;
    default:
      driver_error(fmt::format("{} returned TLAB_OK with result {}, which is no "
                               "tlab_cancel_result",
                               call, result));
  }
}

std::uint64_t FacilityCase::pick_live(std::mt19937_64& rng) {
  std::lock_guard lk(mu_);
  if (live_ids_.empty()) return 0;
  return live_ids_[std::uniform_int_distribution<std::size_t>(0, live_ids_.size() - 1)(rng)];
}

std::uint64_t FacilityCase::outstanding() {
  std::lock_guard lk(mu_);
  return live_.size() - disowned_;
}

bool FacilityCase::blocked_by_pending() {
  std::lock_guard lk(mu_);
  const std::uint64_t n = live_.size() - disowned_;
  if (n < s_.run.max_pending) return false;
  const std::int64_t now = host_now();
  std::uint64_t overdue = 0;
  for (const auto& [cookie, l] : live_) {
    // Disowned timers (TOO_LATE, UNKNOWN) are already left out of n.
    if (!l.too_late && !l.unknown && l.deadline < now &&
        waited_ns(l.deadline, now) > overdue_grace_) {
      ++overdue;
    }
  }
  return n - std::min(n, overdue) >= s_.run.max_pending;
}

void FacilityCase::poll_once() {
  std::int32_t st = TLAB_EFAIL;
  std::int64_t t = 0;
  calls_(
      [&] {
        t = host_now();
        poll_now_.store(t, std::memory_order::relaxed);  // read by fired() on this thread
        st = calls_.d().poll(calls_.self, t);
      },
      timer_st_);
  if (st != TLAB_OK) driver_error(fmt::format("poll(now) at {} returned {}", at(t), status_name(st)));
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
    const std::uint64_t cookie = stale ? 0 : pick_live(rng);
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
  const auto nap = std::chrono::microseconds(std::clamp<std::int64_t>(s_.engine.tick_us / 2, 20, 1000));
  // acquire: pairs with drain_and_check's release; stops after the last drain poll.
  while (!poller_stop_.load(std::memory_order::acquire) && !ctx_.stopping()) {
    poll_once();
    timer_st_->ops.fetch_add(1, std::memory_order::relaxed);
    std::this_thread::sleep_for(nap);
  }
}

}  // namespace tlab::tool::runner
