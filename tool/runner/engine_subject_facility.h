// tlab/tool/runner/engine_subject_facility.h: one scenario case on a timer
// facility that speaks the subject ABI (TLAB_KIND_FACILITY, tlab/subject.h).
// Internal to the generic driver (engine_subject.h): engine_subject_facility.cc
// has the actors and the judging of each call, engine_subject_facility_end.cc
// the run, the drain and the end-of-case checks.
//
// How the roles become ABI calls:
//   | role         | calls                                                              |
//   |--------------|--------------------------------------------------------------------|
//   | scheduler    | schedule(now, delay, cookie) per operation (mode once; a periodic  |
//   |              | mode: schedule_periodic(now, delay, period, kind, cookie), never   |
//   |              | aligned; each run's fired() is followed by the ledger's run_ended, |
//   |              | and destroy() drops the series still live at the end); on a HOST  |
//   |              | subject every other timer's delay is stretched so its deadline     |
//   |              | lands on a tick (as the service engine's schedule_at), so one      |
//   |              | scheduler's timers tie; then cancel(handle) with cancel_probability|
//   |              | (stale_probability: a stale cancel after each schedule;            |
//   |              | rearm_probability: a re-arm of its held timer, below)              |
//   | thrower      | as a scheduler (its own cancel/stale/rearm), through SubjectExtras::|
//   |              | schedule_failing: each timer's callback fails after it fired; once |
//   |              | one has, a subject without contains_errors is not judged on the    |
//   |              | timers it then never delivers (SubjectExtras, engine_subject.h)    |
//   | canceller    | after delay_us, cancel(handle) of a random outstanding timer, or   |
//   |              | with stale_probability a stale cancel                              |
//   | timer_thread | the loop thread: poll(CLOCK_MONOTONIC now) every tick/2 (LOOP);    |
//   |              | for a SELF subject, the subject's own threads (noted)              |
//   | (the end)    | drain to the horizon; then kIdleProbes idle probes, one at a time: |
//   |              | a timer due in one tick scheduled into the drained subject, waited |
//   |              | for until it fires (or overdue_grace_ passes); pending(); then 12  |
//   |              | timers due now, in 1 ms and in an hour, and destroy() with them    |
//   |              | pending                                                            |
//
// A stale cancel is cancel(handle) of a timer that already settled (fired or was
// prevented), picked at random from the last TimerLedger::kStaleRing settled
// (TimerLedger::pick_settled): the subject must answer TOO_LATE or UNKNOWN (or
// TLAB_EINVAL) and touch no other timer, however its storage was reused
// (subject.h: "cancel() on a handle whose timer fired or was cancelled long ago
// must not touch another timer"). PREVENTED is wrong_result; a live timer the
// call removed instead never fires (lost_timer, conservation).
// stale_probability defaults to kDefaultStaleProbability for both roles.
//
// A re-arm is what a connection does to its idle timer on activity: the scheduler
// holds one timer (after a schedule not cancelled at once, with rearm_probability
// it keeps that timer's cookie and handle) and, before each later schedule, with
// rearm_probability cancels the held handle and, when the answer is PREVENTED or
// TOO_LATE, schedules a replacement (a new cookie, a new delay from rearm_delay_us,
// else delay_us, not aligned; counter "rearmed") and holds it instead. The subject ABI has no
// reschedule call, so a re-arm is these two calls. The cancel is judged as any
// cancel, and it is made whether or not the held timer has fired meanwhile (the
// re-armer cannot know): TOO_LATE is then the right answer, and PREVENTED a
// wrong_result (the handle's storage may hold a newer timer, which it removed:
// lost_timer). UNKNOWN, TLAB_EINVAL or TLAB_ENOMEM drop the held timer. Draws come
// from the scheduler's own generator, so a virtual case replays exactly; with
// rearm_probability 0 (the default) nothing is drawn and the run is as before.
//
// Callback scripts (a subject that declares TLAB_PROMISE_REENTRANT, subject.h):
// when a scheduler has callback_* probabilities, each timer it schedules draws a
// script from its generator (ScriptBits in the ledger's mark, with the actor's
// index), and on_fired performs it inside the subject's fire, on the firing
// thread, before returning: cancel the timer itself (it is firing: PREVENTED is a
// wrong_result), cancel a live timer due by now (a sibling of the same poll) or
// any live one, and schedule the chain's next timer callback_rearm_delay_us ahead
// (it draws its own script). Draws made inside callbacks come from one generator
// under script_mu_ (the poller is the only firing thread of a LOOP subject, so a
// virtual case replays exactly); the calls are made without it. The calls skip
// the call mutex (the poll holds it) and, inside a HOST subject's poll, are given
// the poll's now. A re-arm inside poll n carries pass n, so a fire in that same
// poll is same_pass_fire, and the starvation_after-th is starvation, after which
// the poll gets no more re-arms. Scripts run only while the producers run (on
// real threads, also until the schedulers' latest deadline, capped), so the drain
// ends. Counters: callback_rearms, callback_cancels, callback_self_cancels.
// Declared scripts (SubjectExtras::schedule_scripted: an exec subject, whose
// callbacks run in another process): the same draws are made when the timer is
// scheduled, down to kScriptDepth re-arms, and travel with it; the subject reports
// each action (ScriptHost), and the ledger is told of it then: a re-armed timer's
// schedule from the fire of the one that armed it (a lower bound of its real
// instant: its early rule is the session's, on the subject's own clock), a cancel
// as overlapping everything between that fire and its answer. One-shot timers only.
//
// Clocks: on a virtual case (engine.clock virtual and TLAB_PROMISE_VIRTUAL) one
// thread runs everything, a seeded round-robin over the actors, the clock at 2^62
// ns advanced by tick_us per step and poll(now) after each, so a replay is exact.
// Otherwise actors are threads on CLOCK_MONOTONIC, which the host passes as now.
// "now" at a fire is the poll's now for a HOST loop subject (the subject's own
// clock), else CLOCK_MONOTONIC read in the callback.
//
// Judged: every per-timer verdict by the case's TimerLedger (oracles/timer_ledger.h),
// in its overlapping order on tlab's clock, with every rule but fifo_earlier_armed
// and pending_list (and late, for a SELF subject, whose polls tlab does not see). Two calls are
// ordered only when one returned before the other began (by the ledger's steps: a call takes one as
// it begins and one as it returns, a fire one as it reaches the ledger), so overlapping calls may
// be linearised either way. Where the driver feeds it:
//   | event          | fed as                                                         |
//   |----------------|----------------------------------------------------------------|
//   | schedule()     | schedule() just before the call (owner: the actor; FIFO tie    |
//   |                | candidates: the aligned timers), then armed() or refused()     |
//   | poll()         | poll_began() as it begins, with its now (LOOP subjects: the    |
//   |                | lateness rule, allowance max(tick, resolution_ns))             |
//   | fired()        | fired() at the poll's now (HOST loop subject) or               |
//   |                | CLOCK_MONOTONIC read in the callback                           |
//   | cancel()       | cancelled() with its begin and end steps; a stale cancel or a  |
//   |                | re-arm says why (the ledger names the handle's new holder)     |
//   | pending()      | pending_count() at quiescent points (after each virtual step;  |
//   |                | after the real-clock drain)                                    |
//   | the drain      | overdue() at the drain horizon; lost() for an idle probe not   |
//   |                | fired overdue_grace_ past its deadline                         |
//   | destroy()      | destroyed() once it has returned                               |
// The driver judges the call protocol itself. Status codes: TLAB_EINVAL for a
// negative delay or one above max_delay_ns is a refusal (counter "refused"), for a
// delay within [0, max_delay_ns] a lost_timer; TLAB_ENOMEM is counted
// ("schedule_enomem", "cancel_enomem"); TLAB_EINVAL from cancel is counted and
// makes no claim; any other non-OK status (or a result that is no
// tlab_cancel_result) is a driver error: the case's verdict is error, with the
// call in the message.
//
// Memory: the ledger's (a record per live timer, its ring of settled timers, the
// last settled handles for stale cancels): O(run.max_pending + ring), not
// O(operations). The driver keeps no per-timer state of its own; a scheduler's
// held timer (re-arms) is one cookie and handle per actor.
//
// Ground rules: the driver's main thread owns the case; actors are threads (real
// clock) or turns of the main thread (virtual). Per-timer state is the ledger's,
// under its mutex; the call mutex (AbiCalls) is taken before it, never while a
// ledger callback runs. fired() may come from any thread the subject owns.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>

