// tlab/tool/runner/engine_coro.cc: the kCoroutine engine (engines.h): coroutines on
// EventLoop<Q, P> (the case's strategy is the loop's timer queue), P = StressPlatform
// on the steady clock, or SimPlatform under deterministic simulation (run_in_sim:
// the loop thread is the driver task, and its waits for the next deadline are
// timed blocks on virtual time, so a run replays exactly).
//
// Every coroutine_task actor is one coroutine; its operations alternate between
//   co_await with_timeout(loop, sleep_for(loop, delay_us), timeout_us)
//   co_await with_timeout(loop, event, timeout_us)   (another thread sets event
//                                                     delay_us after the call)
// on one loop thread (the loop is single-threaded by design, seed 004). A
// coroutine that loses to its timeout keeps sleeping detached; run() returns when
// every coroutine and detached loser is done, and then joins the setters.
//
// A scheduler is one coroutine too: per operation it starts a timer, a coroutine
// that awaits with_timeout(loop, its own Event, delay_us): the timeout winning is
// the timer firing, and the code after it is the timer's callback, on the loop
// thread inside the pass that resumed it; an Event set() is a cancel, whose
// answer is set()'s (true: it resumed the waiter, PREVENTED; false: TOO_LATE).
// With cancel_probability the scheduler cancels its previous timer one pass later.
// With callback_* probabilities (scenario.h) each timer's callback acts before
// it returns: cancels itself (it fired: set() must return false), cancels a
// sibling (one due by now when one of kSiblingTries random picks is), or re-arms
// (the same coroutine awaits a new timer callback_rearm_delay_us ahead; a
// negative delay must be refused). Scripts act until the latest deadline the
// schedulers armed, so chains end and run() returns.
//
// Oracles: early_fire (the sleep completed before its delay, or the timeout fired
// before its duration), task_exceptions (an
// exception escaped a spawned coroutine), conservation (timer entries left in the
// loop's queue once every coroutine finished: a timer that was never cancelled),
// undeserved_timeout (the timeout won though the awaited sleep was due, or the
// awaited Event's set() had returned, the grace before the timeout's deadline:
// judge_undeserved, engines.h). Timers of schedulers: early_fire;
// fired_after_cancel (set() said PREVENTED, or a timer's own set() did after it
// fired, yet the timeout won); wrong_result (set() said TOO_LATE though the timer
// was not due yet, or the Event won after set() said TOO_LATE; a negative delay
// accepted); same_pass_fire (a timer armed by a callback resumed in the pass that
// armed it: with_timeout promises the next pass); starvation (a chain's
// thousandth link within one pass; that pass's callbacks then re-arm nothing).
#include <array>
#include <atomic>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "oracles/timer_ledger.h"
#include "runner/callback_draws.h"
#include "runner/engines.h"
#include "runner/sim_run.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/sleep_for.h"
#include "tlab/coro/task.h"
#include "tlab/coro/with_timeout.h"
#include "tlab/platform/sim_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"

namespace tlab::tool::runner {

namespace {

template <template <class, class> class QueueT, class P>
class CoroCase {
 public:
  using Loop = EventLoop<QueueT, P>;
  static constexpr bool kSim = std::is_same_v<P, SimPlatform>;

  explicit CoroCase(CaseContext& ctx) : ctx_(ctx), s_(ctx.scenario()) {}

