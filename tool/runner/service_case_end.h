// tlab/tool/runner/service_case_end.h: the end of a ServiceCase (service_case.h):
// the drain, the timer-thread probe, the bounded shutdown and the waiters'
// final checks, which run once the actors are joined. Included by
// service_case.h only; the same ground rules.
//
// Cost: drain: one pass (virtual) or one 1 ms pause (threads) per step until the
// one-shots due by the target settle or the drain limit passes; the checks walk
// the waiter slots once. Ground rules: the case's driver thread (or the driver
// task under simulation), after every actor is joined.
#pragma once

#include "runner/service_case.h"

namespace tlab::tool::runner {

template <class Q, class P, unsigned Bits>
void ServiceCase<Q, P, Bits>::drain(std::int64_t target, std::int64_t drain_ns) {
  timer_actor_->set(Phase::kWaiting);
  for (;;) {
    const bool settled = !tasks_->one_shot_due_by(target);
    const bool over = now() > target && waited_ns(target) >= drain_ns;
    const bool periodic_left = tasks_->max_period() > 0 && !over;
    if ((settled && !periodic_left) || over || ctx_.stopping()) return;
    if constexpr (kVirtual) {
      clock_.advance(Duration::microseconds(s_.engine.tick_us));
      run_pass();
    } else {
      pause_us(1000);
    }
  }
}

template <class Q, class P, unsigned Bits>
void ServiceCase<Q, P, Bits>::drain_and_check() {
  const std::int64_t horizon = now();
  // The target: the latest one-shot deadline still open, but at most 1 s and a
  // third of the budget away (further tasks are pending at the end, not lost).
  // Then a grace of 50 ms or 20 ticks, and 30 periods for periodic tasks so that
  // drift has runs to show in.
  const std::int64_t budget_third = static_cast<std::int64_t>(ctx_.spec().budget_s * 1e9 / 3);
  const std::int64_t last = std::max(horizon, tasks_->last_one_shot_deadline());
  const std::int64_t target = std::min({last, horizon + 1'000'000'000, horizon + budget_third});
  tasks_->stop_scripts_after(target);  // a chain that always re-arms must end
  const std::int64_t drain_ns = std::max(
      std::int64_t{0}, std::min(budget_third - (target - horizon),
                                std::max({std::int64_t{50'000'000}, 20 * s_.engine.tick_us * 1000,
                                          30 * tasks_->max_period()})));
  drain(target, drain_ns);

  // A dead timer thread: a probe due now must run promptly.
  if (!ctx_.stopping()) probe_timer_thread();

  const TimerServiceStats before = service_->stats();
  shutdown_bounded();
  tasks_->check_tasks(target, before);
  check_waiters();
  ctx_.set_counter("service_tasks_run", before.tasks_run);
  ctx_.set_counter("service_exceptions", before.exceptions);
  ctx_.set_counter("service_cancelled", before.cancelled);
  ctx_.set_counter("service_skipped_cancelled", before.skipped_cancelled);
}

template <class Q, class P, unsigned Bits>
void ServiceCase<Q, P, Bits>::probe_timer_thread() {
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
  const std::int64_t asked = wall_ns();
  const std::int64_t limit = 200'000'000 + lost_wakeup_grace_ns(s_) / 4;
  while (!ran.load(std::memory_order::acquire)) {  // pairs with the probe's store
    if constexpr (kVirtual) {
      run_pass();
      if (!ran.load(std::memory_order::acquire)) break;
    } else {
      if (waited_ns(asked) > limit || ctx_.stopping()) break;
      pause_us(1000);
    }
  }
  if (!ran.load(std::memory_order::acquire)) {
    // The virtual driver ran one pass at the probe's own deadline: no time passed.
    const std::string waited = kVirtual
                                   ? std::string("in a driver pass at that instant")
                                   : fmt::format("within {} (of time the case's threads could run)",
                                                 fmt_ns(waited_ns(asked)));
    ctx_.violation(Oracle::kTaskExceptions,
                   fmt::format("timer thread dead: a probe task due at {} did not run {}; the "
                               "service's last error: '{}'",
                               ctx_.at(t0 - base_), waited, service_->last_error()));
    service_->cancel(probe);
  }
}

template <class Q, class P, unsigned Bits>
void ServiceCase<Q, P, Bits>::shutdown_bounded() {
  if constexpr (kVirtual) {
    service_->shutdown_now();
    return;
  } else if constexpr (kSim) {
    // A shutdown that never returns leaves every task blocked, which the scheduler
    // ends as a deadlock (sim_run.h: a lost_wakeup naming the tasks). One that
    // returns only once simulated time reached the sleeping timer thread's own
    // deadline was not woken either: time is free here, so the bound the real
    // threads get (a grace) is measured on the virtual clock.
    const std::int64_t t0 = now();
    service_->shutdown_now();
    const std::int64_t took = now() - t0;
    if (took > lost_wakeup_grace_ns(s_)) {
      ctx_.violation(
          Oracle::kLostWakeup,
          fmt::format("timer thread: shutdown_now() called at {} returned only after {} of "
                      "simulated time, when the sleeping timer thread's own deadline came: "
                      "shutdown never woke it",
                      ctx_.at(t0 - base_), fmt_ns(took)));
    }
    return;
  } else {
    auto done = std::make_shared<std::atomic<bool>>(false);
    const std::int64_t t0 = steady_ns();
    std::thread t([this, done] {
      service_->shutdown_now();
      done->store(true, std::memory_order::release);  // pairs with the load below
    });
    const std::int64_t limit = 1'000'000'000 + lost_wakeup_grace_ns(s_) / 2;
    while (!done->load(std::memory_order::acquire) && waited_ns(t0) < limit) {
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

template <class Q, class P, unsigned Bits>
void ServiceCase<Q, P, Bits>::check_waiters() {
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

}  // namespace tlab::tool::runner
