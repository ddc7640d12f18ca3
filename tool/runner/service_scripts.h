// tlab/tool/runner/service_scripts.h: callback scripts on tlab's own TimerService
// (the kService engine, service_case.h): what a TaskBook task's callback does,
// inside its run on the service's firing thread, when its scheduler has callback_*
// probabilities (scenario.h, Actor). The same scripts a subject that declares
// TLAB_PROMISE_REENTRANT runs under --subject (engine_subject_facility.h), here
// as TimerService calls from inside a TimerTask, which timer_service.h allows
// (callbacks run with its mutex released).
//
// Each run of a scripted task draws, from one generator under script_mu_:
//   | action      | with                             | call, judged as                       |
//   |-------------|----------------------------------|---------------------------------------|
//   | self-cancel | callback_self_cancel_probability | cancel of the running task itself     |
//   |             |                                  | (alternately service.cancel and       |
//   |             |                                  | task->cancel): a one-shot is running, |
//   |             |                                  | so a win is fired_after_cancel; a     |
//   |             |                                  | periodic series must stop (a win; a   |
//   |             |                                  | loss is wrong_result), and runs after |
//   |             |                                  | it are fired_after_cancel             |
//   | sibling     | callback_cancel_probability      | cancel of another live task, one due  |
//   |             |                                  | by now when kSiblingTries random picks|
//   |             |                                  | find one (taken in the same pass, not |
//   |             |                                  | yet run): a win that runs anyway is   |
//   |             |                                  | fired_after_cancel                    |
//   | re-arm      | callback_rearm_probability       | a new one-shot task of the chain,     |
//   |             |                                  | callback_rearm_delay_us ahead (0 if   |
//   |             |                                  | absent; a negative delay must be      |
//   |             |                                  | refused), with its own script: early, |
//   |             |                                  | lost and conservation as any task     |
// Counters: callback_self_cancels, callback_cancels, callback_rearms.
//
// Passes (the virtual driver only: ServiceCase calls begin_pass() before each
// run_due()): a task armed by a callback of pass n carries armed_pass n.
//   same_pass_fire  it ran in pass n (run_due promises the next pass)
//   starvation      a chain reached TimerLedger::Options::kDefaultStarvationAfter
//                   links run within one pass, each armed by the callback of the
//                   one before; once per pass, after which that pass's callbacks
//                   re-arm nothing, so the pass returns and the case ends cleanly
//   late_fire       a one-shot (any, scripted or not) run a pass after one whose
//                   now was at or past its deadline plus the allowance (check_late)
// On threads and under simulation the timer thread has no passes to judge.
//
// Scripts act only in runs that start by the drain's target (stop_scripts_after:
// the latest one-shot deadline the producers left, capped as the drain caps it),
// so a chain that always re-arms cannot keep the drain from ending.
//
// Cost per scripted run: up to three draws under script_mu_, one service call per
// action, kSiblingTries picks under recs_mu_. Ground rules: called from on_fire
// only, on the firing thread; the service calls are made with no runner lock held
// (the service takes its own mutex), and every runner lock is held only around
// plain code, never across a Platform operation (a task's state() included), so
// the same code runs under SimPlatform. Lock order: recs_mu_, then script_mu_; a
// record's mu alone. Memory ordering: a child's
// record fields are written before its schedule*(), which orders them before its run (the service's
// mutex); pass_ and scripts_until_ are relaxed (the virtual driver is one thread;
// on threads a late stop only lets a few more actions through).
#pragma once

#include <array>
#include <random>

#include "oracles/timer_ledger.h"
#include "runner/callback_draws.h"
#include "runner/service_tasks.h"

