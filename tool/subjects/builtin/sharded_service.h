// tlab/tool/subjects/builtin/sharded_service.h: ShardedTimerService
// (core/include/tlab/sharded_timer_service.h) as self-driven subjects of the
// subject ABI (tlab/subject.h), so the generic driver's scheduler, canceller and
// timer_thread roles (scenarios/README.md, "On a subject") run on it, the built-in
// scenario sharded_races (scenarios/sharded_races.json, engine.subject) puts its
// mutants under the kill matrix's scenario layer, and `tlab compare` measures it.
//
// Two rows, two configurations (sharded_service.cc has the table and the reasons):
//   sharded_service             binary_heap, 4 shards, round robin (the scenarios')
//   sharded_service_per_thread  hierarchical_wheel, a shard per hardware thread,
//                               each caller on its own shard (a program's)
//
// Cost: a comparison of names per call. Ground rules: returns descriptors and hooks
// with static storage duration, or nullptr for another name; any thread.
#pragma once

#include <string_view>

#include "subjects/bench_hook.h"
#include "tlab/subject.h"

namespace tlab::tool::builtin {

// sharded_service_abi: the descriptor of the row `name` (either above).
const tlab_subject* sharded_service_abi(std::string_view name);
// sharded_service_bench: its benchmark hook (bench_hook.h): shape, driven.
const BenchHook* sharded_service_bench(std::string_view name);

}  // namespace tlab::tool::builtin