#include "oracles/timer_ledger.h"
#include "runner/engine_subject_calls.h"

namespace tlab::tool::runner {

// ScheduledFrom: where a callback's schedule came from (LedgerSchedule's pass,
// chain and chain_origin); all 0 for a schedule made outside callbacks.
struct ScheduledFrom {
  std::uint64_t pass = 0, chain = 0, chain_origin = 0;
};

class FacilityCase : public ScriptHost {
 public:
  FacilityCase(CaseContext& ctx, const tlab_subject& d, const SubjectExtras& extras);
  // FacilityCase::run: the whole case (engine_subject_facility_end.cc). Throws
  // std::runtime_error for a driver error (a status the ABI does not allow).
  void run();

  // The fired() callback tlab passes in config.
  static void fired_cb(void* host, std::uint64_t cookie);

 private:
  // Format: how the case's ledger prints an instant: on the case's timeline.
  class Format : public LedgerFormat {
   public:
    explicit Format(const FacilityCase& c) : c_(c) {}
    std::string at(const LedgerInstant& i) const override { return c_.at(i.t); }

   private:
    const FacilityCase& c_;
  };
  struct ActorRun {
    const Actor* spec = nullptr;
    ActorState* st = nullptr;
    ActorLog* log = nullptr;
    std::size_t index = 0;
    std::uint64_t quota = 0;        // schedulers, throwers: their share of run.operations
    std::int64_t next_virtual = 0;  // cancellers on the virtual clock
    double stale = 0;               // stale_probability, or the default
    // schedulers: the timer held for re-arms (cookie 0: none), this actor only
    std::uint64_t held_cookie = 0, held_handle = 0;
  };

