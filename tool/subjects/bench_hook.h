// tlab/tool/subjects/bench_hook.h: BenchHook, what a built-in subject adds to its
// descriptor (tlab/subject.h) so that `tlab compare` measures it: the
// configuration its instance reports, and the named ways compare may drive the
// subject's one definition where the generic ABI path (compare/abi_subject.cc)
// would measure the wrong thing.
//
// A hook never changes WHAT is measured. The instance is the one `tlab check
// --subject NAME` creates: the same create code, queue, shard count, placement and
// library configuration. A hook changes only which thread makes the calls or runs
// the subject's passes:
//
//   | field     | compare uses it for                               | rows that set it        |
//   |-----------|---------------------------------------------------|-------------------------|
//   | shape     | the instance's configuration (queue, shards,      | every row compare       |
//   |           | placement), read from a live instance: the note,  | measures                |
//   |           | and the test that compare and check run the same  |                         |
//   |           | object (tests/unit/builtin_subject_test.cc)       |                         |
//   | driven    | insert_cancel, insert_expire, churn: a LOOP       | java_timer_heap,        |
//   |           | descriptor of the same subject whose create does  | sharded_service,        |
//   |           | not start the subject's own threads and whose     | sharded_service_per_    |
//   |           | poll runs one pass on the caller                  | thread, executor        |
//   | run_loops | mt_schedule_cancel, mt_churn: loop i runs on the  | executor                |
//   |           | subject's own thread i instead of a thread of     |                         |
//   |           | compare's                                         |                         |
//
// Why `driven`: a self-driven subject fires on its own thread, on another CPU, so in
// the single-thread workloads compare's thread would measure its own yields while
// it waits; driven, the calling thread pays for each pass, as it does for a loop
// subject's poll. Why `run_loops`: the executor's local path (a worker scheduling
// into its own wheel, with no lock) is its design point, and only its own workers
// take it; from compare's threads every schedule would be a submission.
//
// To add a hook: a field here, its use in compare/abi_subject.cc, a row of the table
// above, and the hook itself in the subject's own file under subjects/builtin/.
//
// Cost: none (constant data). Ground rules: hooks are static and immutable; a
// row's BenchFactory (subjects.h) returns one. `driven`'s schedule, cancel and
// destroy are the subject descriptor's own functions (the test checks they are
// the same pointers); only create and poll differ. A driven instance is created,
// called and destroyed on one thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tlab/subject.h"

namespace tlab::tool {

// SubjectShape: what an instance is, as far as a measurement depends on it.
struct SubjectShape {
  std::string queue;       // what holds the pending timers ("binary_heap", "libuv's timer heap")
  std::size_t shards = 1;  // independently locked queues (the executor: its workers)
  std::string placement;   // which of them a new timer goes to
  bool operator==(const SubjectShape&) const = default;
};

// LoopBody: one loop of an mt workload, called again and again on one thread until
// it returns false.
using LoopBody = bool (*)(void* ctx, std::size_t loop);

struct BenchHook {
  // shape(self): the configuration of the instance `self` (of the subject's
  // descriptor or of `driven`).
  SubjectShape (*shape)(void* self) = nullptr;
  // driven: the same subject as a loop-driven descriptor (see above); nullptr: the
  // descriptor itself is measured in the single-thread workloads.
  const tlab_subject* driven = nullptr;
  // run_loops(self, loops, body, ctx): runs body(ctx, i) for i < loops on the
  // instance's own thread i until it returns false, and returns when every loop
  // has. TLAB_EINVAL: the instance has fewer threads than `loops` (nothing ran).
  // nullptr: compare runs the loops on threads of its own.
  tlab_status (*run_loops)(void* self, std::size_t loops, LoopBody body, void* ctx) = nullptr;
};

// BenchFactory: a row's hook (subjects.h), given the row's name; nullptr: the row is
// not measured by compare.
using BenchFactory = const BenchHook* (*)(std::string_view name);

}  // namespace tlab::tool
