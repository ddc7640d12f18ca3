// tlab/tool/subjects/builtin/peers.h: the four peers (libuv, libevent, asio and
// the java.util.Timer-style heap) as subject-ABI descriptors (tlab/subject.h), so
// that `--subject libuv` runs tlab's scenarios and oracles on them, and `tlab
// compare` measures them.
//
// Each descriptor drives the library the way its users do and promises only what
// the library's documentation promises (each file cites the pages); where the
// ABI needs an answer the library does not give (a cancel result, a pending
// count), the file says whose bookkeeping gives it.
//
// clang-format off
//   | subject         | drive | clock     | promises (TLAB_PROMISE_*)                  | file             |
//   |-----------------|-------|-----------|--------------------------------------------|------------------|
//   | libuv           | LOOP  | MONOTONIC | DELIVERY EXACTLY_ONCE ACCURATE_CANCEL      | peer_libuv.cc    |
//   |                 |       |           | PENDING_COUNT                              |                  |
//   | libevent        | LOOP  | MONOTONIC | DELIVERY EXACTLY_ONCE ACCURATE_CANCEL      | peer_libevent.cc |
//   | asio            | LOOP  | MONOTONIC | DELIVERY EXACTLY_ONCE NEVER_EARLY          | peer_asio.cc     |
//   |                 |       |           | ACCURATE_CANCEL                            |                  |
//   | java_timer_heap | SELF  | MONOTONIC | DELIVERY EXACTLY_ONCE NEVER_EARLY          | peer_heap.cc     |
//   |                 |       |           | ACCURATE_CANCEL FIFO_TIES THREAD_SAFE      |                  |
// clang-format on
//
// Each also has a benchmark hook (subjects/bench_hook.h), which is how `tlab
// compare` measures it: its shape, and for java_timer_heap a driven twin (its
// timer thread not started, polled by the caller).
//
// The subject table's rows (subjects/subjects.cc kPeerSubjects) declare the same
// promises; tests/unit/peer_subjects_test.cc keeps the two in step.
//
// Ground rules: each function returns a descriptor or hook with static storage
// duration (the AbiFactory and BenchFactory shapes of subjects.h; the name is
// ignored) and may be called from any thread.
#pragma once

#include <string_view>

#include "subjects/bench_hook.h"
#include "tlab/subject.h"

namespace tlab::tool::builtin {

const tlab_subject* libuv_subject(std::string_view name);
const tlab_subject* libevent_subject(std::string_view name);
const tlab_subject* asio_subject(std::string_view name);
const tlab_subject* heap_subject(std::string_view name);

const BenchHook* libuv_bench(std::string_view name);
const BenchHook* libevent_bench(std::string_view name);
const BenchHook* asio_bench(std::string_view name);
const BenchHook* heap_bench(std::string_view name);

}  // namespace tlab::tool::builtin
