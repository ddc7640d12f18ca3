// tlab/tool/runner/engine_subject_facility.h: one scenario case on a timer
// facility that speaks the subject ABI (TLAB_KIND_FACILITY, tlab/subject.h).
// Internal to the generic driver (engine_subject.h): engine_subject_facility.cc
// has the actors and the judging of each call, engine_subject_facility_end.cc
// the run, the drain and the end-of-case checks.
//
// How the roles become ABI calls:
//   | role         | calls                                                              |
//   |--------------|--------------------------------------------------------------------|
//   | scheduler    | schedule(now, delay, cookie) per operation (mode once); on a HOST  |
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
// prevented), picked at random from the last kStaleRing settled: the subject must
// answer TOO_LATE or UNKNOWN (or TLAB_EINVAL) and touch no other timer, however
// its storage was reused (subject.h: "cancel() on a handle whose timer fired or
// was cancelled long ago must not touch another timer"). PREVENTED is wrong_result;
// a live timer the call removed instead never fires (lost_timer, conservation).
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
// Clocks: on a virtual case (engine.clock virtual and TLAB_PROMISE_VIRTUAL) one
// thread runs everything, a seeded round-robin over the actors, the clock at 2^62
// ns advanced by tick_us per step and poll(now) after each, so a replay is exact.
// Otherwise actors are threads on CLOCK_MONOTONIC, which the host passes as now.
// "now" at a fire is the poll's now for a HOST loop subject (the subject's own
// clock), else CLOCK_MONOTONIC read in the callback.
//
// Judged (each an Oracle; a sentence names the cookie, times and calls). Two calls
// are ordered only when one returned before the other began (by seq_, the steps in
// which calls begin and end and fires reach tlab's record lock, not by the order
// their threads judge the results): overlapping calls may be linearised either way.
//   | oracle             | finding                                                        |
//   |--------------------|----------------------------------------------------------------|
//   | early_fire         | fired with now < now_at_schedule + delay (saturated)           |
//   | double_resume      | a cookie fired twice                                           |
//   | fired_after_cancel | fired after the cancel() that said PREVENTED had returned, or  |
//   |                    | after destroy()                                                |
//   | wrong_result       | PREVENTED for a timer whose fire reached tlab before or during |
//   |                    | the call; two PREVENTED for one timer; PREVENTED from a call   |
//   |                    | that began after a TOO_LATE call had returned (or TOO_LATE     |
//   |                    | that returned before a PREVENTED call began); TOO_LATE for a   |
//   |                    | timer never fired nor prevented by the end; a fire of a cookie |
//   |                    | whose schedule was refused                                     |
//   | lost_timer         | accepted, not prevented, due by the drain horizon, never fired;|
//   |                    | an idle probe not fired overdue_grace_ past its deadline;      |
//   |                    | TLAB_EINVAL for a delay within [0, max_delay_ns]               |
//   | fifo_order         | equal deadlines from one scheduler fired out of schedule order |
//   | conservation       | pending() != scheduled - fired - prevented, at quiescent points|
//                        (after each virtual step; after the real-clock drain). A cancel
//                        that said UNKNOWN makes no claim: its timer is excused from
//                        lost_timer and may be absent from pending().
// Status codes: TLAB_EINVAL for a negative delay or one above max_delay_ns is a
// refusal (counter "refused"); TLAB_ENOMEM is counted ("schedule_enomem",
// "cancel_enomem"); TLAB_EINVAL from cancel is counted and makes no claim; any
// other non-OK status (or a result that is no tlab_cancel_result) is a driver
// error: the case's verdict is error, with the call in the message.
//
// Memory: a record per live timer (Live) and a ring of the last kSettledRing
// settled cookies (so a second fire, or a fire after PREVENTED, still names what
// happened first); a late fire of a cookie older than the ring is reported without
// the details of its first outcome; the last kStaleRing settled handles, for stale
// cancels. O(run.max_pending + rings), not O(operations).
//
// Ground rules: the driver's main thread owns the case; actors are threads (real
// clock) or turns of the main thread (virtual). live_, the ring, the FIFO groups
// and the counters are guarded by mu_; the call mutex (AbiCalls) is taken before
// mu_, never while holding it. fired() may come from any thread the subject owns.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runner/engine_subject_calls.h"

namespace tlab::tool::runner {

class FacilityCase {
 public:
  FacilityCase(CaseContext& ctx, const tlab_subject& d, const SubjectExtras& extras);
  // FacilityCase::run: the whole case (engine_subject_facility_end.cc). Throws
  // std::runtime_error for a driver error (a status the ABI does not allow).
  void run();

  // The fired() callback tlab passes in config.
  static void fired_cb(void* host, std::uint64_t cookie);

