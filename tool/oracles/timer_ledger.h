// tlab/tool/oracles/timer_ledger.h: the per-timer verdicts of a timer facility,
// decided in one place.
//
// A TimerLedger follows every timer of one subject instance from schedule() to its
// outcome, keyed by the cookie tlab passed, and judges each event against what it
// already knows: a fire against the deadline and the cancels, a cancel's answer
// against the fires and the other cancels, pending() against the open timers. Each
// finding is an Oracle (oracles.h) whose kOracleInfo row names the promise it
// judges; the ledger reports findings for every promise, and judge() (or the
// property layer's own sink) decides which of them fail. It is tuned for the
// generic driver's worst case, a million live timers raced by several threads:
// O(1) per event, with the history of settled timers in a fixed ring.
//
// Its clients, and what each feeds it:
// clang-format off
//   | client                          | order        | clock            | rules judged                     |
//   |---------------------------------|--------------|------------------|----------------------------------|
//   | runner/engine_subject_facility  | overlapping  | tlab's (virtual  | all but fifo_earlier_armed and   |
//   | (the generic driver)            |              | or monotonic)    | pending_list                     |
//   | layers/subject_property         | sequential   | virtual; steps   | all but fifo_later_first,        |
//   | (the property layer)            |              | are transcript   | prevented_twice and pending_list |
//   |                                 |              | lines            | ("may answer anything")          |
//   | subjects/exec/exec_session      | overlapping  | the subject's    | early and pending_list only: the |
//   | (an exec subject's own stamps)  |              | own (t_ns)       | driver's ledger judges the rest  |
//
// A timer's states (cookie-keyed; "live" ones are in the live map, the others in
// the settled ring):
//   | state     | entered by                          | may fire            | then                        |
//   |-----------|-------------------------------------|---------------------|-----------------------------|
//   | live      | schedule() (before the call: a SELF | must, once due      | fired, prevented, refused,  |
//   |           | subject may fire while it runs)     |                     | doubtful                    |
//   | doubtful  | a cancel said TOO_LATE or UNKNOWN   | may (TOO_LATE: must | fired, prevented            |
//   |           | while it had not fired (still live) | by the end, unless  |                             |
//   |           |                                     | judged at once)     |                             |
//   | fired     | its first fire                      | never again         | (ring)                      |
//   | prevented | a cancel said PREVENTED             | never               | (ring; sequential: fired)   |
//   | refused   | schedule() returned an error        | never               | (ring)                      |
//
// The rules it judges, with the sentence each one's finding opens with: the
// catalogue in ledger_rules.h.
// Lateness (rule late) is judged only with Options::late_allowance set, for a
// subject tlab polls (subject.h: a LOOP subject fires a timer no later than the
// first poll at or after deadline + tick_ns): the client calls poll_began() as each
// poll begins, and a fire is late when the poll before the one it came in began
// after the timer was armed() with a now at or after its due time plus the
// allowance. The due time is the `late_from` instant armed() was given (the
// schedule's now for a subject on tlab's clock; the call's return for one that
// reads its own clock, which it read somewhere inside the call) plus the delay,
// or that instant alone for a negative delay ("due now", not in the past).
// Periodic series (LedgerSchedule::period > 0; subject.h, "Periodic timers"): a
// series stays live under its cookie, and each fire is judged as the first fire
// of a one-shot due at its run's time; then the record moves on to the next run:
//   | kind            | next run: early before       | late from (rule late)              |
//   |-----------------|------------------------------|------------------------------------|
//   | FIXED_RATE      | the next grid point          | that, or the fire if it is past    |
//   | FIXED_RATE_SKIP | the first grid point after   | the first grid point after the     |
//   |                 | the run's start (S_k)        | fire's now                         |
//   | FIXED_DELAY     | S_k + period                 | the fire's now + period, then      |
//   |                 |                              | run_ended's instant + period       |
// S_k, the instant a subject that reads its own clock may have started the run
// at, is bounded below by the poll's now (the latest poll_began) and the run's own
// due time; the fire's now is the client's reading, at or after it. Early is
// judged against the first column; everything that asks whether a run is due
// (lost at the drain, the queries) against the second (due_of). A fire before
// run_ended() of the previous run is overlapping_run. Runs are counted apart from
// fires (LedgerCounts::runs): a series is one open timer until a cancel settles
// it, so pending() counts it once. A fire that began before or while a PREVENTED
// call for the series was in flight may finish (only a run that begins after it
// is fired_after_prevented). A TOO_LATE for a live series is wrong (judged as
// too_late_unfired): only a stopped series is too late to stop.
// FIFO ties are judged among timers scheduled with LedgerSchedule::fifo, per owner
// and deadline. To add a rule, see ledger_rules.h.
//
// Order. Two calls are ordered only when one returned before the other began, by
// steps (LedgerInstant::step); overlapping calls may be linearised either way:
//   | order       | steps                                    | what it changes                          |
//   |-------------|------------------------------------------|------------------------------------------|
//   | overlapping | the ledger's own count: one per fire     | a TOO_LATE may be right for a timer      |
//   |             | (taken under its lock) and one per       | whose fire is in flight: judged at the   |
//   |             | step() (a call's begin, its return)      | end (overdue()); a fire after PREVENTED  |
//   |             |                                          | is placed against the call by the clocks |
//   |             |                                          | (it may have begun during the call),     |
//   |             |                                          | unless it comes on the thread that made  |
//   |             |                                          | the call (a callback's cancel): after    |
//   | sequential  | the caller's (transcript lines); a call  | TOO_LATE for an unfired timer is wrong   |
//   |             | never overlaps another or a fire         | at once, and the timer is then doubtful; |
//   |             |                                          | a fire of a prevented timer is judged    |
//   |             |                                          | as a fire too (early, FIFO) and settles  |
//   |             |                                          | it as fired                              |
// clang-format on
//
// Sentences: one per rule, here; LedgerFormat says how the client prints an
// instant ("t=1.234ms", "step 4", "its t_ns 17"), a time, a duration, a delay, a
// timer and a handle. A sentence the tests match keeps its words.
//
// Cost: one mutex acquisition per method. schedule, armed, refused, fired and
// cancelled are O(1) (hash map, ring slot, FIFO group map O(log groups)); a
// sequential fire adds O(live) for fifo_earlier_armed. overdue(), pending_list(),
// holder_of (in a stale cancel's sentence), the due_by/any_due_by/latest_deadline
// scans and outstanding(overdue) are O(live), timers() O(live + ring) plus a sort;
// everything else is O(1).
// Memory: a record per live timer (~150 bytes with its hash node), the ring of
// Options::ring settled timers (128 bytes each: 2 MiB at the driver's 16384), 64
// settled handles for stale cancels, one FIFO group per (owner, deadline) with an
// unresolved tie: O(live + ring), never O(operations).
//
// Ground rules: every public method takes the one mutex, so any thread may call
// any of them; fired() may come from any thread the subject owns (a SELF subject's
// timer thread, inside a LOOP subject's poll). The sink, the lateness callback and
// an `excused` predicate run under that mutex: they must not call back into this
// ledger, and take only locks ordered after it. A client's own lock (the driver's
// call mutex; an exec session's mu_) is taken before its ledger's. With an exec
// subject the order is: the driver's ledger, then (its `excused` predicate) the
// session's mu_, then the session's ledger; never back. Strings passed by view
// (owners, callers) must outlive the ledger.
//
// Memory ordering: everything is under the mutex, so an event recorded by one
// thread happens-before every later method on any thread; the step count, being
// taken under it, orders a call's begin and return against every fire. A fire
// that races its own schedule() call (a SELF subject) finds the record: the
// client tells schedule() before making the call.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oracles/ledger_rules.h"
#include "oracles/oracles.h"
#include "tlab/base/annotations.h"
#include "tlab/platform/std_mutex.h"
#include "tlab/subject.h"

