// tlab/tool/oracles/timer_ledger.cc: the ledger's events and how each is judged
// as it happens (timer_ledger.h has the tables); timer_ledger_periodic.cc moves a
// periodic series from run to run; timer_ledger_checks.cc has the checks a client
// makes at its own moments, and the queries.
#include "oracles/timer_ledger.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "base/fmt_ns.h"
#include "oracles/ledger_arith.h"

namespace tlab::tool {

using ledger_arith::ledger_deadline;

namespace {

TimerLedger::Options checked_ledger_options(TimerLedger::Options o) {
  if (o.format == nullptr || !o.sink) {
    throw std::invalid_argument("TimerLedger: Options::format and Options::sink are required");
  }
  return o;
}

}  // namespace

std::string LedgerFormat::duration(std::int64_t ns) const { return fmt_ns(ns); }
std::string LedgerFormat::delay(std::int64_t ns) const { return fmt::format("{} ns", ns); }
std::string LedgerFormat::timer(std::uint64_t cookie) const {
  return fmt::format("cookie {}", cookie);
}
std::string LedgerFormat::handle(std::uint64_t, std::uint64_t handle) const {
  return fmt::format("handle 0x{:x}", handle);
}

TimerLedger::TimerLedger(Options options)
    : options_(checked_ledger_options(std::move(options))), f_(*options_.format) {
  StdLock lk(mu_);
  ring_.resize(options_.ring);
}

void TimerLedger::report(LedgerRule r, const std::string& sentence) {
  if (judges(r)) options_.sink(info_of(r).oracle, sentence);
}

std::uint64_t TimerLedger::doubtful_count() const {
  // Sequential: a TOO_LATE for an unfired timer was judged at once, after which
  // the timer may fire or not. Overlapping: it must still fire (judged at the
  // end), so only UNKNOWN makes a timer doubtful.
  return options_.order == LedgerOrder::kSequential ? disowned_ : unknown_open_;
}

const TimerLedger::Settled* TimerLedger::settled(std::uint64_t cookie) const {
  if (ring_.empty()) return nullptr;
  const Settled& s = ring_[cookie % ring_.size()];
  return s.cookie == cookie ? &s : nullptr;
}

void TimerLedger::settle(Live::iterator it, Outcome how, LedgerInstant at, LedgerInstant called_at,
                         std::string_view by) {
  const std::uint64_t cookie = it->first;
  const Record& r = it->second;
  if (r.fifo) {
    auto g = fifo_.find({r.owner, r.deadline});
    if (g != fifo_.end() && --g->second.unresolved == 0) fifo_.erase(g);
  }
  if (r.unknown) --unknown_open_;
  if (doubtful(r)) --disowned_;
  const std::uint64_t last = live_ids_.back();
  live_.find(last)->second.at_index = r.at_index;
  live_ids_[r.at_index] = last;
  live_ids_.pop_back();
  if (!ring_.empty()) {
    Settled& s = ring_[cookie % ring_.size()];
    static_cast<Facts&>(s) = r;
    s.cookie = cookie;
    s.how = how;
    s.at = at;
    s.called_at = called_at;
    s.by = by;
    s.thread = std::this_thread::get_id();
  }
  if (how != Outcome::kRefused && r.has_handle) {
    stale_[stale_count_++ % kStaleRing] = {cookie, r.handle};
  }
  live_.erase(it);
}

std::string TimerLedger::call(std::string_view who, std::uint64_t handle, std::uint64_t cookie,
                              LedgerInstant begin) const {
  return fmt::format("{}({}) of {}, called at {}", caller(who), f_.handle(cookie, handle),
                     f_.timer(cookie), f_.at(begin));
}

std::string TimerLedger::caller(std::string_view who) {
  return who.empty() ? std::string("cancel") : fmt::format("{}'s cancel", who);
}

std::string TimerLedger::of(std::string_view owner) {
  return owner.empty() ? std::string() : fmt::format(" of {}", owner);
}

std::string TimerLedger::too_late_sentence(std::uint64_t cookie, const Record& r,
                                           LedgerInstant now) const {
  if (r.period > 0) {
    return fmt::format(
        "{}({}) of {} returned TOO_LATE at {}, but that periodic series ({}) had not been "
        "stopped: it was still live at {} (a cancel of a live series stops it: PREVENTED)",
        caller(r.too_late_by), f_.handle(cookie, r.handle), f_.timer(cookie), f_.at(r.too_late_at),
        armed_as(r), f_.at(now));
  }
  return fmt::format(
      "{}({}) of {} returned TOO_LATE at {}, but the timer (due {}) had not "
      "fired by {}",
      caller(r.too_late_by), f_.handle(cookie, r.handle), f_.timer(cookie), f_.at(r.too_late_at),
      f_.time(r.deadline), f_.at(now));
}

// ---- schedules ----------------------------------------------------------------------

void TimerLedger::schedule(std::uint64_t cookie, const LedgerSchedule& s) {
  StdLock lk(mu_);
  auto [it, fresh] = live_.try_emplace(cookie);
  if (!fresh) return;  // a client's bug; the first schedule stands
  Record& r = it->second;
  r.owner = s.owner;
  r.scheduled = s.at;
  r.delay = s.delay;
  r.deadline = ledger_deadline(s.at.t, s.delay);
  r.fifo = s.fifo;
  r.mark = s.mark;
  r.pass = s.pass;
  r.chain = s.chain;
  r.chain_origin = s.chain_origin;
  if (s.period > 0) {
    r.period = s.period;
    r.periodic = s.periodic;
    r.grid0 = r.deadline;
    r.fifo = false;  // FIFO ties are judged among one-shot timers
  }
  r.at_index = live_ids_.size();
  live_ids_.push_back(cookie);
  max_cookie_ = std::max(max_cookie_, cookie);
  if (r.fifo) ++fifo_[{s.owner, r.deadline}].unresolved;
}

void TimerLedger::armed(std::uint64_t cookie, std::uint64_t handle,
                        std::optional<std::int64_t> late_from) {
  StdLock lk(mu_);
  ++armed_;
  auto it = live_.find(cookie);
  if (it != live_.end()) {
    Record& r = it->second;
    r.handle = handle;
    r.has_handle = true;
    // A series whose first run the firing thread reported before this call (the
    // scheduling thread's armed() can lag its schedule's return) has moved on:
    // next_run set the due time of the run to come, which this call predates.
    if (r.period == 0 || r.run == 0) r.late_from = late_from.value_or(r.scheduled.t);
    r.armed_step = step_;  // a poll that takes a later step began after this
  }
}

std::uint64_t TimerLedger::poll_began(LedgerInstant at) {
  StdLock lk(mu_);
  if (options_.order == LedgerOrder::kOverlapping) at.step = ++step_;
  poll_before_ = poll_now_;
  poll_now_ = at;
  starvation_reported_ = false;
  return ++polls_;
}

void TimerLedger::refused(std::uint64_t cookie, LedgerInstant at) {
  StdLock lk(mu_);
  if (options_.order == LedgerOrder::kOverlapping) at.step = step_;  // not a step of its own
  auto it = live_.find(cookie);
  if (it != live_.end()) settle(it, Outcome::kRefused, at, {}, {});
}

void TimerLedger::destroyed() {
  StdLock lk(mu_);
  destroyed_ = true;
}

// ---- fires --------------------------------------------------------------------------

LedgerFired TimerLedger::fired(std::uint64_t cookie, LedgerInstant now, std::string_view context) {
  StdLock lk(mu_);
  if (options_.order == LedgerOrder::kOverlapping) now.step = ++step_;
  if (destroyed_) {
    if (judges(LedgerRule::kAfterDestroy)) {
      report(LedgerRule::kAfterDestroy,
             fmt::format("{}fired(cookie {}) was called at {}, after destroy() had returned "
                         "(destroy must drop pending timers and join the subject's threads)",
                         context, cookie, f_.at(now)));
    }
    return {};
  }
  auto it = live_.find(cookie);
  if (it == live_.end()) {
    settled_fire(cookie, now, context);
    return {};
  }
  Record& r = it->second;
  if (r.period > 0 && r.running && judges(LedgerRule::kOverlappingRun)) {
    report(LedgerRule::kOverlappingRun,
           fmt::format("{}{}{}: run {} began at {} while run {} (at {}) was still in its "
                       "callback (one run of a series at a time)",
                       context, f_.timer(cookie), of(r.owner), r.run, f_.at(now),
                       r.run == 0 ? 0 : r.run - 1, f_.at(r.run_at)));
  }
  if (options_.lateness) options_.lateness(now.t - r.deadline);
  judge_fire(cookie, r, now, true, context);
  judge_late(cookie, r, now, context);
  LedgerFired out{true, r.mark, r.handle, r.has_handle};
  judge_pass(cookie, r, now, context, out);
  if (r.period > 0) {
    ++runs_;
    out.periodic = true;
    next_run(r, now);
    return out;
  }
  ++fired_;
  settle(it, Outcome::kFired, now, {}, {});
  return out;
}

void TimerLedger::judge_pass(std::uint64_t cookie, const Facts& f, LedgerInstant now,
                             std::string_view context, LedgerFired& out) {
  out.chain_origin = cookie;
  if (f.pass == 0 || f.pass != polls_) return;
  // A link of a chain within this poll: the one whose callback scheduled it was
  // itself link f.chain (0: it began the chain).
  out.chain = f.chain + 1;
  out.chain_origin = f.chain_origin != 0 ? f.chain_origin : cookie;
  report(LedgerRule::kSamePass,
         fmt::format("{}{}: scheduled (delay={}) from a callback of the poll at {} and fired in "
                     "that same poll at {} (a timer armed inside a pass runs in the next one)",
                     context, f_.timer(cookie), f_.delay(f.delay), f_.at(poll_now_), f_.at(now)));
  out.starving = out.chain >= options_.starvation_after;
  if (!out.starving || starvation_reported_) return;
  starvation_reported_ = true;
  report(LedgerRule::kStarvation,
         fmt::format("{}the poll at {} fired {} timers in one chain, each scheduled by the "
                     "callback of the one before within that poll, from {}'s callback to {}: a "
                     "callback chain re-armed within one pass keeps the poll from returning, so "
                     "nothing else is delivered; tlab stopped re-arming from callbacks for the "
                     "rest of this poll",
                     context, f_.at(poll_now_), out.chain, f_.timer(out.chain_origin),
                     f_.timer(cookie)));
}

void TimerLedger::judge_fire(std::uint64_t cookie, const Facts& f, LedgerInstant now, bool first,
                             std::string_view context) {
  if (now.t < f.deadline && judges(LedgerRule::kEarly)) {
    report(LedgerRule::kEarly,
           fmt::format("{}{}{}: {} (due at {}) fired at {}, {} before its deadline", context,
                       f_.timer(cookie), of(f.owner), armed_as(f), f_.time(f.deadline), f_.at(now),
                       f_.duration(f.deadline - now.t)));
  }
  if (!f.fifo) return;
  // Judged at the earlier tie's fire: by then every later tie that fired first has
  // reached the ledger, whichever thread it came from.
  auto g = first ? fifo_.find({f.owner, f.deadline}) : fifo_.end();
  if (g != fifo_.end()) {
    if (g->second.fired_cookie > cookie && judges(LedgerRule::kFifoLaterFirst)) {
      report(LedgerRule::kFifoLaterFirst,
             fmt::format("{}{}: cookies {} and {} share the deadline {} and were scheduled in "
                         "that order, but cookie {} fired first (cookie {} at {})",
                         context, f.owner, cookie, g->second.fired_cookie, f_.time(f.deadline),
                         g->second.fired_cookie, cookie, f_.at(now)));
    }
    g->second.fired_cookie = std::max(g->second.fired_cookie, cookie);
  }
  // Judged at the later tie's fire: only where no cancel of the earlier one can be
  // in flight (sequential order).
  if (!judges(LedgerRule::kFifoEarlierArmed)) return;
  std::uint64_t earlier = 0;
  for (const auto& [c, u] : live_) {
    if (c < cookie && (earlier == 0 || c < earlier) && u.fifo && !doubtful(u) &&
        u.owner == f.owner && u.deadline == f.deadline) {
      earlier = c;
    }
  }
  if (earlier != 0) {
    report(LedgerRule::kFifoEarlierArmed,
           fmt::format("{}{} has the same deadline, was scheduled first and has not fired", context,
                       f_.timer(earlier)));
  }
}

void TimerLedger::judge_late(std::uint64_t cookie, const Facts& f, LedgerInstant now,
                             std::string_view context) {
  if (!options_.late_allowance || !judges(LedgerRule::kLate)) return;
  // The poll before this fire's must have begun after armed() was told (a poll
  // racing the schedule call may not have seen the timer) and at or past the
  // due time plus the allowance.
  const LedgerInstant& p = poll_before_;
  if (p.step == 0 || f.armed_step == UINT64_MAX || p.step <= f.armed_step) return;
  // A periodic run's late_from is its due time already (next_run).
  const std::int64_t due = f.period > 0 && f.run > 0
                               ? f.late_from
                               : ledger_deadline(f.late_from, std::max<std::int64_t>(f.delay, 0));
  const std::int64_t bound = ledger_deadline(due, *options_.late_allowance);
  if (due == INT64_MAX || p.t < bound) return;
  report(LedgerRule::kLate,
         fmt::format("{}{}{}: {} (due at {}) fired at {}, {} after its due time, but the poll "
                     "at {} had already passed it over (a loop subject fires a timer no later "
                     "than the first poll at or after its due time + {})",
                     context, f_.timer(cookie), of(f.owner), armed_as(f), f_.time(due), f_.at(now),
                     f_.duration(now.t - due), f_.at(p), f_.duration(*options_.late_allowance)));
}

void TimerLedger::settled_fire(std::uint64_t cookie, LedgerInstant now, std::string_view context) {
  if (cookie == 0 || cookie > max_cookie_) {
    if (judges(LedgerRule::kNeverScheduled)) {
      report(LedgerRule::kNeverScheduled,
             fmt::format("{}fired(cookie {}) at {}: tlab never passed that cookie to schedule()",
                         context, cookie, f_.at(now)));
    }
    return;
  }
  const Settled* s = settled(cookie);
  if (s == nullptr) {
    if (judges(LedgerRule::kFiredTwice)) {
      report(LedgerRule::kFiredTwice,
             fmt::format("{}fired(cookie {}) at {}, but that timer had already fired or been "
                         "prevented (more than {} timers ago, so its first outcome is no longer "
                         "kept)",
                         context, cookie, f_.at(now), ring_.size()));
    }
    return;
  }
  switch (s->how) {
    case Outcome::kFired:
      if (judges(LedgerRule::kFiredTwice)) {
        report(
            LedgerRule::kFiredTwice,
            fmt::format("{}{} ({}) fired twice: first at {}, again at {}", context,
                        f_.timer(cookie), f_.handle(cookie, s->handle), f_.at(s->at), f_.at(now)));
      }
      return;
    case Outcome::kPrevented: {
      if (options_.order == LedgerOrder::kSequential) {
        // No call overlaps a fire: it came after the PREVENTED call returned. It is
        // still a fire (early, FIFO), and the timer has fired from now on.
        fire_vs_prevented(
            cookie, s->handle, now, FireWhen::kAfter, s->by, s->called_at, s->at, context,
            s->period > 0 ? fmt::format(": a run of the stopped series ({})", armed_as(*s))
                          : std::string());
        Settled& m = ring_[cookie % ring_.size()];
        judge_fire(cookie, m, now, false, context);
        m.how = Outcome::kFired;
        m.at = now;
        return;
      }
      // The PREVENTED result was recorded first, so in the ledger's steps this fire
      // came after the call returned; the clocks say whether fired() began while
      // the call was still in flight (a subject's thread waiting for the lock).
      // On the thread that made the call (a cancel from a callback, a virtual
      // case), fired() began after the call returned, whatever the clocks say.
      const FireWhen when = s->thread == std::this_thread::get_id() ? FireWhen::kAfter
                            : now.t < s->called_at.t                ? FireWhen::kBefore
                            : now.t <= s->at.t                      ? FireWhen::kDuring
                                                                    : FireWhen::kAfter;
      // A run of a series that began before or during the call may finish.
      if (s->period > 0 && when != FireWhen::kAfter) return;
      fire_vs_prevented(cookie, s->handle, now, when, s->by, s->called_at, s->at, context,
                        s->period > 0
                            ? fmt::format(": a run of the stopped series ({})", armed_as(*s))
                            : std::string());
      return;
    }
    case Outcome::kRefused:
      if (judges(LedgerRule::kFiredRefused)) {
        report(LedgerRule::kFiredRefused,
               fmt::format("{}{} fired at {} although its schedule() at {} returned an error "
                           "(nothing was to be armed)",
                           context, f_.timer(cookie), f_.at(now), f_.at(s->at)));
      }
      return;
    case Outcome::kNone:
      return;
  }
}

void TimerLedger::fire_vs_prevented(std::uint64_t cookie, std::uint64_t handle,
                                    LedgerInstant fired_at, FireWhen when, std::string_view who,
                                    LedgerInstant begin, LedgerInstant end, std::string_view prefix,
                                    const std::string& note) {
  const LedgerRule rule =
      when == FireWhen::kAfter ? LedgerRule::kFiredAfterPrevented : LedgerRule::kPreventedFired;
  if (!judges(rule)) return;
  const std::string c = call(who, handle, cookie, begin);
  switch (when) {
    case FireWhen::kBefore:
      report(rule, fmt::format("{}{} returned PREVENTED at {}, but the timer had fired at {}, "
                               "before the call began{}",
                               prefix, c, f_.at(end), f_.at(fired_at), note));
      return;
    case FireWhen::kDuring:
      report(rule, fmt::format("{}{} returned PREVENTED at {}, but the timer fired at {}, while "
                               "the call was in flight (PREVENTED promises it never fires){}",
                               prefix, c, f_.at(end), f_.at(fired_at), note));
      return;
    case FireWhen::kAfter:
      report(rule, fmt::format("{}{} fired at {} although {} had returned "
                               "TLAB_CANCEL_PREVENTED at {}{}",
                               prefix, f_.timer(cookie), f_.at(fired_at), c, f_.at(end), note));
      return;
  }
}

// ---- cancels --------------------------------------------------------------------------

std::uint64_t TimerLedger::step() {
  StdLock lk(mu_);
  return ++step_;
}

// Each result is judged against what is already recorded, whichever thread got
// there first; a contradiction between two calls counts only when one returned
// before the other began (their begin and end steps against the other's).
void TimerLedger::cancelled(const LedgerCancel& c, std::int32_t result) {
  StdLock lk(mu_);
  auto it = live_.find(c.cookie);
  const Settled* s = it == live_.end() ? settled(c.cookie) : nullptr;
  switch (result) {
    case TLAB_CANCEL_PREVENTED:
      if (it != live_.end()) {
        const Record& l = it->second;
        if (l.too_late && l.too_late_at.step < c.begin.step &&
            judges(LedgerRule::kPreventedVsTooLate)) {
          report(LedgerRule::kPreventedVsTooLate,
                 fmt::format("{} returned PREVENTED at {}, but {} had returned TOO_LATE at {}, "
                             "before this call began (it had not fired)",
                             call(c.who, c.handle, c.cookie, c.begin), f_.at(c.end),
                             caller(l.too_late_by), f_.at(l.too_late_at)));
        }
        ++prevented_;
        settle(it, Outcome::kPrevented, c.end, c.begin, c.who);
        return;
      }
      prevented_settled(c, s);
      return;
    case TLAB_CANCEL_TOO_LATE:
      if (it != live_.end()) {
        Record& l = it->second;
        if (options_.order == LedgerOrder::kSequential && !doubtful(l) &&
            judges(LedgerRule::kTooLateUnfired)) {
          Record said = l;
          said.too_late_by = c.who;
          said.too_late_at = c.end;
          report(LedgerRule::kTooLateUnfired, too_late_sentence(c.cookie, said, c.end));
        }
        // Overlapping: judged at the end (overdue()): a TOO_LATE timer must have
        // fired (or been prevented by a call that began before this one returned).
        if (!l.too_late || c.end.step < l.too_late_at.step) {
          if (!doubtful(l)) ++disowned_;
          l.too_late = true;
          l.too_late_at = c.end;
          l.too_late_by = c.who;
        }
      } else if (s != nullptr && s->how == Outcome::kPrevented && c.end.step < s->called_at.step &&
                 judges(LedgerRule::kPreventedVsTooLate)) {
        report(LedgerRule::kPreventedVsTooLate,
               fmt::format("{} returned TOO_LATE at {}, before {}, called at {}, returned "
                           "PREVENTED for it at {} (it had not fired)",
                           call(c.who, c.handle, c.cookie, c.begin), f_.at(c.end), caller(s->by),
                           f_.at(s->called_at), f_.at(s->at)));
      }
      return;
    case TLAB_CANCEL_UNKNOWN:
      if (it != live_.end() && !it->second.unknown) {
        if (!it->second.too_late) ++disowned_;
        it->second.unknown = true;
        ++unknown_open_;
      }
      return;
    default:
      return;
  }
}

void TimerLedger::prevented_settled(const LedgerCancel& c, const Settled* s) {
  // Which rule the answer breaks: the timer fired (before, during or after the
  // call), or it was prevented already, or its outcome is no longer kept.
  FireWhen when = FireWhen::kAfter;
  LedgerRule rule = LedgerRule::kPreventedTwice;
  if (s != nullptr && s->how == Outcome::kFired) {
    // Exact here: both the fire and the call's ends are steps.
    when = s->at.step < c.begin.step ? FireWhen::kBefore
           : s->at.step < c.end.step ? FireWhen::kDuring
                                     : FireWhen::kAfter;
    rule =
        when == FireWhen::kAfter ? LedgerRule::kFiredAfterPrevented : LedgerRule::kPreventedFired;
  } else if (s != nullptr && s->how != Outcome::kPrevented) {
    return;  // refused: no claim to contradict
  }
  if (!judges(rule)) return;
  const std::string note =
      c.why.empty() ? std::string() : std::string(c.why) + holder_of(c.handle, c.cookie);
  if (s != nullptr && s->how == Outcome::kFired) {
    fire_vs_prevented(c.cookie, c.handle, s->at, when, c.who, c.begin, c.end, {}, note);
  } else if (s != nullptr) {
    report(rule, fmt::format("{} returned PREVENTED at {}, but {}, called at {}, had also "
                             "returned PREVENTED for it (at {}): only one cancel can prevent a "
                             "timer{}",
                             call(c.who, c.handle, c.cookie, c.begin), f_.at(c.end), caller(s->by),
                             f_.at(s->called_at), f_.at(s->at), note));
  } else {
    report(rule,
           fmt::format("{} returned PREVENTED at {}, but that timer had already fired or "
                       "been prevented (more than {} timers ago, so its outcome is no "
                       "longer kept){}",
                       call(c.who, c.handle, c.cookie, c.begin), f_.at(c.end), ring_.size(), note));
  }
}

std::string TimerLedger::holder_of(std::uint64_t handle, std::uint64_t cookie) const {
  for (const auto& [k, l] : live_) {
    if (k != cookie && l.has_handle && l.handle == handle) {
      return fmt::format(
          "; the handle's value now names live {}{} (scheduled at {}), which must "
          "still fire",
          f_.timer(k), of(l.owner), f_.at(l.scheduled));
    }
  }
  return "";
}

}  // namespace tlab::tool
