// tlab/tool/runner/executor_case_end.h: the end of an executor case
// (executor_case.h): the drain until every handle due by the horizon settled, the
// final drain that stops every worker with work in its stop window, the bounded
// shutdown, and the conservation and stop_conservation checks.
//
// Cost: the drain polls the live handles every 1 ms (virtual time under
// simulation); the checks walk every live and stop-window handle once. Ground
// rules: the case's driver thread (or driver task), after the actors are joined;
// the conservation checks only once shutdown() has joined the workers.
#pragma once

#include <chrono>
#include <memory>
#include <thread>

#include "runner/executor_case.h"

namespace tlab::tool::runner::executor_engine {

template <class P>
void ExecutorCase<P>::finish() {
  const std::int64_t horizon = now();
  const std::int64_t budget_third = static_cast<std::int64_t>(ctx_.spec().budget_s * 1e9 / 3);
  // The drain's limit is counted on the stall clock (stall_clock.h): workers
  // starved of CPU on a loaded machine are given the time they lost. Simulated,
  // on virtual time, where nobody starves.
  const std::int64_t drain_ns =
      std::min(budget_third, std::max<std::int64_t>(100'000'000, 40 * s_.engine.tick_us * 1000));
  for (;;) {
    const bool settled = armed_due_by(horizon).empty();
    const std::int64_t waited =
        kSim<P> ? now() - horizon : stall_clock().effective_ns(horizon, now());
    if (settled || waited >= drain_ns || ctx_.stopping()) break;
    case_sleep_us(ctx_, 1000);
  }
  const Stats st = exec_->stats();
  for (const std::shared_ptr<Handle>& hp : armed_due_by(ctx_.stopping() ? INT64_MIN : horizon)) {
    const Handle& h = *hp;
    std::lock_guard lk(hp->mu);
    if (h.state == HState::kArmed) {
      ctx_.violation(
          Oracle::kLostTimer,
          fmt::format("handle #{} of {}: arming {} due at {} never fired nor was cancelled by "
                      "{} (entries migrated by worker stops so far: {})",
                      h.id, *h.owner, h.seq, at(h.deadline), at(now()), st.migrated));
    }
  }
  ctx_.set_counter("executor_migrated", st.migrated);
  ctx_.set_counter("executor_stale_skipped", st.stale_skipped);
  // The final drain: every worker stops in turn with work in its stop window and
  // stays stopped, so what the last stops hand over is returned by shutdown().
  if (!ctx_.stopping()) {
    for (std::size_t w = 0; w < static_cast<std::size_t>(s_.engine.workers); ++w) {
      stop_with_window(w, true, &kDrainName, Duration::microseconds(s_.engine.tick_us));
    }
  }
  if constexpr (kSim<P>) {
    // A shutdown that never returns leaves every task blocked (or spinning): the
    // scheduler ends the run as a deadlock (lost_wakeup) or at its step limit.
    returned_ = exec_->shutdown();
  } else {
    shutdown_bounded();
  }
  const std::uint64_t thrown = thrown_.load();
  const Stats after = exec_->stats();
  check_conservation(after);
  check_stop_conservation();
  if (after.callback_errors != thrown) {
    ctx_.violation(
        Oracle::kTaskExceptions,
        fmt::format("{} thrower callbacks threw but the executor counted {} callback errors",
                    thrown, after.callback_errors));
  }
}

template <class P>
void ExecutorCase<P>::shutdown_bounded() {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread t([this, done] {
    returned_ = exec_->shutdown();
    done->store(true, std::memory_order::release);  // pairs with the load below
  });
  const std::int64_t asked = steady_ns();
  constexpr std::int64_t kShutdownLimitNs = 2'000'000'000;
  while (!done->load(std::memory_order::acquire) &&
         stall_clock().effective_ns(asked, steady_ns()) < kShutdownLimitNs) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!done->load(std::memory_order::acquire)) {
    t.detach();
    ctx_.violation(Oracle::kLostWakeup,
                   fmt::format("executor shutdown() did not return within {} of time the "
                               "case's threads could run ({} of wall time)",
                               fmt_ns(kShutdownLimitNs), fmt_ns(steady_ns() - asked)));
    emit_and_exit(ctx_, std::nullopt, "engine executor: shutdown hung; the case process exits");
  }
  t.join();
}