namespace tlab::tool {

enum class LedgerOrder : std::uint8_t {
  kOverlapping,  // calls and fires may overlap; the ledger numbers the steps
  kSequential,   // one call at a time, no fire during a call; the caller's steps
};

// LedgerInstant: when an event happened: `t` on the judged clock (ns), `step` its
// place in the order (overlapping: from step(), or taken by fired(); sequential:
// the caller's, e.g. a transcript line; 0 where no order is judged).
struct LedgerInstant {
  std::int64_t t = 0;
  std::uint64_t step = 0;
};

// LedgerFormat: how a client prints the pieces of a sentence. The defaults are
// the generic driver's, except at(), which every client names its own way.
class LedgerFormat {
 public:
  virtual ~LedgerFormat() = default;
  // LedgerFormat::at: an event's instant ("t=1.234ms", "step 4", "its t_ns 17").
  virtual std::string at(const LedgerInstant& i) const = 0;
  // LedgerFormat::time: a deadline or horizon on the judged clock; at({t, 0}).
  virtual std::string time(std::int64_t t) const { return at(LedgerInstant{t, 0}); }
  virtual std::string duration(std::int64_t ns) const;    // "1.500ms" (fmt_ns)
  virtual std::string delay(std::int64_t ns) const;       // as passed: "1500000 ns"
  virtual std::string timer(std::uint64_t cookie) const;  // "cookie 5"
  virtual std::string handle(std::uint64_t cookie, std::uint64_t handle) const;  // "handle 0x1f"
};

// What a schedule() call said about its timer.
struct LedgerSchedule {
  std::string_view owner;  // who scheduled it ("scheduler#0"; "" for a single caller)
  LedgerInstant at;        // when the call was made (its `now`)
  std::int64_t delay = 0;  // ns, as passed; the deadline is at.t + delay, saturated
  bool fifo = false;       // a FIFO tie candidate (fifo_* rules)
  std::uint32_t mark = 0;  // the client's own bits, handed back by fired()
  // pass: the poll (poll_began's number) whose callback scheduled it; 0: not
  // scheduled from inside a poll's callback.
  std::uint64_t pass = 0;
  // chain, chain_origin: scheduled from the callback of a fire that returned
  // LedgerFired::chain (its links so far in this poll) and chain_origin; 0 and 0
  // otherwise. Many short chains in one poll are not one long one: only a chain's
  // own length counts toward starvation.
  std::uint64_t chain = 0;
  std::uint64_t chain_origin = 0;
  // A periodic series (schedule_periodic): its period (> 0) and its kind (one
  // TLAB_PERIODIC_* bit); period 0: a one-shot timer.
  std::int64_t period = 0;
  std::uint32_t periodic = 0;
};

// One cancel() call that returned TLAB_OK with a result.
struct LedgerCancel {
  std::uint64_t cookie = 0;  // the timer the caller meant
  std::uint64_t handle = 0;  // what it passed
  std::string_view who;      // the caller ("canceller#0"; "" for a single caller)
  LedgerInstant begin, end;  // when the call began and returned
  // why: set when the caller knew the timer might have settled (a stale cancel, a
  // re-arm): appended to a PREVENTED finding, with the live timer that now holds
  // the handle ("; a stale cancel (...)").
  std::string_view why;
};

// What fired() found.
struct LedgerFired {
  bool first = false;        // the timer was live: this is its fire (lateness was sampled)
  std::uint32_t mark = 0;    // LedgerSchedule::mark, when first
  std::uint64_t handle = 0;  // when first and armed() was told (has_handle)
  bool has_handle = false;
  // starving: this fire is at least the Options::starvation_after-th link of a
  // chain within the running poll: the client must stop scheduling from callbacks
  // until the next poll (the starvation rule reported it).
  bool starving = false;
  // chain, chain_origin: what a timer scheduled from this fire's callback passes
  // as LedgerSchedule::chain and chain_origin: this fire's place in its same-poll
  // chain (0 when it was not scheduled by a callback of this poll) and the
  // cookie whose callback began the chain.
  std::uint64_t chain = 0;
  std::uint64_t chain_origin = 0;
  // periodic: a run of a series, which stays live: the client calls run_ended()
  // once the fired() callback that reported it returns.
  bool periodic = false;
};

// A live timer as the queries show it.
struct LedgerView {
  std::uint64_t cookie = 0;
  std::uint64_t handle = 0;
  bool has_handle = false;  // armed() was told
  LedgerInstant scheduled;
  std::int64_t delay = 0;
  std::int64_t deadline = 0;  // a periodic series: its next run's
  std::int64_t period = 0;    // a periodic series' (0: one-shot)
};

struct LedgerCounts {
  std::uint64_t armed = 0, fired = 0, prevented = 0;  // armed(): schedules that returned OK
  std::uint64_t live = 0;  // scheduled, neither fired, prevented nor refused
  std::uint64_t runs = 0;  // runs of periodic series (not in `fired`)
};

// What pending_window() saw before a pending() call.
struct LedgerWindow {
  std::uint64_t open = 0;      // armed - fired - prevented
  std::uint64_t doubtful = 0;  // of those, the doubtful (overlapping: UNKNOWN only)
};

// Which timers timers() lists.
enum class LedgerWhich : std::uint8_t {
  kArmed,     // live and not doubtful
  kLive,      // live, doubtful or not
  kAccepted,  // live, or settled as fired or prevented and still in the ring
};

class TimerLedger {
 public:
  // A ring of 16384 settled timers (2 MiB): a second fire or a fire after
  // PREVENTED comes within a few polls of the first outcome in every subject we
  // know; the ring only has to outlive that, not the run.
  static constexpr std::size_t kDefaultRing = 16384;
  // Stale cancels pick among the last 64 settled timers: a facility reuses a freed
  // slot within a few schedules (a LIFO free list at once), so most of these
  // handles' storage holds a newer live timer, the case a stale cancel probes.
  static constexpr std::size_t kStaleRing = 64;

