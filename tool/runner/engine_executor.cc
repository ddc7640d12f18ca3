// tlab/tool/runner/engine_executor.cc: the kExecutor engine (engines.h): an
// ExecutorCase (executor_case.h, with its scripts and its end) on real threads
// (StressPlatform), or under deterministic simulation (SimPlatform, run_in_sim).
#include "runner/engines.h"
#include "runner/executor_case_end.h"
#include "runner/executor_scripts.h"
#include "runner/sim_run.h"
#include "tlab/platform/sim_platform.h"
#include "tlab/platform/stress_platform.h"

namespace tlab::tool::runner {

void run_executor_engine(CaseContext& ctx) {
  using executor_engine::ExecutorCase;
  if (!ctx.spec().sim) {
    ExecutorCase<StressPlatform>(ctx).run();
    return;
  }
  run_in_sim(ctx, sim::kSimEpoch, [&] { ExecutorCase<SimPlatform>(ctx).run(); });
}

}  // namespace tlab::tool::runner
