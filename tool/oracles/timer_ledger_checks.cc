// tlab/tool/oracles/timer_ledger_checks.cc: the checks a client of the ledger
// makes at its own moments (overdue timers, pending() and a pending list) and the
// queries the drivers steer by (timer_ledger.h has the tables).
#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "oracles/timer_ledger.h"

namespace tlab::tool {

// ---- checks ---------------------------------------------------------------------------

std::string TimerLedger::lost_sentence(std::uint64_t cookie, const Record& r, LedgerInstant now,
                                       std::string_view context, std::string_view until) const {
  if (r.period > 0) {
    return fmt::format("{}{}{}: {} returned {}; its run {} was due at {} and had not begun by {}{}",
                       context, f_.timer(cookie), of(r.owner), armed_as(r),
                       f_.handle(cookie, r.handle), r.run, f_.time(due_of(r)), f_.at(now), until);
  }
  return fmt::format(
      "{}{}{}: schedule(now, delay={}) at {} returned {}, due at {}; neither "
      "fired nor prevented by {}{}",
      context, f_.timer(cookie), of(r.owner), f_.delay(r.delay), f_.at(r.scheduled),
      f_.handle(cookie, r.handle), f_.time(r.deadline), f_.at(now), until);
}

std::uint64_t TimerLedger::overdue(LedgerInstant now, std::int64_t horizon, std::string_view until,
                                   const std::function<bool(std::uint64_t)>& excused) {
  StdLock lk(mu_);
  const bool too_late_pending = options_.order == LedgerOrder::kOverlapping;
  std::vector<std::uint64_t> due;
  for (const auto& [cookie, r] : live_) {
    if ((r.too_late && too_late_pending) || (!doubtful(r) && due_of(r) <= horizon)) {
      due.push_back(cookie);
    }
  }
  std::sort(due.begin(), due.end());
  std::uint64_t n_excused = 0;
  for (const std::uint64_t cookie : due) {
    const Record& r = live_.find(cookie)->second;
    if (r.too_late) {
      // Its cancel said it had fired or was firing, and it never did.
      if (judges(LedgerRule::kTooLateUnfired)) {
        report(LedgerRule::kTooLateUnfired, too_late_sentence(cookie, r, now));
      }
    } else if (excused && excused(cookie)) {
      ++n_excused;
    } else if (judges(LedgerRule::kLost)) {
      report(LedgerRule::kLost, lost_sentence(cookie, r, now, {}, until));
    }
  }
  return n_excused;
}

bool TimerLedger::lost(std::uint64_t cookie, LedgerInstant now, std::string_view context,
                       std::string_view until) {
  StdLock lk(mu_);
  const auto it = live_.find(cookie);
  if (it == live_.end()) return false;
  if (judges(LedgerRule::kLost)) {
    report(LedgerRule::kLost, lost_sentence(cookie, it->second, now, context, until));
  }
  return true;
}

LedgerWindow TimerLedger::pending_window() {
  StdLock lk(mu_);
  return {armed_ - fired_ - prevented_, doubtful_count()};
}

void TimerLedger::pending_count(std::uint64_t count, const LedgerWindow& before,
                                std::string_view when, LedgerInstant now) {
  StdLock lk(mu_);
  // A SELF subject may fire while pending() runs: any count between the open
  // timers after the call and before it is consistent; doubtful timers may be gone.
  const std::uint64_t after = armed_ - fired_ - prevented_;
  const std::uint64_t doubt = doubtful_count();
  const std::uint64_t lo = after - std::min(after, std::max(before.doubtful, doubt));
  if (count >= lo && count <= before.open) return;
  const std::int64_t gap = static_cast<std::int64_t>(count) - static_cast<std::int64_t>(after);
  if (gap == reported_gap_) return;  // the same discrepancy, still there: reported once
  reported_gap_ = gap;
  if (!judges(LedgerRule::kPendingCount)) return;
  report(LedgerRule::kPendingCount,
         fmt::format(
             "pending() returned {}{}{} (at {}), but scheduled {} - fired {} - prevented "
             "{} = {} ({} with {} cancel)",
             count, when.empty() ? "" : " ", when, f_.at(now), armed_, fired_, prevented_, after,
             doubt,
             options_.order == LedgerOrder::kSequential ? "a TOO_LATE or UNKNOWN" : "an UNKNOWN"));
}

void TimerLedger::pending_list(const std::vector<std::uint64_t>& cookies,
                               std::string_view context) {
  StdLock lk(mu_);
  if (!judges(LedgerRule::kPendingList)) return;
  const std::unordered_set<std::uint64_t> listed(cookies.begin(), cookies.end());
  for (const std::uint64_t cookie : cookies) {
    if (live_.count(cookie) == 0) {
      report(LedgerRule::kPendingList,
             fmt::format("{}the pending list names {}, which is not armed (it fired, was "
                         "prevented, was refused, or was never scheduled)",
                         context, f_.timer(cookie)));
    }
  }
  std::vector<std::uint64_t> omitted;
  for (const auto& [cookie, r] : live_) {
    // A cancel that said UNKNOWN makes no claim: its timer may be gone.
    if (!r.unknown && listed.count(cookie) == 0) omitted.push_back(cookie);
  }
  std::sort(omitted.begin(), omitted.end());
  for (const std::uint64_t cookie : omitted) {
    const Record& r = live_.find(cookie)->second;
    report(LedgerRule::kPendingList,
           fmt::format("{}the pending list omits {} (scheduled at {}, delay {}, neither fired "
                       "nor prevented)",
                       context, f_.timer(cookie), f_.at(r.scheduled), f_.delay(r.delay)));
  }
}

// ---- queries --------------------------------------------------------------------------

bool TimerLedger::is_live(std::uint64_t cookie) {
  StdLock lk(mu_);
  return live_.count(cookie) != 0;
}

std::optional<LedgerView> TimerLedger::view(std::uint64_t cookie) {
  StdLock lk(mu_);
  const auto it = live_.find(cookie);
  if (it == live_.end()) return std::nullopt;
  const Record& r = it->second;
  return LedgerView{cookie, r.handle, r.has_handle, r.scheduled, r.delay, due_of(r), r.period};
}

bool TimerLedger::accepted(std::uint64_t cookie) {
  StdLock lk(mu_);
  if (live_.count(cookie) != 0) return true;
  const Settled* s = settled(cookie);
  return s != nullptr && (s->how == Outcome::kFired || s->how == Outcome::kPrevented);
}

std::vector<LedgerView> TimerLedger::timers(LedgerWhich which) {
  StdLock lk(mu_);
  std::vector<LedgerView> out;
  for (const auto& [cookie, r] : live_) {
    if (which != LedgerWhich::kArmed || !doubtful(r)) {
      out.push_back({cookie, r.handle, r.has_handle, r.scheduled, r.delay, due_of(r), r.period});
    }
  }
  if (which == LedgerWhich::kAccepted) {
    for (const Settled& s : ring_) {
      if (s.how == Outcome::kFired || s.how == Outcome::kPrevented) {
        out.push_back(
            {s.cookie, s.handle, s.has_handle, s.scheduled, s.delay, due_of(s), s.period});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const LedgerView& a, const LedgerView& b) { return a.cookie < b.cookie; });
  return out;
}

std::uint64_t TimerLedger::pick_live(std::mt19937_64& rng) {
  StdLock lk(mu_);
  if (live_ids_.empty()) return 0;
  return live_ids_[std::uniform_int_distribution<std::size_t>(0, live_ids_.size() - 1)(rng)];
}

std::uint64_t TimerLedger::pick_due(std::int64_t t, std::mt19937_64& rng) {
  StdLock lk(mu_);
  if (live_ids_.empty()) return 0;
  std::uniform_int_distribution<std::size_t> at(0, live_ids_.size() - 1);
  for (int i = 0; i < kPickDueTries; ++i) {
    const std::uint64_t cookie = live_ids_[at(rng)];
    const Record& r = live_.find(cookie)->second;
    if (due_of(r) <= t && !doubtful(r) && r.has_handle) return cookie;
  }
  return 0;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> TimerLedger::pick_settled(
    std::mt19937_64& rng) {
  StdLock lk(mu_);
  if (stale_count_ == 0) return std::nullopt;
  const std::uint64_t n = std::min<std::uint64_t>(stale_count_, kStaleRing);
  return stale_[std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng)];
}

std::uint64_t TimerLedger::outstanding(const std::function<bool(std::int64_t)>& overdue) {
  StdLock lk(mu_);
  const std::uint64_t n = live_.size() - disowned_;
  if (!overdue) return n;
  std::uint64_t late = 0;
  for (const auto& [cookie, r] : live_) {
    if (!doubtful(r) && overdue(due_of(r))) ++late;
  }
  return n - std::min(n, late);
}

bool TimerLedger::any_due_by(std::int64_t t) {
  StdLock lk(mu_);
  return std::any_of(live_.begin(), live_.end(),
                     [&](const auto& e) { return !doubtful(e.second) && due_of(e.second) <= t; });
}

std::int64_t TimerLedger::latest_deadline(std::int64_t floor) {
  StdLock lk(mu_);
  for (const auto& [cookie, r] : live_) {
    if (!doubtful(r)) floor = std::max(floor, due_of(r));
  }
  return floor;
}

std::uint64_t TimerLedger::due_by(std::int64_t t, std::uint64_t except) {
  StdLock lk(mu_);
  std::uint64_t n = 0;
  for (const auto& [cookie, r] : live_) {
    if (cookie != except && !doubtful(r) && due_of(r) <= t) ++n;
  }
  return n;
}

LedgerCounts TimerLedger::counts() {
  StdLock lk(mu_);
  return {armed_, fired_, prevented_, live_.size(), runs_};
}

}  // namespace tlab::tool