  struct Options {
    LedgerRules rules = LedgerRules::all();
    LedgerOrder order = LedgerOrder::kOverlapping;
    std::size_t ring = kDefaultRing;       // settled timers kept for late events (0: none)
    const LedgerFormat* format = nullptr;  // required; outlives the ledger
    // sink: each finding (required). Called under the ledger's mutex.
    std::function<void(Oracle, const std::string&)> sink;
    // lateness: now - deadline of each first fire (optional). Under the mutex.
    std::function<void(std::int64_t)> lateness;
    // late_allowance: how late after its due time a poll may pass a timer over
    // (rule late); nullopt: lateness is not judged (no polls, or not told of them).
    std::optional<std::int64_t> late_allowance;
    // starvation_after: how long a chain of timers, each scheduled by the callback
    // of the one before, may run within one poll before it counts as a chain that
    // keeps the poll from returning (rule starvation).
    std::uint64_t starvation_after = kDefaultStarvationAfter;
  };
  // A thousand: a chain re-armed at a random delay from its own callback stays in
  // one poll that long with probability (its re-arm chance)^1000, nil below 0.99,
  // however many chains a late poll finds due at once.
  static constexpr std::uint64_t kDefaultStarvationAfter = 1000;

  // TimerLedger::TimerLedger
  // Requires: options.format and options.sink set (std::invalid_argument).
  explicit TimerLedger(Options options);
  TimerLedger(const TimerLedger&) = delete;
  TimerLedger& operator=(const TimerLedger&) = delete;

