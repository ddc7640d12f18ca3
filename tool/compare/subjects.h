// tlab/tool/compare/subjects.h: the factories of every compared timer facility.
// They are registered in the subject table (subjects/subjects.h), which is where
// compare finds them.
//
//   make_strategy_subject(s)  one of our queue strategies (strategies.cc): the raw
//                             queue for the single-thread cost workloads (the way
//                             an event loop owns it), TimerService for
//                             the mt workloads and lateness, Waiter + TimerService
//                             for cancel_to_resume
//   make_libuv_subject()      uv_timer_start / uv_timer_stop on a uv_loop_t
//   make_libevent_subject()   evtimer_add / evtimer_del on an event_base
//   make_asio_subject()       asio::steady_timer expires_after / async_wait / cancel
//   make_heap_subject()       std::priority_queue + mutex + condition variable, the
//                             java.util.Timer design of seed 001 (heap_timer.h)
//   make_sharded_service_subject()  ShardedTimerService (sharded_service.cc):
//                             N locked shards, one timer thread
//   make_executor_subject()   seed 003's Executor on its own terms: the local
//                             path on a worker, cross-worker cancel
//                             (executor_subject.cc; `--subject executor`)
//   make_abi_subject(d, name) any facility descriptor of the subject ABI
//                             (tlab/subject.h): a built-in one (subjects/builtin/)
//                             or a user's plugin, under `name` (abi_subject.cc)
//
// Each peer's adapter documents its thread-safety story for the mt workloads.
// Ground rules: factories may be called from the compare thread only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "compare/subject.h"
#include "subjects/bench_hook.h"
#include "tlab/queue/strategy.h"
#include "tlab/subject.h"

namespace tlab::tool::compare {

// Each takes the subject's name (the subject table's CompareFactory shape); the
// strategy factory returns nullptr for a name that is not a strategy, the peers
// ignore it.
std::unique_ptr<Subject> make_strategy_subject(std::string_view strategy);
std::unique_ptr<Subject> make_libuv_subject(std::string_view);
std::unique_ptr<Subject> make_libevent_subject(std::string_view);
std::unique_ptr<Subject> make_asio_subject(std::string_view);
std::unique_ptr<Subject> make_heap_subject(std::string_view);
std::unique_ptr<Subject> make_sharded_service_subject(std::string_view);
std::unique_ptr<Subject> make_executor_subject(std::string_view);
// count_peer_allocations: hands alloc_counter.h's counting allocators to libuv and
// libevent (peer_allocators.cc), so their memory shows in bytes per timer; every
// factory above that can drive them calls it.
void count_peer_allocations();
// make_abi_subject: `d` must be a facility (TLAB_KIND_FACILITY) that passed
// check_descriptor (subjects/plugin.h) and must outlive the subject.
// `hook` (a built-in row's, subjects/bench_hook.h; nullptr for a plugin) says how
// to drive it beyond the generic path; `peer` is how the report counts it.
std::unique_ptr<Subject> make_abi_subject(const tlab_subject& d, std::string display_name,
                                          const BenchHook* hook = nullptr, bool peer = true);

}  // namespace tlab::tool::compare
