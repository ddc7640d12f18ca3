// tlab/tool/runner/engine_sync.cc: the kMutex, kWaitGroup and kPool engines
// (engines.h) on real threads; the cases are sync_cases.h, the simulated ones
// engine_sync_sim.cc.
#include "runner/sync_cases.h"

namespace tlab::tool::runner {

void run_mutex_engine(CaseContext& ctx) {
  if (ctx.spec().sim) {
    run_mutex_engine_sim(ctx);
    return;
  }
  on_strategy<StressPlatform>(ctx, [&]<class Q>() {
    with_token_bits(ctx.scenario().engine.token_bits,
                    [&]<unsigned B>() { mutex_case<Q, StressPlatform, B>(ctx); });
  });
}

void run_wait_group_engine(CaseContext& ctx) {
  if (ctx.spec().sim) {
    run_wait_group_engine_sim(ctx);
    return;
  }
  on_strategy<StressPlatform>(ctx, [&]<class Q>() { wait_group_case<Q, StressPlatform>(ctx); });
}

void run_pool_engine(CaseContext& ctx) {
  if (ctx.spec().sim) {
    run_pool_engine_sim(ctx);
    return;
  }
  on_strategy<StressPlatform>(ctx, [&]<class Q>() {
    with_token_bits(ctx.scenario().engine.token_bits,
                    [&]<unsigned B>() { pool_case<Q, StressPlatform, B>(ctx); });
  });
}

}  // namespace tlab::tool::runner