  void run() {
    Loop loop(clock_, queue_config_of(s_));
    struct Ref {
      const Actor* a;
      ActorState* st;
      std::size_t index;
    };
    std::vector<Ref> refs;
    std::size_t index = 0;
    for (const Actor& a : s_.actors) {
      for (int i = 0; i < a.count; ++i, ++index) {
        refs.push_back({&a, &ctx_.add_actor(fmt::format("{}#{}", name_of(a.role), i)), index});
      }
    }
    ctx_.actors_ready();
    stress::seed_thread(ctx_.thread_seed(refs.size()));
    for (std::size_t i = 0; i < refs.size(); ++i) {
      Ref& r = refs[i];
      if (r.a->role == Role::kScheduler) {
        if (r.a->mode != ScheduleMode::kOnce) {
          throw std::invalid_argument("coroutine timers are one-shot: scheduler mode must be once");
        }
        ++schedulers_left_;
        loop.spawn(scheduler(loop, *r.a, *r.st, ctx_.rng_for(r.index), ctx_.share(i, refs.size())));
      } else {
        loop.spawn(body(loop, *r.a, *r.st, ctx_.rng_for(r.index), ctx_.share(i, refs.size())));
      }
    }
    loop.run();
    // Every setter has slept and set its Event by now or soon: the Events outlive
    // their set() calls.
    for (EventOp& op : event_ops_) op.setter.join();
    const LoopStats& st = loop.stats();
    ctx_.set_counter("loop_passes", st.passes);
    ctx_.set_counter("timers_fired", st.timers_fired);
    ctx_.set_counter("completed", completed_);
    ctx_.set_counter("timed_out", timed_out_);
    if (timers_ > 0) {
      ctx_.set_counter("coro_timers", timers_);
      ctx_.set_counter("coro_timers_fired", timers_fired_);
      ctx_.set_counter("coro_timers_cancelled", timers_cancelled_);
    }
    if (st.unhandled_exceptions > 0) {
      ctx_.violation(
          Oracle::kTaskExceptions,
          fmt::format("{} exception(s) escaped spawned coroutines", st.unhandled_exceptions));
    }
    if (const std::size_t left = loop.pending_timers(); left > 0 && !ctx_.stopping()) {
      ctx_.violation(
          Oracle::kConservation,
          fmt::format("{} timer entr{} left in the loop's queue at {} after every coroutine "
                      "finished (armed = fired + cancelled + pending does not close: a timer "
                      "whose race was over was never cancelled)",
                      left, left == 1 ? "y" : "ies", at(loop.now().ns())));
    }
  }

 private:
  // One timer of a scheduler (the header above): its coroutine's frame owns it;
  // live_ points to it from arming to resolution. Loop thread only.
  struct TimerRec {
    explicit TimerRec(Loop& loop) : event(loop) {}
    Event<int, Loop> event;
    std::uint64_t id = 0;
    const std::string* owner = nullptr;  // the scheduler's ActorState::name
    std::int64_t deadline = 0;           // loop clock
    std::uint64_t armed_pass = 0;        // the pass whose callback armed it; 0: a scheduler
    std::uint64_t links = 0;             // links of its chain run in armed_pass before it
    std::size_t live_at = 0;             // index in live_ while live
    bool set = false;                    // its Event was set: a cancel
    bool set_won = false;                // ... and set() returned true (PREVENTED)
    std::int64_t set_at = 0;             // when (loop clock)
    const char* by = "";                 // who set it
  };

  Task<void> scheduler(Loop& loop, const Actor& a, ActorState& st, std::mt19937_64 rng,
                       std::uint64_t quota) {
    const Actor* script = a.scripts_callbacks() ? &a : nullptr;
    std::uint64_t prev = 0;  // the id of the timer started last, 0: none
    while (ctx_.take_op(quota)) {
      st.set(Phase::kWorking);
      // The previous timer, armed since (its coroutine, spawned a pass ago, ran
      // before this one resumed): cancelled a pass after it started, like a
      // response cancelling its timeout, unless it is over already.
      if (prev != 0 && a.cancel_probability > 0 &&
          std::bernoulli_distribution(a.cancel_probability)(rng)) {
        if (TimerRec* t = find_live(prev); t != nullptr && !t->set)
          cancel_timer(*t, "its scheduler");
      }
      const std::int64_t d = a.delay_us->sample(rng) * 1000;
      prev = 0;
      if (d < 0) {
        refuse_negative(loop, d, st.name, "refused");
      } else {
        prev = ++next_id_;
        loop.spawn(timer(loop, st.name, script, prev, d));
        latest_ = std::max(latest_, (loop.now() + Duration::nanoseconds(d)).ns());
      }
      st.ops.fetch_add(1, std::memory_order::relaxed);
      st.set(Phase::kSleeping);
      co_await sleep_for(loop, Duration::zero());  // one timer per pass
    }
    if (--schedulers_left_ == 0) scripts_until_ = latest_;
    st.set(Phase::kDone);
  }