template <class P>
void ExecutorCase<P>::check_conservation(const Stats& after) {
  const std::uint64_t open = armed_due_by(INT64_MAX).size();
  const std::uint64_t armings = armings_.load(), fired = fired_.load(),
                      cancelled = cancelled_.load();
  ctx_.set_counter("armed", armings);
  ctx_.set_counter("fired", fired);
  ctx_.set_counter("cancelled", cancelled);
  ctx_.set_counter("pending", open);
  if (!ctx_.stopping() && (armings != fired + cancelled + open || after.fired != fired ||
                           after.cancelled != cancelled)) {
    ctx_.violation(
        Oracle::kConservation,
        fmt::format("runner: armed {} = fired {} + cancelled {} + pending {}?; executor "
                    "stats after shutdown: scheduled {} fired {} cancelled {} abandoned {}",
                    armings, fired, cancelled, open, after.scheduled, after.fired, after.cancelled,
                    after.abandoned));
  }
}

template <class P>
void ExecutorCase<P>::check_stop_conservation() {
  if (ctx_.stopping()) return;
  struct Ledger {
    std::uint64_t scheduled = 0, fired = 0, cancelled = 0, returned = 0;
    std::string first_bad;
  };
  std::vector<Ledger> ledgers(stops_.size());
  std::uint64_t returned_total = 0, window_timers = 0;
  {
    std::lock_guard lk(handles_mu_);
    for (const Live& l : live_) {  // every unresolved handle, a window's or not
      std::lock_guard hk(l.h->mu);
      if (l.h->state == HState::kArmed && !TimerCell<P>::pending(l.timer->state())) {
        ++returned_total;
      }
    }
  }
  for (const Live& l : window_) {
    const Handle& h = *l.h;
    std::lock_guard lk(l.h->mu);
    if (h.seq == 0) continue;  // its post was refused
    const bool returned = h.state == HState::kArmed && !TimerCell<P>::pending(l.timer->state());
    Ledger& led = ledgers[h.stop - 1];
    const std::uint64_t cancelled = h.state == HState::kCancelled ? 1 : 0;
    const std::uint64_t ends = h.fires + cancelled + (returned ? 1 : 0);
    ++window_timers;
    led.scheduled += h.seq;
    led.fired += h.fires;
    led.cancelled += cancelled;
    led.returned += returned ? 1 : 0;
    if (ends != h.seq && led.first_bad.empty()) {
      led.first_bad = fmt::format(
          "handle #{} due at {} ended {} times (fires {}, cancelled {}, returned {}; {} in "
          "the executor)",
          h.id, at(h.deadline), ends, h.fires, cancelled, returned ? 1 : 0,
          TimerCell<P>::pending(l.timer->state()) ? "still pending" : "resolved");
    }
  }
  ctx_.set_counter("stop_window_timers", window_timers);
  for (std::size_t i = 0; i < ledgers.size(); ++i) {
    const Ledger& l = ledgers[i];
    if (l.first_bad.empty()) continue;
    ctx_.violation(
        Oracle::kStopConservation,
        fmt::format("stop #{} of worker {} ({}): scheduled {} != fired {} + "
                    "cancelled {} + returned {}, or a timer counted twice: {}",
                    i + 1, stops_[i].worker, stops_[i].final ? "final drain" : "restarted",
                    l.scheduled, l.fired, l.cancelled, l.returned, l.first_bad));
  }
  if (returned_total != returned_) {
    ctx_.violation(Oracle::kStopConservation,
                   fmt::format("shutdown() returned {} timers but {} handles were left armed "
                               "and resolved by it",
                               returned_, returned_total));
  }
}

}  // namespace tlab::tool::runner::executor_engine
