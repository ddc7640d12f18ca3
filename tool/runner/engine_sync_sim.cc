// tlab/tool/runner/engine_sync_sim.cc: the kMutex, kWaitGroup and kPool engines under
// deterministic simulation (sync_cases.h on SimPlatform, inside run_in_sim).
#include "runner/sync_cases.h"

namespace tlab::tool::runner {

void run_mutex_engine_sim(CaseContext& ctx) {
  run_in_sim(ctx, sim::kSimEpoch, [&] {
    on_strategy<SimPlatform>(ctx, [&]<class Q>() {
      with_token_bits(ctx.scenario().engine.token_bits,
                      [&]<unsigned B>() { mutex_case<Q, SimPlatform, B>(ctx); });
    });
  });
}

void run_wait_group_engine_sim(CaseContext& ctx) {
  run_in_sim(ctx, sim::kSimEpoch, [&] {
    on_strategy<SimPlatform>(ctx, [&]<class Q>() { wait_group_case<Q, SimPlatform>(ctx); });
  });
}

void run_pool_engine_sim(CaseContext& ctx) {
  run_in_sim(ctx, sim::kSimEpoch, [&] {
    on_strategy<SimPlatform>(ctx, [&]<class Q>() {
      with_token_bits(ctx.scenario().engine.token_bits,
                      [&]<unsigned B>() { pool_case<Q, SimPlatform, B>(ctx); });
    });
  });
}

}  // namespace tlab::tool::runner