  // A timer and its chain: each link awaits its own Event under a timeout; the
  // code after a won timeout is the link's callback.
  Task<void> timer(Loop& loop, const std::string& owner, const Actor* script, std::uint64_t id,
                   std::int64_t delay) {
    std::uint64_t armed_pass = 0, links = 0;
    for (;;) {
      TimerRec rec(loop);
      rec.id = id;
      rec.owner = &owner;
      rec.deadline = (loop.now() + Duration::nanoseconds(delay)).ns();
      rec.armed_pass = armed_pass;
      rec.links = links;
      add_live(rec);
      ++timers_;
      auto r = co_await with_timeout(loop, rec.event, Duration::nanoseconds(delay));
      remove_live(rec);
      const std::int64_t back = loop.now().ns();
      const std::uint64_t pass = loop.stats().passes;
      if (r.completed()) {
        ++timers_cancelled_;
        if (!rec.set_won) {
          ctx_.violation(Oracle::kWrongResult,
                         fmt::format("timer #{} of {}: its Event won the race, but the set() by "
                                     "{} at {} had returned false (TOO_LATE)",
                                     rec.id, owner, rec.by, at(rec.set_at)));
        }
        co_return;
      }
      ++timers_fired_;
      if (back < rec.deadline) {
        ctx_.violation(
            Oracle::kEarlyFire,
            fmt::format("timer #{} of {}: its timeout won at {}, {} before its "
                        "deadline {}",
                        rec.id, owner, at(back), fmt_ns(rec.deadline - back), at(rec.deadline)));
      }
      if (rec.set && rec.set_won) {
        ctx_.violation(Oracle::kFiredAfterCancel,
                       fmt::format("timer #{} of {}: set() by {} at {} returned true (it "
                                   "resumed the waiter: PREVENTED), yet the timeout won",
                                   rec.id, owner, rec.by, at(rec.set_at)));
      }
      std::uint64_t chain = 0;
      if (rec.armed_pass != 0 && rec.armed_pass == pass) {
        chain = rec.links + 1;
        ctx_.violation(Oracle::kSamePassFire,
                       fmt::format("timer #{} of {} was armed by a callback in loop pass {} and "
                                   "its timeout won in that same pass; with_timeout's timer "
                                   "wins in the next pass",
                                   rec.id, owner, pass));
        if (chain >= TimerLedger::kDefaultStarvationAfter && starved_pass_ != pass) {
          starved_pass_ = pass;
          ctx_.violation(Oracle::kStarvation,
                         fmt::format("the chain of timer #{} of {} ran {} links within loop pass "
                                     "{}, each armed by the callback of the one before: the "
                                     "pass would not return (its callbacks re-arm nothing more)",
                                     rec.id, owner, chain, pass));
        }
      }
      if (script == nullptr || back > scripts_until_) co_return;
      const std::optional<std::int64_t> next = perform_script(loop, rec, *script);
      if (!next || starved_pass_ == pass) co_return;
      ctx_.add("callback_rearms");
      delay = *next;
      armed_pass = pass;
      links = chain;
      id = ++next_id_;
    }
  }

  // The callback script of a fired timer (the header above); returns the re-arm's
  // delay, if it re-arms. Loop thread, inside the pass that resumed the timer.
  std::optional<std::int64_t> perform_script(Loop& loop, TimerRec& rec, const Actor& a) {
    const CallbackDraws d = draw_callback(a, script_rng_);
    const bool self = d.self, sibling = d.sibling, rearm = d.rearm;
    const std::int64_t delay = d.rearm_delay_ns;
    if (self && !rec.set) {
      ctx_.add("callback_self_cancels");
      rec.set = true;
      rec.set_at = loop.now().ns();
      if (rec.event.set(1)) {
        ctx_.violation(Oracle::kFiredAfterCancel,
                       fmt::format("timer #{} of {}: set() from inside its own callback at {} "
                                   "returned true (it resumed a waiter), but the timer had fired",
                                   rec.id, *rec.owner, at(rec.set_at)));
      }
    }
    if (sibling) {
      if (TimerRec* target = pick_sibling(rec, loop.now().ns())) {
        ctx_.add("callback_cancels");
        cancel_timer(*target, "a sibling's callback");
      }
    }
    if (!rearm) return std::nullopt;
    if (delay < 0) {
      refuse_negative(loop, delay, *rec.owner, "callback_rearms_refused");
      return std::nullopt;
    }
    return delay;
  }

  // A cancel: set() on a live timer's Event. A timer not due yet cannot have been
  // resumed by its timeout (never early), so set() must win.
  void cancel_timer(TimerRec& rec, const char* by) {
    rec.set = true;
    rec.by = by;
    rec.set_at = loop_now();
    rec.set_won = rec.event.set(1);
    if (!rec.set_won && rec.set_at < rec.deadline) {
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("timer #{} of {}: set() by {} at {} returned false (TOO_LATE), "
                                 "but its timeout was not due until {}",
                                 rec.id, *rec.owner, by, at(rec.set_at), at(rec.deadline)));
    }
  }