  // ---- events (timer_ledger.cc) ----

  // TimerLedger::schedule: `cookie` is about to be passed to schedule(); it is live
  // from now on (a fire may come before the call returns).
  // Requires: cookie != 0, not scheduled before.
  void schedule(std::uint64_t cookie, const LedgerSchedule& s);
  // TimerLedger::armed: its schedule() returned TLAB_OK with `handle` (counted as
  // armed even if it has fired meanwhile). `late_from`: the instant its lateness
  // counts from (see Lateness above; default: the schedule's now).
  void armed(std::uint64_t cookie, std::uint64_t handle,
             std::optional<std::int64_t> late_from = std::nullopt);
  // TimerLedger::poll_began: a poll of a loop subject began at `at` (overlapping:
  // at.step is taken here); every fire until the next poll_began() came from it.
  // Polls come from one thread at a time.
  // Returns: the poll's number (1, 2, ...), for LedgerSchedule::pass.
  std::uint64_t poll_began(LedgerInstant at);
  // TimerLedger::refused: its schedule() returned an error: nothing was armed.
  void refused(std::uint64_t cookie, LedgerInstant at);
  // TimerLedger::fired: the subject fired `cookie` at `now` (overlapping: now.step
  // is taken here). `context` prefixes its findings (an exec line).
  LedgerFired fired(std::uint64_t cookie, LedgerInstant now, std::string_view context = {});
  // TimerLedger::run_ended: the fired() callback of a periodic run (LedgerFired::
  // periodic) returned at `end`. A no-op once the series is settled.
  void run_ended(std::uint64_t cookie, LedgerInstant end);
  // TimerLedger::step: the next step (overlapping order): take one just after a
  // call begins and one just before it returns, for LedgerCancel::begin and end.
  std::uint64_t step();
  // TimerLedger::cancelled: `c` returned `result`.
  // Requires: result is a tlab_cancel_result (the caller judges other values).
  void cancelled(const LedgerCancel& c, std::int32_t result);
  // TimerLedger::destroyed: destroy() has returned; every later fire is wrong.
  void destroyed();