  // One cancel in ten by default: in facility_ties (2000 schedules) ~250 stale
  // cancels, enough to hit a reused slot on every seed we tried, while most
  // cancels still race live timers (the subject of the other findings).
  static constexpr double kDefaultStaleProbability = 0.1;
  // Idle probes: a timer scheduled into a subject with nothing else due must fire.
  // Losing it is the lost-wake-at-idle class: an event loop that sleeps past a
  // timer added while it idles, a sharded timer thread that waits on one shard
  // while the new timer sits in another (tokio #6682). Racing actors rarely leave
  // that state at the right moment; the drain always does. Four, one at a time,
  // so a subject that spreads timers round robin over up to four places gets a
  // probe in each; each costs about one tick when the subject is right.
  static constexpr int kIdleProbes = 4;

  // ---- engine_subject_facility.cc: the calls and their judging ----
  std::int64_t host_now() const;
  // waited_ns: how much of [since, now] (host clock) counts toward a grace: all of
  // it on the virtual clock, the stall clock's effective time on the real one.
  std::int64_t waited_ns(std::int64_t since, std::int64_t now) const;
  std::string at(std::int64_t host_ns) const;  // "t=1.234ms" on the case's timeline
  void on_fired(std::uint64_t cookie);
  // Callback scripts (above): a timer's mark holds its script's bits and, from
  // bit 8, its scheduler's index in runs_ + 1.
  enum ScriptBits : std::uint32_t {
    kScriptRearm = 1,
    kScriptCancel = 2,
    kScriptSelfCancel = 4,
    kScriptActions = 7,
  };
  // draw_script: the mark of a timer of `r`: its script, drawn from `rng`.
  std::uint32_t draw_script(const ActorRun& r, std::mt19937_64& rng) const;
  // perform_script: `cookie`'s script, from inside its fire (`f`).
  void perform_script(std::uint64_t cookie, const LedgerFired& f, std::int64_t now);
  // inside(): whether this thread is in a fired() callback of this case.
  bool inside() const;
  // Declared scripts (above): how deep a script's re-arms nest.
  static constexpr int kScriptDepth = 6;
  // A declared script's sibling is sought among the timers due within
  // kSiblingWindowNs (or a tick) after its own deadline, in kSiblingTries draws.
  static constexpr std::int64_t kSiblingWindowNs = 500'000;
  static constexpr int kSiblingTries = 8;
  // declare_script: the actions of a timer of `r` with `mark`, due at `due`, as a
  // declared script (re-arms drawn down to `depth`), recorded in planned_.
  std::vector<ScriptAction> declare_script(const ActorRun& r, std::uint64_t cookie,
                                           std::uint32_t mark, std::int64_t due, int depth);
  void script_scheduled(std::uint64_t by, std::uint64_t id, bool ok) override;
  void script_cancelled(std::uint64_t by, std::uint64_t id, bool ok, std::int32_t result) override;
  bool schedule_one(ActorRun& r, std::mt19937_64& rng);
  // schedule_timer: true when schedule() returned TLAB_OK, with `handle` its handle.
  // `mark` and `from` go to the ledger (callback scripts); inside a callback the
  // call skips the call mutex. `period` > 0: schedule_periodic() of r's mode.
  bool schedule_timer(ActorRun& r, std::int64_t delay_ns, bool align, std::uint64_t& cookie,
                      std::uint64_t& handle, std::uint32_t mark = 0, ScheduledFrom from = {},
                      std::int64_t period = 0);
  void cancel_one(std::uint64_t cookie, ActorState& who, ActorLog& log);
  // rearm_held: cancel r's held timer and, on PREVENTED or TOO_LATE, schedule and
  // hold a replacement; otherwise hold none.
  void rearm_held(ActorRun& r, std::mt19937_64& rng);
  // cancel_stale: cancel() of a recently settled timer's handle (if any settled).
  void cancel_stale(std::mt19937_64& rng, ActorState& who, ActorLog& log);
  // call_cancel: cancel(c.handle) by `who`, with c.begin and c.end taken around
  // it; the cancel result when cancel() returned TLAB_OK, else 0.
  std::int32_t call_cancel(LedgerCancel& c, ActorState& who, ActorLog& log);
  void on_cancel_result(const LedgerCancel& c, std::int32_t result);
  void poll_once();
  void check_status(std::int32_t st, const std::string& call);
  // FacilityCase::driver_error: keeps the first error and stops the case; run()
  // throws it once the actors are joined.
  void driver_error(const std::string& what);
  void throw_if_error();
  void scheduler_loop(ActorRun& r, std::mt19937_64& rng);
  void canceller_loop(ActorRun& r, std::mt19937_64& rng);
  void poller_loop();
  // blocked_by_pending: whether a scheduler must wait for room: the live timers the
  // subject still holds (TimerLedger::outstanding: those a cancel called TOO_LATE
  // or UNKNOWN are its no longer, and must not hold a scheduler back) reach
  // run.max_pending even after leaving out the timers overdue by more
  // than overdue_grace_ (a timer the subject lost never makes room; those are
  // the drain's lost_timer findings, not a reason to stall until the watchdog).
  // O(live) when at the cap, O(1) otherwise.
  bool blocked_by_pending();
  // excused_by_failure: whether `cookie`'s timer, never delivered (or refused), is
  // not judged: the subject does not promise contains_errors and its extras
  // excuse it (SubjectExtras::excused_after_failure, engine_subject.h).
  bool excused_by_failure(std::uint64_t cookie) const;

