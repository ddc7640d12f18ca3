// tlab/tool/subjects/builtin/executor.h: seed 003's Executor
// (core/include/tlab/executor.h) as a self-driven subject of the subject ABI
// (tlab/subject.h), so that `--subject executor` runs the generic driver's
// scheduler, canceller and timer_thread roles on it, and `tlab compare --subject
// executor` measures this one definition (with its benchmark hook,
// subjects/bench_hook.h), as it measures every other built-in subject.
//
// The executor engine (runner/engine_executor.cc) stays what scenarios with
// worker_churn actors run: it stops and restarts workers, which no ABI call can
// ask for. This subject is the executor as a program uses it: 2 workers that never
// stop, each firing its own wheel, timers armed and cancelled from any thread.
//
// Cost: a comparison of names per call. Ground rules: returns pointers with static
// storage duration, or nullptr for another name; any thread.
#pragma once

#include <string_view>

#include "subjects/bench_hook.h"
#include "tlab/subject.h"

namespace tlab::tool::builtin {

// executor_abi: the descriptor of the subject "executor".
const tlab_subject* executor_abi(std::string_view name);
// executor_bench: its benchmark hook: shape, driven (the calling thread is worker 0
// of a manual executor) and run_loops (loop i runs in tasks on worker i).
const BenchHook* executor_bench(std::string_view name);

}  // namespace tlab::tool::builtin