  // ---- checks the client makes at its own moments (timer_ledger_checks.cc) ----

  // TimerLedger::overdue: judges the live timers at `now`: (overlapping) each a
  // cancel said TOO_LATE of is too_late_unfired; each not doubtful and due by
  // `horizon` is lost, unless `excused(cookie)` (then counted, not judged). `until`
  // ends the lost sentence (" (drain horizon t=5ms)"). Findings in cookie order.
  // Returns: how many were excused.
  std::uint64_t overdue(LedgerInstant now, std::int64_t horizon, std::string_view until,
                        const std::function<bool(std::uint64_t)>& excused = {});
  // TimerLedger::lost: `cookie` is lost if it is still live (an idle probe the
  // subject never fired): its sentence opens with `context` and ends with `until`.
  // Returns: whether it was live.
  bool lost(std::uint64_t cookie, LedgerInstant now, std::string_view context,
            std::string_view until);
  // TimerLedger::pending_window / pending_count: take the window just before
  // calling pending(), then judge its `count` against it and the state after it
  // (a fire during the call is consistent either way). `when` names the moment
  // ("after the drain"); a gap already reported is not reported again.
  LedgerWindow pending_window();
  void pending_count(std::uint64_t count, const LedgerWindow& before, std::string_view when,
                     LedgerInstant now);
  // TimerLedger::pending_list: the subject's own list of pending timers, at its
  // end (an exec subject's `pending`).
  void pending_list(const std::vector<std::uint64_t>& cookies, std::string_view context);

  // ---- queries (timer_ledger_checks.cc) ----

  bool is_live(std::uint64_t cookie);
  std::optional<LedgerView> view(std::uint64_t cookie);  // live timers only
  // accepted: live, or settled as fired or prevented (while in the ring).
  bool accepted(std::uint64_t cookie);
  // timers: `which` timers in cookie order. O(live + ring).
  std::vector<LedgerView> timers(LedgerWhich which);
  // pick_live: a live timer drawn uniformly by `rng` (0 if none).
  std::uint64_t pick_live(std::mt19937_64& rng);
  // pick_due: a live timer, not doubtful and armed, due by `t`, found among
  // kPickDueTries draws by `rng` (0 if none of them is). O(kPickDueTries).
  static constexpr int kPickDueTries = 16;
  std::uint64_t pick_due(std::int64_t t, std::mt19937_64& rng);
  // pick_settled: one of the last kStaleRing settled timers that had a handle,
  // drawn by `rng`, as {cookie, handle}; nullopt before any.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> pick_settled(std::mt19937_64& rng);
  // outstanding: live timers not doubtful (those the subject still holds); with
  // `overdue`, also leaving out those whose deadline it says is overdue (O(live)).
  std::uint64_t outstanding(const std::function<bool(std::int64_t deadline)>& overdue = {});
  // any_due_by: a live timer, not doubtful, due by `t`.
  bool any_due_by(std::int64_t t);
  // latest_deadline: the latest deadline of a live timer not doubtful, or `floor`.
  std::int64_t latest_deadline(std::int64_t floor);
  // due_by: live timers other than `except`, not doubtful, due by `t`.
  std::uint64_t due_by(std::int64_t t, std::uint64_t except);
  LedgerCounts counts();

