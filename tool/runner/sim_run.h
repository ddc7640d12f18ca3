// tlab/tool/runner/sim_run.h: running one engine case under deterministic
// simulation (runner.h CaseSpec::sim; core's sim_scheduler.h and sim_platform.h).
//
// run_in_sim runs the engine's whole case (setup, actors, drain, end-of-case
// oracles) as the driver task of one sim::Scheduler seeded from the case's seed,
// so the engine's threads (spawn_thread<SimPlatform>) and the service's own timer
// thread are tasks of that run. How the run ended becomes counters and verdicts:
//
//   | sim::End    | result                                                          |
//   |-------------|-----------------------------------------------------------------|
//   | kCompleted  | counters sim_steps, sim_switches, sim_trace_hash (53 bits), sim_virtual_us |
//   | kDeadlock   | lost_wakeup: every task blocked with no deadline (named, with   |
//   |             | what each waits on): a notify that never comes                  |
//   | kStepLimit  | the case throws (verdict error): a livelock, or a run longer     |
//   |             | than the limit (sim_max_steps)                                  |
//
// The counters are part of the result, so `tlab replay` compares the schedule
// (its trace hash) along with every oracle's count: a replay that took another
// path is "not reproduced" even when its verdict agrees.
//
// Cost: one semaphore hand-off per scheduling point that switches tasks
// (sim_scheduler.h); nothing else. Ground rules: called on the case child's main
// thread (not a task); `body` may block only through SimPlatform operations or
// sim_sleep_us, and may hold a std::mutex only around plain code (never across
// a scheduling point). A deadlocked or step-limited run leaves its tasks parked
// forever; the case child reports and exits (emit_and_exit), which is safe.
#pragma once

#include <cstdint>
#include <functional>

#include "runner/case_context.h"

namespace tlab::tool::runner {

// run_in_sim: runs `body` as the driver task of a simulation configured by
// ctx.spec().sim (required) and seeded by ctx.spec().seed; virtual time starts at
// `epoch_ns`. Rethrows what `body` threw.
void run_in_sim(CaseContext& ctx, std::int64_t epoch_ns, const std::function<void()>& body);

// The virtual time one scheduling point takes in tlab's simulated cases
// (sim::Options::step_ns).
inline constexpr std::int64_t kSimStepNs = 20;

// sim_max_steps: the step limit of a case with `operations` operations (a
// generous multiple of the steps an operation takes, so only a livelock hits it).
std::uint64_t sim_max_steps(std::uint64_t operations);

// sim_case_ns: the running simulation's virtual now mapped into `ctx`'s steady
// frame (ctx.start_ns() + virtual time since the epoch), so that what the
// engines compute on the steady clock (deadlines, ctx.at()) reads the same.
// Requires: called from a task of a run_in_sim.
std::int64_t sim_case_ns(const CaseContext& ctx);
// sim_case_ns(ctx, virtual_ns): an instant of the run's virtual clock (SimClock's
// ns) mapped into `ctx`'s steady frame the same way.
std::int64_t sim_case_ns(const CaseContext& ctx, std::int64_t virtual_ns);

// sim_sleep_us: blocks the calling task for `us` microseconds of virtual time (a
// yield point when us <= 0). Requires: called from a task of a running simulation.
void sim_sleep_us(std::int64_t us);

// case_sleep_us: sleeps `us` microseconds of the case's clock (a yield when
// us <= 0): sim_sleep_us on a task of a running simulation, else sleep_us on the
// steady clock (case_context.h).
void case_sleep_us(CaseContext& ctx, std::int64_t us);

}  // namespace tlab::tool::runner