namespace tlab::tool::runner {

template <class Q, class P>
std::uint64_t TaskBook<Q, P>::same_pass_links(const Rec& rec) {
  const std::uint64_t pass = pass_.load(std::memory_order::relaxed);
  if (rec.armed_pass == 0 || rec.armed_pass != pass) return 0;
  ctx_.violation(Oracle::kSamePassFire,
                 fmt::format("task #{} of {} (chain of #{}) was armed by a callback of driver "
                             "pass {} and ran in that same pass; run_due() runs a task armed "
                             "during its pass in the next one",
                             rec.id, rec.owner->name, rec.root, pass));
  const std::uint64_t links = rec.parent_links + 1;
  if (links >= TimerLedger::kDefaultStarvationAfter) {
    std::lock_guard lk(script_mu_);
    if (starved_pass_ != pass) {
      starved_pass_ = pass;
      ctx_.violation(Oracle::kStarvation,
                     fmt::format("the chain of task #{} of {} ran {} links within driver pass {}, "
                                 "each armed by the callback of the one before: the pass would "
                                 "not return (its callbacks re-arm nothing more)",
                                 rec.root, rec.owner->name, links, pass));
    }
  }
  return links;
}

// late_fire, on the virtual driver's passes (a driver at now runs every task due
// by now: timer_service.h, run_due): a one-shot that runs in pass c though pass c - 1,
// which came after it was queued, had a now at or past its deadline plus the
// allowance (0 on exact strategies; a tick on wheels, whose due() rounds up to
// one). On threads and under simulation no passes are counted: not judged.
template <class Q, class P>
void TaskBook<Q, P>::check_late(const Rec& rec, std::int64_t start) {
  const std::uint64_t pass = pass_.load(std::memory_order::relaxed);
  if (pass < 2 || pass - 1 <= rec.queued_pass) return;
  const std::int64_t allowance = check_fifo_ ? 0 : s_.engine.tick_us * 1000;
  const std::int64_t limit =
      (Instant::from_ns(rec.first_deadline) + Duration::nanoseconds(allowance)).ns();
  if (prev_pass_now_ < limit) return;
  ctx_.violation(Oracle::kLateFire,
                 fmt::format("task #{} of {} (deadline {}) ran in the driver pass at {}, but "
                             "the pass before, at {}, was already {} past its deadline "
                             "(allowance {}) and did not run it",
                             rec.id, rec.owner->name, ctx_.at(rec.first_deadline - base_),
                             ctx_.at(start - base_), ctx_.at(prev_pass_now_ - base_),
                             fmt_ns(prev_pass_now_ - rec.first_deadline), fmt_ns(allowance)));
}

template <class Q, class P>
void TaskBook<Q, P>::perform_script(Rec& rec, std::uint64_t links) {
  if (now() > scripts_until_.load(std::memory_order::relaxed)) return;
  const Actor& a = *rec.script;
  CallbackDraws d;
  {
    std::lock_guard lk(script_mu_);
    d = draw_callback(a, script_rng_, starved_pass_ != pass_.load(std::memory_order::relaxed));
  }
  const bool self = d.self, sibling = d.sibling, rearm = d.rearm;
  const std::int64_t delay_ns = d.rearm_delay_ns;
  static const std::string kSelf = "its own callback";
  static const std::string kSibling = "a sibling's callback";
  if (self) {
    ctx_.add("callback_self_cancels");
    const TimerTaskPtr<P> me = rec.task->shared_from_this();
    // A one-shot is running: a win is judged by cancel_task (fired_after_cancel).
    // A series is queued for its next run while this one runs, unless a cancel
    // of someone else's already stopped it.
    const bool series_live = rec.kind != TaskKind::kOnce && me->state() == TaskState::kScheduled;
    const bool won = cancel_task(rec, me, kSelf, *timer_log_, rec.id % 2 == 0);
    bool others_won;
    {
      std::lock_guard lk(rec.mu);
      others_won = rec.cancel_won;
    }
    if (series_live && !won && !others_won) {
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("periodic task #{} of {}: a cancel from inside its own run "
                                 "returned false; a series is scheduled while it runs (its next "
                                 "run is queued), so the cancel must stop it",
                                 rec.id, rec.owner->name));
    }
  }
  if (sibling) {
    const Live target = pick_sibling(rec, now());
    if (target.rec != nullptr) {
      ctx_.add("callback_cancels");
      cancel_task(*target.rec, target.task, kSibling, *timer_log_, target.rec->id % 2 == 0);
    }
  }
  if (rearm) schedule_scripted(rec, delay_ns, links);
}

template <class Q, class P>
typename TaskBook<Q, P>::Live TaskBook<Q, P>::pick_sibling(const Rec& self, std::int64_t now_ns) {
  // The candidates are copied under recs_mu_ and judged after it is released: a
  // task's state is a Platform atomic, whose load is a scheduling point under
  // simulation, and no std::mutex may be held across one (the header above).
  std::array<Live, kSiblingTries> picked;
  std::size_t n = 0;
  {
    std::lock_guard lk(recs_mu_);
    std::lock_guard slk(script_mu_);
    for (; n < picked.size() && !live_recs_.empty(); ++n) {
      picked[n] = live_recs_[std::uniform_int_distribution<std::size_t>(
          0, live_recs_.size() - 1)(script_rng_)];
    }
  }
  Live any;
  for (std::size_t i = 0; i < n; ++i) {
    const Live& l = picked[i];
    // Only an armed task: one a producer is still scheduling is not kScheduled
    // yet, and its record's fields are written before that state is (seq_cst), so
    // reading them after seeing it is ordered; a reschedule writes under rec.mu.
    if (l.rec.get() == &self || l.task->state() != TaskState::kScheduled) continue;
    std::int64_t due;
    {
      std::lock_guard rlk(l.rec->mu);
      due = l.rec->first_deadline;
    }
    if (due <= now_ns) return l;
    if (any.rec == nullptr) any = l;
  }
  return any;
}

template <class Q, class P>
void TaskBook<Q, P>::schedule_scripted(const Rec& parent, std::int64_t delay_ns,
                                       std::uint64_t links) {
  const std::int64_t t0 = now();
  const Duration d = Duration::nanoseconds(delay_ns);
  const Live held = new_rec(parent.owner, false, (Instant::from_ns(t0) + d).ns());
  Rec& rec = *held.rec;
  rec.script = parent.script;
  rec.root = parent.root;
  rec.parent_links = links;
  rec.armed_pass = pass_.load(std::memory_order::relaxed);
  rec.queued_pass = rec.armed_pass;
  try {
    service_->schedule(held.task, d);
  } catch (const RejectedError&) {
    ctx_.add("rejected_by_cap");
    {
      std::lock_guard lk(rec.mu);
      rec.resolved = true;
    }
    retire(rec);
    return;
  } catch (const std::invalid_argument&) {
    if (delay_ns >= 0) throw;
    ctx_.add("rejected_negative_delays");
    {
      std::lock_guard lk(rec.mu);
      rec.resolved = true;  // never armed: counted nowhere
    }
    retire(rec);
    return;
  }
  if (delay_ns < 0) {
    ctx_.violation(Oracle::kWrongResult,
                   fmt::format("a callback of task #{} of {} re-armed task #{} with delay {} and "
                               "the service accepted it; a negative delay must throw "
                               "std::invalid_argument",
                               parent.id, parent.owner->name, rec.id, fmt_ns(delay_ns)));
  }
  ctx_.add("callback_rearms");
  armed_.fetch_add(1, std::memory_order::relaxed);
  live_.fetch_add(1, std::memory_order::relaxed);
  check_cap(*parent.owner);
}

}  // namespace tlab::tool::runner