  // ---- engine_subject_facility_end.cc: the run and its end ----
  // ledger_options: the case's ledger: its rules, sink (the case's findings) and
  // the fire_lateness histogram.
  TimerLedger::Options ledger_options();
  void build_actors();
  void run_threads();
  void run_virtual();
  void drain_and_check();
  // idle_probes: kIdleProbes probes (above), each waited for; lost_timer for one
  // that does not fire, after which probing stops. Counter "idle_probes".
  void idle_probes();
  // wait_step: one step of waiting for the subject: a virtual tick and a poll on
  // the virtual clock, else a short sleep (the poller or the subject fires).
  void wait_step(std::chrono::nanoseconds real_sleep);
  void check_conservation(const char* when);
  void shutdown_with_pending();

  CaseContext& ctx_;
  const Scenario& s_;
  AbiCalls calls_;
  const SubjectExtras extras_;
  const bool virtual_;  // one thread on tlab's clock
  const bool loop_;     // TLAB_DRIVE_LOOP
  const bool host_clock_;
  const std::int64_t tick_ns_;
  const std::int64_t max_delay_;  // max_delay_ns, 0 read as INT64_MAX
  // How far past its deadline a timer may still be about to fire: 20 ticks on
  // the virtual clock, the watchdog's lost-wakeup grace on the real one.
  const std::int64_t overdue_grace_;
  std::atomic<std::int64_t> vclock_{kSubjectVirtualEpochNs};  // main thread writes
  std::atomic<std::int64_t> poll_now_{0};                     // the now of the poll in progress
  std::atomic<std::uint64_t> next_cookie_{1};
  std::atomic<bool> producers_done_{false};
  std::atomic<bool> poller_stop_{false};
  // Callback scripts: on when the subject is REENTRANT and a scheduler scripts;
  // feeding_ until the producers are done; the poll in progress (its thread only).
  const bool scripts_;
  std::atomic<bool> feeding_{true};
  std::uint64_t poll_number_ = 0;  // written and read by the polling thread
  bool starving_ = false;          // the polling thread: this poll got no more re-arms
  std::mutex script_mu_;           // script_rng_, for SELF subjects' threads
  std::mt19937_64 script_rng_;     // draws made inside callbacks
  // Declared scripts: on when the subject takes them (schedule_scripted); the
  // timers a script will arm (id -> its delay and mark) and the fires whose
  // scripts are being reported (id -> the fire's instant); script_mu_.
  const bool declared_;
  struct Planned {
    std::int64_t delay = 0;
    std::uint32_t mark = 0;
  };
  std::unordered_map<std::uint64_t, Planned> planned_;
  std::unordered_map<std::uint64_t, LedgerInstant> reporting_;
  // A lower bound of when each timer with a declared script was scheduled.
  std::unordered_map<std::uint64_t, std::int64_t> script_from_;
  ActorRun callback_;  // the calls made from inside callbacks
  std::deque<ActorRun> runs_;
  ActorState* timer_st_ = nullptr;
  // fire_lateness, sampled by the ledger's lateness callback: under the ledger's
  // mutex, from whatever thread fires.
  ActorLog* fire_log_ = nullptr;
  const Format format_{*this};
  TimerLedger ledger_;
  std::mutex err_mu_;
  std::string error_;   // err_mu_: the first driver error
  std::thread poller_;  // real clock, LOOP subjects: poll until the drain ends
  ActorRun shutdown_;   // the timers left pending for destroy()
  ActorRun probe_;      // the idle probes (idle_probes)
};

}  // namespace tlab::tool::runner
