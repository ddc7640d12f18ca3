// tlab/tool/runner/engine_service_sim.cc: the kService engine under deterministic
// simulation (runner.h CaseSpec::sim): ServiceCase<Q, SimPlatform, Bits> run as
// the driver task of a seeded scheduler (sim_run.h). A scenario on the virtual
// clock runs here as it would on threads: simulated time is virtual already, and
// starts at the same 2^62 ns so that huge delays still cross INT64_MAX.
#include "runner/service_case_end.h"

namespace tlab::tool::runner {

void run_service_engine_sim(CaseContext& ctx) {
  const auto strategy = strategy_from_name(ctx.spec().strategy);
  if (!strategy) throw std::invalid_argument("unknown strategy " + ctx.spec().strategy);
  run_in_sim(ctx, kVirtualEpochNs, [&] {
    with_token_bits(ctx.scenario().engine.token_bits, [&]<unsigned B>() {
      with_queue_type<TimerTaskPtr<SimPlatform>, SimPlatform>(*strategy, [&]<class Q>() {
        ServiceCase<Q, SimPlatform, B> c(ctx);
        c.run();
      });
    });
  });
}

}  // namespace tlab::tool::runner
