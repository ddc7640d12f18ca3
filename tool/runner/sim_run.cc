// tlab/tool/runner/sim_run.cc: sim_run.h.
#include "runner/sim_run.h"

#include <exception>
#include <stdexcept>

#include <fmt/format.h>

#include "tlab/platform/sim_scheduler.h"

namespace tlab::tool::runner {

namespace {
// The epoch of the run in progress (one run per case child, set before it starts).
std::int64_t g_epoch_ns = 0;
}  // namespace

std::int64_t sim_case_ns(const CaseContext& ctx) {
  return sim_case_ns(ctx, sim::Scheduler::now().ns());
}

std::int64_t sim_case_ns(const CaseContext& ctx, std::int64_t virtual_ns) {
  return ctx.start_ns() + (virtual_ns - g_epoch_ns);
}

std::uint64_t sim_max_steps(std::uint64_t operations) {
  // An operation is tens to hundreds of points (locks, atomics, fault points and
  // the timer thread's work for it); the drain and shutdown add a fixed amount.
  return 2'000'000 + operations * 20'000;
}

void sim_sleep_us(std::int64_t us) {
  if (us <= 0) {
    sim::Scheduler::yield_point();
    return;
  }
  int here = 0;  // a private address: nobody wakes it, the deadline does
  sim::Scheduler::block(&here, sim::Scheduler::now() + Duration::microseconds(us));
}

void case_sleep_us(CaseContext& ctx, std::int64_t us) {
  if (sim::Scheduler::in_task()) {
    sim_sleep_us(us);
  } else {
    sleep_us(ctx, us);
  }
}

void run_in_sim(CaseContext& ctx, std::int64_t epoch_ns, const std::function<void()>& body) {
  const SimSpec spec = ctx.spec().sim.value();
  sim::Options o;
  o.seed = ctx.spec().seed;
  o.strategy = spec.strategy == SimStrategy::kPct ? sim::Strategy::kPct : sim::Strategy::kRandom;
  o.pct_depth = spec.pct_depth;
  o.max_steps = sim_max_steps(ctx.spec().operations);
  // PCT draws its change points over the run's expected length.
  o.expected_steps = std::max<std::uint64_t>(1000, ctx.spec().operations * 200);
  o.epoch_ns = epoch_ns;
  g_epoch_ns = epoch_ns;
  // Code takes time: a point (an atomic, a lock, a fault point) costs what one
  // costs on a real CPU, so a burst of operations is spread over virtual time as
  // it is over real time, and timers fall due while the actors still work.
  o.step_ns = kSimStepNs;
  std::exception_ptr thrown;
  sim::Scheduler scheduler(o);
  scheduler.spawn("driver", [&] {
    try {
      body();
    } catch (...) {
      thrown = std::current_exception();
    }
  });
  const sim::Outcome out = scheduler.run();
  ctx.set_counter("sim_steps", out.steps);
  ctx.set_counter("sim_switches", out.switches);
  // 53 bits: exact in every JSON reader (report counters travel as JSON numbers).
  ctx.set_counter("sim_trace_hash", out.trace_hash & ((std::uint64_t{1} << 53) - 1));
  ctx.set_counter("sim_virtual_us", static_cast<std::uint64_t>(out.virtual_ns / 1000));
  switch (out.end) {
    case sim::End::kCompleted:
      break;
    case sim::End::kDeadlock:
      ctx.violation(Oracle::kLostWakeup,
                    fmt::format("simulation deadlock after {} steps at virtual {}: every task is "
                                "blocked with no deadline, so no notify will ever come: {}",
                                out.steps, fmt_ns(out.virtual_ns), out.blocked));
      return;
    case sim::End::kStepLimit:
      throw std::runtime_error(fmt::format(
          "simulation step limit: {} scheduling points at virtual {} without the case ending (a "
          "livelock, or a spin that never lets the awaited task run)",
          o.max_steps, fmt_ns(out.virtual_ns)));
  }
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace tlab::tool::runner
