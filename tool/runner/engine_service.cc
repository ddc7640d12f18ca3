// tlab/tool/runner/engine_service.cc: the kService engine (engines.h) on real
// threads (StressPlatform) or, for clock: virtual, on one thread with a manual
// clock (ManualStressPlatform). The case itself is service_case.h, its end
// service_case_end.h; the simulated
// instantiation is engine_service_sim.cc (a translation unit of its own, so the
// two compile in parallel).
#include "runner/service_case_end.h"

namespace tlab::tool::runner {

namespace {

template <class P, unsigned Bits>
void run_on_strategy(CaseContext& ctx) {
  const auto strategy = strategy_from_name(ctx.spec().strategy);
  if (!strategy) throw std::invalid_argument("unknown strategy " + ctx.spec().strategy);
  with_queue_type<TimerTaskPtr<P>, P>(*strategy, [&]<class Q>() {
    ServiceCase<Q, P, Bits> c(ctx);
    c.run();
  });
}

}  // namespace

void run_service_engine(CaseContext& ctx) {
  if (ctx.spec().sim) {
    run_service_engine_sim(ctx);
    return;
  }
  const Scenario& s = ctx.scenario();
  if (s.engine.clock == ClockKind::kVirtual) {
    run_on_strategy<ManualStressPlatform, 32>(ctx);
    return;
  }
  with_token_bits(s.engine.token_bits,
                  [&]<unsigned B>() { run_on_strategy<StressPlatform, B>(ctx); });
}

}  // namespace tlab::tool::runner
