// tlab/tool/subjects/builtin/strategies.h: tlab's own queue strategies as subjects
// of the subject ABI (tlab/subject.h), through the same adapter a user's plugin
// uses (tlab/subject_adapter.h, QueueSubject<Q>).
//
// Every strategy of core's StrategyList gets one descriptor, derived from the
// catalogue (never listed here): `--subject binary_heap` runs the generic driver
// over QueueSubject<BinaryHeapQueue<std::uint64_t>>, the exact code path of
// `TLAB_EXPORT_QUEUE_SUBJECT` in a plugin. The subject table's strategy rows
// (subjects/subjects.cc) point their `abi` and `bench` fields here; `tlab compare`
// measures a strategy through this descriptor, the one `--subject binary_heap` checks.
//
// Cost: a scan of the catalogue per call; descriptors are built once, on first
// use. Ground rules: thread-safe (function-local statics), returns pointers to
// static storage.
#pragma once

#include <string_view>

#include "subjects/bench_hook.h"
#include "tlab/subject.h"

namespace tlab::tool::builtin {

// strategy_abi: the descriptor of the strategy named `name` (its kName), or
// nullptr if no strategy has that name. Its name and summary are the strategy's.
const tlab_subject* strategy_abi(std::string_view name);
// strategy_bench: its benchmark hook (bench_hook.h): the shape only, since
// QueueSubject<Q> is loop-driven and the generic path drives it as an owner does.
const BenchHook* strategy_bench(std::string_view name);

}  // namespace tlab::tool::builtin
