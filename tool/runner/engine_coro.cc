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
// Oracles: early_fire (the sleep completed before its delay, or the timeout fired
// before its duration), task_exceptions (an
// exception escaped a spawned coroutine), conservation (timer entries left in the
// loop's queue once every coroutine finished: a timer that was never cancelled),
// undeserved_timeout (the timeout won though the awaited sleep was due, or the
// awaited Event's set() had returned, the grace before the timeout's deadline:
// judge_undeserved, engines.h).
#include <atomic>
#include <deque>
#include <string>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

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
      loop.spawn(body(loop, *r.a, *r.st, ctx_.rng_for(r.index), ctx_.share(i, refs.size())));
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