 private:
  enum class Outcome : std::uint8_t { kNone, kFired, kPrevented, kRefused };
  // How a fire stands to a cancel call that said PREVENTED for its timer.
  enum class FireWhen : std::uint8_t { kBefore, kDuring, kAfter };
  // What schedule() and armed() said; kept while live and in the ring.
  struct Facts {
    std::string_view owner;
    LedgerInstant scheduled;
    std::int64_t delay = 0;
    std::int64_t deadline = 0;  // scheduled.t + delay, saturated
    std::uint64_t handle = 0;
    bool has_handle = false;
    bool fifo = false;
    std::uint32_t mark = 0;
    std::uint64_t pass = 0;
    std::uint64_t chain = 0, chain_origin = 0;  // LedgerSchedule's
    std::int64_t late_from = 0;                 // armed(): see Lateness
    std::uint64_t armed_step = UINT64_MAX;      // the step count when armed() was told
    // Periodic series: the period and kind; the run now awaited (0: the first),
    // the first run's deadline (the grid's origin) and the previous run's fire.
    std::int64_t period = 0;
    std::uint32_t periodic = 0;
    std::uint64_t run = 0;
    std::int64_t grid0 = 0;
    LedgerInstant run_at;
  };
  struct Record : Facts {
    bool too_late = false;      // a cancel said TOO_LATE while it had not fired
    bool unknown = false;       // a cancel said UNKNOWN: no claim
    bool running = false;       // a periodic run's fired() has not returned (run_ended)
    LedgerInstant too_late_at;  // the earliest-returning such call's return
    std::string_view too_late_by;
    std::size_t at_index = 0;  // in live_ids_
  };
  struct Settled : Facts {
    std::uint64_t cookie = 0;
    Outcome how = Outcome::kNone;
    LedgerInstant at;         // fired: the fire; prevented: the call's return; refused: the call
    LedgerInstant called_at;  // prevented: the call's begin (its step orders it)
    std::string_view by;      // prevented: the caller
    std::thread::id thread;   // the thread that reported the outcome (settle())
  };
  struct FifoGroup {
    std::uint64_t unresolved = 0;
    std::uint64_t fired_cookie = 0;  // the highest cookie of the group fired so far
  };
  using Live = std::unordered_map<std::uint64_t, Record>;

