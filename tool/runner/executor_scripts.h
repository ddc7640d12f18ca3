// tlab/tool/runner/executor_scripts.h: the executor engine's callback scripts
// (executor_case.h), performed by a handle's callback on the worker that fired it.
//
// Callback scripts (a scheduler with callback_* probabilities, scenario.h): each
// fire of one of its handles draws, from one generator under script_mu_, what its
// callback does on the worker, inside the callback, before it returns:
//   self-cancel  Executor::cancel of its own handle: the arming is firing, so
//                true is fired_after_cancel (it prevented nothing)
//   sibling      cancel of another live handle, one due by now when one of
//                kSiblingTries random picks is (a sibling taken by the same poll,
//                not yet run): a win that fires anyway is fired_after_cancel
//   re-arm       the handle re-armed from inside its own callback (the executor's
//                idiom: a handle is kept and re-armed), callback_rearm_delay_us
//                ahead on the local path; a negative delay must be refused
//                (std::invalid_argument), else wrong_result. The new arming is
//                judged as any: early, lost, stop and shutdown conservation
// Scripts act until the latest deadline the producers armed (scripts_until_), so
// chains end; counters callback_self_cancels, callback_cancels, callback_rearms,
// callback_rearms_refused. The same draws replay exactly under simulation.
//
// Cost per scripted fire: up to three draws under script_mu_, one Executor call
// per action, kSiblingTries picks under handles_mu_. Ground rules: from on_fire
// only, on the firing worker; script_mu_ and handles_mu_ are held around plain
// code only (lock order handles_mu_, then script_mu_); a handle's mu is taken
// alone, across its Executor::cancel as cancel() does (a CaseMutex).
#pragma once

#include <array>
#include <random>

#include "runner/callback_draws.h"
#include "runner/executor_case.h"

namespace tlab::tool::runner::executor_engine {

template <class P>
void ExecutorCase<P>::perform_script(const std::shared_ptr<Handle>& hp) {
  Handle& h = *hp;
  if (now() > scripts_until_.load(std::memory_order::relaxed)) return;
  const Actor& a = *h.script;
  CallbackDraws d;
  {
    std::lock_guard lk(script_mu_);
    d = draw_callback(a, script_rng_);
  }
  const bool self = d.self, sibling = d.sibling, rearm = d.rearm;
  const std::int64_t delay_ns = d.rearm_delay_ns;
  const Timer me = h.self.lock();  // the firing worker holds its entry's timer
  if (me == nullptr) return;
  if (self) {
    ctx_.add("callback_self_cancels");
    if (exec_->cancel(me)) {
      ctx_.violation(Oracle::kFiredAfterCancel,
                     fmt::format("handle #{} of {}: cancel() from inside its own callback "
                                 "returned true at {}, but arming {} was already firing (its "
                                 "callback was running): the cancel prevented nothing",
                                 h.id, *h.owner, at(now()), h.seq));
    }
  }
  if (sibling) {
    const Live target = pick_sibling(h, now());
    if (target.h != nullptr) {
      ctx_.add("callback_cancels");
      cancel(*target.h, target.timer, nullptr, /*rearm=*/false);
    }
  }
  if (rearm) rearm_from_callback(Live{hp, me}, delay_ns);
}

template <class P>
void ExecutorCase<P>::rearm_from_callback(const Live& l, std::int64_t delay_ns) {
  Handle& h = *l.h;
  if (delay_ns >= 0) {
    relive(l);
    arm(h, l.timer, Duration::nanoseconds(delay_ns), nullptr);
    ctx_.add("callback_rearms");
    return;
  }
  const std::int64_t t0 = now();
  try {
    exec_->schedule(l.timer, Duration::nanoseconds(delay_ns));
  } catch (const std::invalid_argument&) {
    ctx_.add("callback_rearms_refused");
    return;
  }
  // Accepted: judged as an arming at once, so that the rest of the case stays exact.
  ctx_.violation(Oracle::kWrongResult,
                 fmt::format("handle #{} of {}: Executor::schedule with a negative delay ({}) "
                             "from inside its callback was accepted; it must throw "
                             "std::invalid_argument",
                             h.id, *h.owner, fmt_ns(delay_ns)));
  {
    std::lock_guard lk(h.mu);
    h.state = HState::kArmed;
    ++h.seq;
    h.deadline = t0;
  }
  relive(l);
  armings_.fetch_add(1, std::memory_order::relaxed);
}

template <class P>
typename ExecutorCase<P>::Live ExecutorCase<P>::pick_sibling(const Handle& self,
                                                             std::int64_t now_ns) {
  std::array<Live, kSiblingTries> picked;
  std::size_t n = 0;
  {
    std::lock_guard lk(handles_mu_);
    std::lock_guard slk(script_mu_);
    for (; n < picked.size() && !live_.empty(); ++n) {
      picked[n] =
          live_[std::uniform_int_distribution<std::size_t>(0, live_.size() - 1)(script_rng_)];
    }
  }
  Live any;
  for (std::size_t i = 0; i < n; ++i) {
    const Live& l = picked[i];
    if (l.h.get() == &self) continue;
    std::int64_t due;
    {
      std::lock_guard lk(l.h->mu);
      if (l.h->state != HState::kArmed) continue;
      due = l.h->deadline;
    }
    if (due <= now_ns) return l;
    if (any.h == nullptr) any = l;
  }
  return any;
}

}  // namespace tlab::tool::runner::executor_engine