  // with_timeout must refuse a negative delay (std::invalid_argument).
  // `counter` counts the refusals (a scheduler's own, or a callback's re-arm).
  void refuse_negative(Loop& loop, std::int64_t d, const std::string& who, const char* counter) {
    Event<int, Loop> unused(loop);
    try {
      (void)with_timeout(loop, unused, Duration::nanoseconds(d));
    } catch (const std::invalid_argument&) {
      ctx_.add(counter);
      return;
    }
    ctx_.violation(Oracle::kWrongResult,
                   fmt::format("{}: with_timeout with a negative delay ({}) was accepted; it "
                               "must throw std::invalid_argument",
                               who, fmt_ns(d)));
  }

  // A live timer other than `self`: one due by now_ns among kSiblingTries random
  // picks, else the first one picked; null if there is none.
  TimerRec* pick_sibling(const TimerRec& self, std::int64_t now_ns) {
    TimerRec* any = nullptr;
    for (int i = 0; i < kSiblingTries && !live_.empty(); ++i) {
      TimerRec* t =
          live_[std::uniform_int_distribution<std::size_t>(0, live_.size() - 1)(script_rng_)];
      if (t == &self || t->set) continue;
      if (t->deadline <= now_ns) return t;
      if (any == nullptr) any = t;
    }
    return any;
  }

  void add_live(TimerRec& rec) {
    rec.live_at = live_.size();
    live_.push_back(&rec);
  }
  void remove_live(TimerRec& rec) {
    TimerRec* last = live_.back();
    last->live_at = rec.live_at;
    live_[rec.live_at] = last;
    live_.pop_back();
  }
  TimerRec* find_live(std::uint64_t id) {
    for (TimerRec* t : live_) {
      if (t->id == id) return t;
    }
    return nullptr;
  }
  std::int64_t loop_now() const { return clock_.now().ns(); }

  Task<void> body(Loop& loop, const Actor& a, ActorState& st, std::mt19937_64 rng,
                  std::uint64_t quota) {
    ActorLog& log = ctx_.log_of(st);
    std::uint64_t n = 0;  // this coroutine's operations so far
    while (ctx_.take_op(quota)) {
      const std::int64_t delay = a.delay_us->sample(rng) * 1000;
      const std::int64_t timeout = a.timeout_us->sample(rng) * 1000;
      const std::int64_t t0 = loop.now().ns();
      // Every other operation awaits an Event that another thread sets delay_us
      // later (a response cancelling its timeout), the rest a sleep on the loop.
      // While kMaxEventOps setters are still in flight (threads starved on a
      // loaded machine finish late), an Event operation becomes a sleep: memory
      // stays bounded however far the setters fall behind.
      bool on_event = (++n % 2) == 0;
      if (on_event) {
        reap_event_ops();
        if (event_ops_.size() >= kMaxEventOps) {
          on_event = false;
          ctx_.add("event_ops_deferred");
        }
      }
      st.set(Phase::kParked);
      bool done = false;
      std::int64_t available_from = t0 + delay;  // the sleep is due then
      if (on_event) {
        EventOp& op = event_ops_.emplace_back(loop);
        op.setter = spawn_thread<P>([this, &op, us = delay / 1000] {
          case_sleep_us(ctx_, us);
          op.event.set(1);
          op.set_at.store(clock_now(), std::memory_order::release);  // pairs with the load
        });
        auto r = co_await with_timeout(loop, op.event, Duration::nanoseconds(timeout));
        done = r.completed();
        const std::int64_t set_at = op.set_at.load(std::memory_order::acquire);
        available_from = set_at == kNotSet ? Availability::kOpen : set_at;
        op.awaited = true;
      } else {
        auto r = co_await with_timeout(loop, sleep_for(loop, Duration::nanoseconds(delay)),
                                       Duration::nanoseconds(timeout));
        done = r.completed();
        // The sleep is certainly due once the tick after its deadline began: a
        // ticked queue fires a tick's entries in one pass in no order, so a timeout
        // in the same tick may fairly win.
        available_from += Loop::Queue::kExact ? 0 : s_.engine.tick_us * 1000;
      }
      const std::int64_t back = loop.now().ns();
      st.set(Phase::kWorking);
      st.ops.fetch_add(1, std::memory_order::relaxed);
      const std::int64_t own = t0 + (done ? delay : timeout);
      (done ? completed_ : timed_out_) += 1;
      if (!done && available_from != Availability::kOpen) {
        // Instants go to the case's frame (under simulation the loop's clock is
        // virtual), as every sentence prints them.
        judge_undeserved(
            ctx_, {frame(t0), frame(t0 + timeout), frame(back), st.name, "with_timeout"},
            {frame(available_from), Availability::kOpen},
            on_event ? "the awaited event (set by another thread)" : "the awaited sleep");
      }
      log.sample(Latency::kFireLateness, back - own);
      if (back < own) {
        ctx_.violation(Oracle::kEarlyFire, fmt::format("{}: the {} (due {}) won at {}, {} early",
                                                       st.name, done ? "sleep" : "timeout", at(own),
                                                       at(back), fmt_ns(own - back)));
      }
    }
    st.set(Phase::kDone);
  }