  bool judges(LedgerRule r) const { return options_.rules.has(r); }
  void report(LedgerRule r, const std::string& sentence) TLAB_REQUIRES(mu_);
  bool doubtful(const Record& r) const { return r.too_late || r.unknown; }
  // due_of: when the timer must have fired by (before the lateness allowance):
  // its deadline, or for a periodic run after the first the latest instant the
  // run may be due at (next_run's "late from"; its deadline is the earliest), so a
  // series whose run began late and moved its next one is not lost meanwhile.
  static std::int64_t due_of(const Facts& f) {
    return f.period > 0 && f.run > 0 ? std::max(f.deadline, f.late_from) : f.deadline;
  }
  std::uint64_t doubtful_count() const TLAB_REQUIRES(mu_);
  const Settled* settled(std::uint64_t cookie) const TLAB_REQUIRES(mu_);
  void settle(Live::iterator it, Outcome how, LedgerInstant at, LedgerInstant called_at,
              std::string_view by) TLAB_REQUIRES(mu_);
  // judge_fire: the rules of a timer's fire, on its facts (a live timer's, or a
  // prevented one's in sequential order).
  void judge_fire(std::uint64_t cookie, const Facts& f, LedgerInstant now, bool first,
                  std::string_view context) TLAB_REQUIRES(mu_);
  // settled_fire: a fire of a timer no longer live (twice, after PREVENTED, ...).
  void settled_fire(std::uint64_t cookie, LedgerInstant now, std::string_view context)
      TLAB_REQUIRES(mu_);
  // judge_pass: rules same_pass and starvation for a live timer's first fire;
  // fills out.starving, out.chain and out.chain_origin.
  void judge_pass(std::uint64_t cookie, const Facts& f, LedgerInstant now, std::string_view context,
                  LedgerFired& out) TLAB_REQUIRES(mu_);
  // next_run: a periodic series' record after run `r.run` fired at `now`.
  void next_run(Record& r, LedgerInstant now) TLAB_REQUIRES(mu_);
  // armed_as: how the timer was armed, for sentences: "schedule(now, delay=5 ns)
  // called at t=1ms", or a periodic run's "run 3 of schedule_periodic(...) ...".
  std::string armed_as(const Facts& f) const;
  // judge_late: rule late for a live timer's first fire.
  void judge_late(std::uint64_t cookie, const Facts& f, LedgerInstant now, std::string_view context)
      TLAB_REQUIRES(mu_);
  void fire_vs_prevented(std::uint64_t cookie, std::uint64_t handle, LedgerInstant fired_at,
                         FireWhen when, std::string_view who, LedgerInstant begin,
                         LedgerInstant end, std::string_view prefix, const std::string& note)
      TLAB_REQUIRES(mu_);
  // prevented_settled: a PREVENTED for a timer no longer live (`s`: its ring
  // entry, or nullptr when it is no longer kept).
  void prevented_settled(const LedgerCancel& c, const Settled* s) TLAB_REQUIRES(mu_);
  // call: "canceller#0's cancel(handle 0x1f) of cookie 5, called at t=1.000ms".
  std::string call(std::string_view who, std::uint64_t handle, std::uint64_t cookie,
                   LedgerInstant begin) const;
  static std::string caller(std::string_view who);  // "canceller#0's cancel", "cancel"
  static std::string of(std::string_view owner);    // " of scheduler#0", ""
  std::string too_late_sentence(std::uint64_t cookie, const Record& r, LedgerInstant now) const;
  // holder_of: "; the handle's value now names live cookie ..." or "". O(live).
  std::string holder_of(std::uint64_t handle, std::uint64_t cookie) const TLAB_REQUIRES(mu_);
  std::string lost_sentence(std::uint64_t cookie, const Record& r, LedgerInstant now,
                            std::string_view context, std::string_view until) const;

  const Options options_;
  const LedgerFormat& f_;
  StdMutex mu_;
  Live live_ TLAB_GUARDED_BY(mu_);
  std::vector<std::uint64_t> live_ids_ TLAB_GUARDED_BY(mu_);  // live_'s keys, for a random pick
  std::vector<Settled> ring_ TLAB_GUARDED_BY(mu_);            // cookie % ring
  std::array<std::pair<std::uint64_t, std::uint64_t>, kStaleRing> stale_ TLAB_GUARDED_BY(mu_){};
  std::uint64_t stale_count_ TLAB_GUARDED_BY(mu_) = 0;  // ever put in stale_
  std::map<std::pair<std::string_view, std::int64_t>, FifoGroup> fifo_ TLAB_GUARDED_BY(mu_);
  std::uint64_t armed_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t fired_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t runs_ TLAB_GUARDED_BY(mu_) = 0;  // periodic runs (not in fired_)
  std::uint64_t prevented_ TLAB_GUARDED_BY(mu_) = 0;
  std::uint64_t unknown_open_ TLAB_GUARDED_BY(mu_) = 0;  // live timers with an UNKNOWN cancel
  std::uint64_t disowned_ TLAB_GUARDED_BY(mu_) = 0;      // live timers that are doubtful
  std::uint64_t max_cookie_ TLAB_GUARDED_BY(mu_) = 0;    // the highest cookie scheduled
  std::uint64_t step_ TLAB_GUARDED_BY(mu_) = 0;          // overlapping: the steps so far
  std::int64_t reported_gap_ TLAB_GUARDED_BY(mu_) = 0;   // the last pending_count gap reported
  bool destroyed_ TLAB_GUARDED_BY(mu_) = false;
  // The poll in progress and the one before it (poll_began); step 0: none yet.
  LedgerInstant poll_now_ TLAB_GUARDED_BY(mu_), poll_before_ TLAB_GUARDED_BY(mu_);
  std::uint64_t polls_ TLAB_GUARDED_BY(mu_) = 0;           // poll_began() calls so far
  bool starvation_reported_ TLAB_GUARDED_BY(mu_) = false;  // in the running poll
};

}  // namespace tlab::tool
