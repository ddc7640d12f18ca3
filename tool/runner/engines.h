// tlab/tool/runner/engines.h: the engine drivers of the stress runner.
//
// A scenario's roles decide the engine: the engine rows of the subject table
// (subjects/subjects.h, engine_for) say which roles each driver accepts and hold a
// pointer to its run_*_engine function below; scenarios/README.md, "Which engine
// runs", documents the same table:
//
// clang-format off
//   | roles present                                 | engine                                                  | strategy |
//   |-----------------------------------------------|---------------------------------------------------------|----------|
//   | waiter / scheduler / thrower / canceller      | kService: Waiter<P,B> and TimerTasks on TimerService<Q,P> | Q = the case's strategy |
//   | worker_churn (+ scheduler, canceller, thrower) | kExecutor: Executor<P>                                  | per-worker wheels by design; the case's strategy is not used (said in the message) |
//   | mutex_contender                               | kMutex: TimedMutex<P,B> on TimerService<Q,P>             | Q |
//   | wait_group_member / wait_group_waiter         | kWaitGroup: TimedWaitGroup<P> on TimerService<Q,P>       | Q |
//   | pool_client                                   | kPool: Pool<int,P,B> on TimerService<Q,P>                | Q |
//   | coroutine_task                                | kCoroutine: EventLoop<Q,P>, with_timeout(sleep or Event) | Q |
// clang-format on
//
// Any other mix (say mutex_contender with pool_client) is refused with verdict
// error naming the roles: one engine per case keeps every oracle's meaning exact.
//
// Token width (engine.token_bits) selects Waiter<P, B> at run time over the
// instantiated set kSupportedTokenBits; 3 and 4 provoke the RFC's wraparound, 8 and
// 16 are in between, 32 is production. Another width is refused (verdict error):
// instantiating all 30 widths x 5 strategies x 4 engines would cost minutes of
// compile time for no extra behaviour.
//
// Clock (engine.clock): virtual is supported by the kService engine when every
// actor is a scheduler, thrower or canceller: then the whole case runs on ONE
// thread (a seeded round-robin over the actors' next operations, the virtual clock
// advanced by engine.tick_us per step, service.run_due() after each), so a replay
// from the same seed is exact. The virtual clock starts at 2^62 ns (146 years of
// uptime), so that a huge delay crosses INT64_MAX and delay overflow is testable.
// Anything with a blocking actor (waiter, contender, ...) needs real time.
//
// Ground rules: each driver runs inside the case's child process, on its main
// thread; it starts and joins its actor threads, runs the oracles' end-of-case
// analysis, and returns. A driver that finds an engine thread it cannot stop (a
// shutdown that does not return) calls emit_and_exit(): the child reports and exits
// without joining; the process boundary is what makes that safe.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "oracles/availability_ledger.h"
#include "runner/case_context.h"
#include "tlab/queue/timer_queue.h"