  // frame: an instant of the loop's clock in ctx_'s steady frame.
  std::int64_t frame(std::int64_t loop_ns) const {
    if constexpr (kSim) return sim_case_ns(ctx_, loop_ns);
    return loop_ns;
  }
  // at: an instant of the loop's clock in ctx_'s timeline ("t=1.234ms").
  std::string at(std::int64_t loop_ns) const { return ctx_.at(frame(loop_ns)); }

  // An operation on an Event: the Event, the thread that sets it and when its set()
  // returned (loop clock; kNotSet until then).
  static constexpr std::int64_t kNotSet = INT64_MIN;
  // At most this many Event operations in flight (each holds a setter thread:
  // its stack's touched pages, ~16 KiB): 64 is ~1 MiB, below memory_test's slack,
  // and far above what a coroutine_task count needs when setters keep up.
  static constexpr std::size_t kMaxEventOps = 64;
  struct EventOp {
    explicit EventOp(Loop& loop) : event(loop) {}
    Event<int, Loop> event;
    ThreadOf<P> setter;
    std::atomic<std::int64_t> set_at{kNotSet};
    bool awaited = false;  // loop thread only: the coroutine has read set_at
  };
  std::int64_t clock_now() const { return clock_.now().ns(); }
  // reap_event_ops: joins and drops the oldest operations whose coroutine is done
  // with them and whose setter has set: memory stays O(operations in flight) (at
  // most kMaxEventOps), not O(operations) (tests/e2e/memory_test). Loop thread only.
  void reap_event_ops() {
    while (!event_ops_.empty() && event_ops_.front().awaited &&
           event_ops_.front().set_at.load(std::memory_order::acquire) != kNotSet) {
      event_ops_.front().setter.join();  // it has set: only its return is left
      event_ops_.pop_front();
    }
  }

  CaseContext& ctx_;
  const Scenario& s_;
  typename P::Clock clock_;                      // the loop's clock: Loop keeps a reference to it
  std::uint64_t completed_ = 0, timed_out_ = 0;  // loop thread only
  std::deque<EventOp> event_ops_;                // loop thread only; joined after the loop ran
  // Schedulers' timers, loop thread only (no lock: one thread, or one simulated task).
  std::vector<TimerRec*> live_;
  std::uint64_t next_id_ = 0;
  std::uint64_t timers_ = 0, timers_fired_ = 0, timers_cancelled_ = 0;
  std::uint64_t starved_pass_ = 0;
  std::size_t schedulers_left_ = 0;
  std::int64_t latest_ = INT64_MIN;         // the latest deadline a scheduler armed
  std::int64_t scripts_until_ = INT64_MAX;  // latest_, once every scheduler is done
  std::mt19937_64 script_rng_ = ctx_.rng_for(~std::size_t{0});
};

}  // namespace

void run_coroutine_engine(CaseContext& ctx) {
  const auto strategy = strategy_from_name(ctx.spec().strategy);
  if (!strategy) throw std::invalid_argument("unknown strategy " + ctx.spec().strategy);
  if (!ctx.spec().sim) {
    with_queue_template(*strategy, [&]<template <class, class> class Q>() {
      CoroCase<Q, StressPlatform>(ctx).run();
    });
    return;
  }
  run_in_sim(ctx, sim::kSimEpoch, [&] {
    with_queue_template(
        *strategy, [&]<template <class, class> class Q>() { CoroCase<Q, SimPlatform>(ctx).run(); });
  });
}

}  // namespace tlab::tool::runner