 private:
  // How a settled timer ended, kept in the ring for late fires and late cancels.
  enum class Outcome : std::uint8_t { kNone, kFired, kPrevented, kRefused };
  struct Settled {
    std::uint64_t cookie = 0;
    Outcome how = Outcome::kNone;
    std::int64_t at = 0;         // host clock: fired, or the PREVENTED call returned
    std::int64_t called_at = 0;  // kPrevented: host clock when that call began
    // kFired: the step its fire reached tlab; kPrevented: the step its PREVENTED
    // call began. Orders it against other cancel calls.
    std::uint64_t seq = 0;
    std::uint64_t handle = 0;
    const std::string* by = nullptr;  // the canceller that got PREVENTED
  };
  // A timer that can still change an answer: scheduled, neither fired nor prevented.
  struct Live {
    const ActorState* owner = nullptr;
    std::int64_t scheduled_at = 0;  // host clock read just before schedule()
    std::int64_t delay = 0;         // ns, as passed
    std::int64_t deadline = 0;      // scheduled_at + delay, saturated
    std::uint64_t handle = 0;
    bool has_handle = false;        // schedule() has returned TLAB_OK
    bool aligned = false;           // a FIFO tie candidate
    bool too_late = false;          // a cancel said TOO_LATE while it had not fired
    std::int64_t too_late_at = 0;   // the earliest-returning such call: host clock,
    std::uint64_t too_late_seq = 0;  // and the step it returned in
    const std::string* too_late_by = nullptr;
    bool unknown = false;  // a cancel said UNKNOWN: no claim, excused
    std::size_t at_index = 0;  // index in live_ids_
  };
  struct FifoGroup {
    std::uint64_t unresolved = 0;
    std::uint64_t fired_cookie = 0;  // the highest cookie of the group fired so far
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

  // A ring of 16384 settled cookies (~0.6 MB): a second fire or a fire after
  // PREVENTED comes within a few polls of the first outcome in every subject we
  // know; the ring only has to outlive that, not the run.
  static constexpr std::size_t kSettledRing = 16384;
  // Stale cancels pick among the last 64 settled timers: a facility reuses a freed
  // slot within a few schedules (a LIFO free list at once), so most of these
  // handles' storage holds a newer live timer, the case a stale cancel probes.
  static constexpr std::size_t kStaleRing = 64;
  // One cancel in ten by default: in facility_ties (2000 schedules) ~250 stale
  // cancels, enough to hit a reused slot on every seed we tried, while most
  // cancels still race live timers (the subject of the other findings).
  static constexpr double kDefaultStaleProbability = 0.1;
  struct Stale {
    std::uint64_t cookie = 0, handle = 0;
  };
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
  void late_fire(std::uint64_t cookie, std::int64_t now);  // requires mu_
  // settle: requires mu_; erases r. `seq` and `called_at` as in Settled.
  void settle(std::uint64_t cookie, Live& r, Outcome how, std::int64_t at, std::uint64_t seq,
              const std::string* by, std::int64_t called_at = 0);
  const Settled* settled(std::uint64_t cookie) const;  // requires mu_
  bool schedule_one(ActorRun& r, std::mt19937_64& rng);
  // schedule_timer: true when schedule() returned TLAB_OK, with `handle` its handle.
  bool schedule_timer(ActorRun& r, std::int64_t delay_ns, bool align, std::uint64_t& cookie,
                      std::uint64_t& handle);
  void cancel_one(std::uint64_t cookie, ActorState& who, ActorLog& log);
  // rearm_held: cancel r's held timer and, on PREVENTED or TOO_LATE, schedule and
  // hold a replacement; otherwise hold none.
  void rearm_held(ActorRun& r, std::mt19937_64& rng);
  // cancel_stale: cancel() of a recently settled timer's handle (if any settled).
  void cancel_stale(std::mt19937_64& rng, ActorState& who, ActorLog& log);
  struct CancelCall {
    std::uint64_t cookie = 0, handle = 0;
    bool stale = false;  // the timer had settled before the call (cancel_stale)
    bool rearm = false;  // a re-arm's cancel of the held timer (rearm_held)
    std::int64_t t0 = 0, t1 = 0;       // host clock when the call began and returned
    std::uint64_t began = 0, ended = 0;  // seq_ steps when it began and returned
  };
  // call_cancel: the cancel result when cancel() returned TLAB_OK, else 0.
  std::int32_t call_cancel(CancelCall& c, ActorState& who, ActorLog& log);
  void on_cancel_result(const CancelCall& c, std::int32_t result, const std::string& who);
  // holder_of: " (cookie N, live, now holds handle 0x...)" or "": who a stale
  // handle's value names now. Requires mu_; O(live), on a finding only.
  std::string holder_of(std::uint64_t handle, std::uint64_t cookie) const;
  // How a fire stands to a cancel call that said PREVENTED for its timer.
  enum class FireWhen : std::uint8_t { kBefore, kDuring, kAfter };
  // fire_vs_prevented: the finding for a timer that fired at `fired_at` although
  // `call` (by `who`, called at t0, returned at t1) said PREVENTED: wrong_result
  // when the fire came before or during the call, fired_after_cancel after it.
  void fire_vs_prevented(std::uint64_t cookie, std::uint64_t handle, std::int64_t fired_at,
                         FireWhen when, const std::string& who, std::int64_t t0,
                         std::int64_t t1, const std::string& note = {});  // requires mu_
  std::uint64_t pick_live(std::mt19937_64& rng);
  void poll_once();
  void check_status(std::int32_t st, const std::string& call);
  // FacilityCase::driver_error: keeps the first error and stops the case; run()
  // throws it once the actors are joined.
  void driver_error(const std::string& what);
  void throw_if_error();
  void scheduler_loop(ActorRun& r, std::mt19937_64& rng);
  void canceller_loop(ActorRun& r, std::mt19937_64& rng);
  void poller_loop();
  // outstanding: the live timers the subject still holds (run.max_pending bounds
  // them): those a cancel called TOO_LATE or UNKNOWN are its no longer, and must
  // not hold a scheduler back (a bug that drops them would stall the case).
  std::uint64_t outstanding();
  // blocked_by_pending: whether a scheduler must wait for room: outstanding()
  // reaches run.max_pending even after leaving out the timers overdue by more
  // than overdue_grace_ (a timer the subject lost never makes room; those are
  // the drain's lost_timer findings, not a reason to stall until the watchdog).
  // O(live) when at the cap, O(1) otherwise.
  bool blocked_by_pending();
  // excused_by_failure: whether `cookie`'s timer, never delivered (or refused), is
  // not judged: the subject does not promise contains_errors and its extras
  // excuse it (SubjectExtras::excused_after_failure, engine_subject.h).
  bool excused_by_failure(std::uint64_t cookie) const;