namespace tlab::tool::runner {

inline constexpr std::array<int, 5> kSupportedTokenBits{3, 4, 8, 16, 32};

// with_token_bits: calls f.template operator()<B>() with B == bits, for each width
// in kSupportedTokenBits (the one place that maps the runtime width to a template
// argument). Any other width throws std::invalid_argument; stress_runner refuses
// such a scenario before an engine runs.
template <class F>
void with_token_bits(int bits, F&& f) {
  switch (bits) {
    case 3: f.template operator()<3>(); return;
    case 4: f.template operator()<4>(); return;
    case 8: f.template operator()<8>(); return;
    case 16: f.template operator()<16>(); return;
    case 32: f.template operator()<32>(); return;
    default:
      throw std::invalid_argument("token_bits not instantiated: " + std::to_string(bits));
  }
}

// kSiblingTries: how many random live timers an engine's callback script looks at
// for a sibling due by now, before it cancels any live one (the timer_service
// engine's scripts, service_scripts.h, and the executor engine's).
inline constexpr int kSiblingTries = 8;

// The drivers. Each returns normally after its end-of-case analysis.
void run_service_engine(CaseContext& ctx);
// run_service_engine_sim: the kService engine under simulation (ctx.spec().sim);
// run_service_engine calls it for a simulated case.
void run_service_engine_sim(CaseContext& ctx);
void run_executor_engine(CaseContext& ctx);
void run_mutex_engine(CaseContext& ctx);
void run_mutex_engine_sim(CaseContext& ctx);  // ctx.spec().sim: run_mutex_engine calls it
void run_wait_group_engine(CaseContext& ctx);
void run_wait_group_engine_sim(CaseContext& ctx);  // ctx.spec().sim: run_wait_group_engine calls it
void run_pool_engine(CaseContext& ctx);
void run_pool_engine_sim(CaseContext& ctx);  // ctx.spec().sim: run_pool_engine calls it
void run_coroutine_engine(CaseContext& ctx);

// emit_and_exit: sends `ctx`'s result (verdict from its violations, or `forced`)
// to the parent and ends the child at once, without joining. Never returns.
[[noreturn]] void emit_and_exit(CaseContext& ctx, std::optional<Verdict> forced,
                                const std::string& message);

// lost_wakeup_grace_ns: how long past its deadline a parked actor may stay before
// the watchdog calls it a lost wakeup: 500 ms plus the largest fault delay the
// scenario configures (a delayed timer thread is slow, not lost), plus 20 ticks.
std::int64_t lost_wakeup_grace_ns(const Scenario& s);

// undeserved_timeout_grace_ns: how long a timed-out wait's window may overlap one
// interval in which what it waited for was available (oracles/availability_ledger.h)
// before it is an undeserved_timeout: the wake latency allowed (a hand-off
// recipient is counted as holding only once it runs). On real threads
// lost_wakeup_grace_ns: wake latency on a loaded 2-core machine is unbounded in
// practice, and the same bound already decides "lost". Under simulation
// kUndeservedTimeoutGraceSimNs plus the scenario's largest fault delay (a delayed
// thread is slow, not lost).
std::int64_t undeserved_timeout_grace_ns(const CaseContext& ctx);
// kUndeservedTimeoutGraceSimNs: 10 us of virtual time, 500 scheduling points at
// 20 ns. Measured on the clean code (mutex_timeout and pool_checkout_timeout, every
// strategy, 200 seeds each under --sim random and --sim pct: 4000 cases, about 1.1
// million timed-out waits that overlapped an availability interval at all): the
// longest overlap was 1.94 us (random; pct 1.68 us), and overlaps above 1.5 us
// numbered 36 (random) and 2 (pct), so 10 us is five times the worst seen. A lost
// hand-off seeded in wait_list.h overlapped up to 580 us.
inline constexpr std::int64_t kUndeservedTimeoutGraceSimNs = 10'000;

// availability_ledger: the case's undeserved_timeout and late-wake judge over `o` (its grace set
// to undeserved_timeout_grace_ns), on the clock `now` (the case's steady frame),
// printing instants with ctx.at and counting each finding as a violation.
inline AvailabilityLedger availability_ledger(CaseContext& ctx, AvailabilityLedger::Options o,
                                              std::function<std::int64_t()> now) {
  o.grace_ns = undeserved_timeout_grace_ns(ctx);
  return AvailabilityLedger(
      std::move(o), std::move(now), [&ctx](std::int64_t t) { return ctx.at(t); },
      [&ctx](Oracle o, const std::string& s) { ctx.violation(o, s); });
}

// judge_undeserved: one timed-out wait against one availability interval (a driver
// that knows the interval directly: with_timeout's awaited sleep), with the grace
// undeserved_timeout_grace_ns; counts the violation if there is one.
inline void judge_undeserved(CaseContext& ctx, const TimedOutWait& w, const Availability& a,
                             std::string_view resource) {
  const auto s = undeserved(w, a, undeserved_timeout_grace_ns(ctx), resource,
                            [&ctx](std::int64_t t) { return ctx.at(t); });
  if (s) ctx.violation(Oracle::kUndeservedTimeout, *s);
}

// Actor helpers shared by the drivers.
int count_of(const Scenario& s, Role r);
const Actor* first_actor(const Scenario& s, Role r);
// queue_config: the QueueConfig for engine.tick_us (start is set by the owner).
QueueConfig queue_config_of(const Scenario& s);

// RescueHook: an engine may register how to unpark a parked actor whose wakeup was
// lost (so the case ends with a counted lost_wakeup instead of a timeout).
// Called from the monitor thread with the actor's index in ctx.actors().
void set_rescue_hook(std::function<void(std::size_t actor)> hook);

}  // namespace tlab::tool::runner
