// tlab/tool/oracles/timer_ledger_periodic.cc: how the ledger moves a periodic
// series from one run to the next (timer_ledger.h, "Periodic series": the due time
// of the next run per kind, and the end of a run's callback), and how a sentence
// names a run. The events themselves are judged in timer_ledger.cc.
#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "oracles/ledger_arith.h"
#include "oracles/timer_ledger.h"

namespace tlab::tool {

using ledger_arith::ledger_deadline;

namespace {

// grid_point: origin + k * period, saturated (the periodic grid; period > 0).
std::int64_t grid_point(std::int64_t origin, std::uint64_t k, std::int64_t period) {
  std::int64_t step = 0, r = 0;
  if (k > static_cast<std::uint64_t>(INT64_MAX) ||
      __builtin_mul_overflow(static_cast<std::int64_t>(k), period, &step) ||
      __builtin_add_overflow(origin, step, &r)) {
    return INT64_MAX;
  }
  return r;
}

// grid_after: the index of the first grid point strictly after t, at least `min`.
std::uint64_t grid_after(std::int64_t origin, std::int64_t period, std::int64_t t,
                         std::uint64_t min) {
  if (t < origin) return min;
  // t >= origin, so the difference is exact in uint64.
  const std::uint64_t d = static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(origin);
  return std::max(min, d / static_cast<std::uint64_t>(period) + 1);
}

// kind_name: a series' kind in a sentence ("fixed-rate").
std::string_view kind_name(std::uint32_t periodic) {
  switch (periodic) {
    case TLAB_PERIODIC_FIXED_RATE:
      return "fixed-rate";
    case TLAB_PERIODIC_FIXED_RATE_SKIP:
      return "fixed-rate (skip)";
    case TLAB_PERIODIC_FIXED_DELAY:
      return "fixed-delay";
    default:
      return "periodic";
  }
}

}  // namespace

void TimerLedger::next_run(Record& r, LedgerInstant now) {
  // S_k's lower bound (the table above): the run's due time, and the poll's now
  // when the fire came inside a poll.
  const std::int64_t started_by = polls_ > 0 ? std::max(r.deadline, poll_now_.t) : r.deadline;
  std::int64_t early = 0, late = 0;
  switch (r.periodic) {
    case TLAB_PERIODIC_FIXED_RATE_SKIP: {
      const std::uint64_t k = grid_after(r.grid0, r.period, started_by, r.run + 1);
      early = grid_point(r.grid0, k, r.period);
      late =
          std::max(early, grid_point(r.grid0, grid_after(r.grid0, r.period, now.t, k), r.period));
      r.run = k;
      break;
    }
    case TLAB_PERIODIC_FIXED_DELAY:
      early = ledger_deadline(started_by, r.period);
      late = std::max(early, ledger_deadline(now.t, r.period));
      ++r.run;
      break;
    default:  // FIXED_RATE: every grid point is a run
      ++r.run;
      early = grid_point(r.grid0, r.run, r.period);
      late = std::max(early, now.t);
      break;
  }
  r.deadline = early;
  r.late_from = late;
  r.pass = 0;
  r.run_at = now;
  r.running = true;
  r.armed_step = options_.order == LedgerOrder::kOverlapping ? step_ : now.step;
}

void TimerLedger::run_ended(std::uint64_t cookie, LedgerInstant end) {
  StdLock lk(mu_);
  auto it = live_.find(cookie);
  if (it == live_.end() || it->second.period == 0) return;
  Record& r = it->second;
  r.running = false;
  // A fixed-delay subject may count the gap from the end of the callback.
  if (r.periodic == TLAB_PERIODIC_FIXED_DELAY) {
    r.late_from = std::max(r.late_from, ledger_deadline(end.t, r.period));
  }
}

std::string TimerLedger::armed_as(const Facts& f) const {
  if (f.period == 0) {
    return fmt::format("schedule(now, delay={}) called at {}", f_.delay(f.delay),
                       f_.at(f.scheduled));
  }
  if (f.run == 0) {
    return fmt::format("schedule_periodic(now, delay={}, period={}, {}) called at {} (run 0)",
                       f_.delay(f.delay), f_.duration(f.period), kind_name(f.periodic),
                       f_.at(f.scheduled));
  }
  return fmt::format(
      "run {} of the {} series (period {}) that schedule_periodic(now, delay={}) armed at {}, "
      "after the run at {}",
      f.run, kind_name(f.periodic), f_.duration(f.period), f_.delay(f.delay), f_.at(f.scheduled),
      f_.at(f.run_at));
}

}  // namespace tlab::tool