  // ---- engine_subject_facility_end.cc: the run and its end ----
  void build_actors();
  void run_threads();
  void run_virtual();
  void drain_and_check();
  // idle_probes: kIdleProbes probes (above), each waited for; lost_timer for one
  // that does not fire, after which probing stops. Counter "idle_probes".
  void idle_probes();
  bool is_live(std::uint64_t cookie);
  // wait_step: one step of waiting for the subject: a virtual tick and a poll on
  // the virtual clock, else a short sleep (the poller or the subject fires).
  void wait_step(std::chrono::nanoseconds real_sleep);
  bool due_unsettled_by(std::int64_t target);
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
  std::atomic<std::int64_t> poll_now_{0};  // the now of the poll in progress
  std::atomic<std::uint64_t> next_cookie_{1};
  std::atomic<bool> producers_done_{false};
  std::atomic<bool> poller_stop_{false};
  std::deque<ActorRun> runs_;
  ActorState* timer_st_ = nullptr;
  ActorLog* fire_log_ = nullptr;  // mu_: fire_lateness, from whatever thread fires

  std::mutex mu_;
  std::unordered_map<std::uint64_t, Live> live_;  // mu_
  std::vector<std::uint64_t> live_ids_;          // mu_: live_'s keys, for a random pick
  std::vector<Settled> ring_;                    // mu_: cookie % kSettledRing
  std::array<Stale, kStaleRing> stale_{};        // mu_: the last settled with a handle
  std::uint64_t stale_count_ = 0;                // mu_: ever put in stale_
  std::map<std::pair<const ActorState*, std::int64_t>, FifoGroup> fifo_;  // mu_
  std::uint64_t armed_ = 0, fired_ = 0, prevented_ = 0;  // mu_
  std::uint64_t unknown_open_ = 0;  // mu_: live timers with an UNKNOWN cancel
  std::uint64_t disowned_ = 0;      // mu_: live timers with a TOO_LATE or UNKNOWN cancel
  bool destroyed_ = false;          // mu_: destroy() has returned
  std::uint64_t seq_ = 0;  // mu_: one step per fire and per cancel call begun or returned
  std::int64_t reported_gap_ = 0;   // mu_: the last conservation gap reported
  std::mutex err_mu_;
  std::string error_;  // err_mu_: the first driver error
  std::thread poller_;      // real clock, LOOP subjects: poll until the drain ends
  ActorRun shutdown_;       // the timers left pending for destroy()
  ActorRun probe_;          // the idle probes (idle_probes)
};

}  // namespace tlab::tool::runner
