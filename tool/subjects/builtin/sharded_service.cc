// tlab/tool/subjects/builtin/sharded_service.cc: see sharded_service.h.
//
// The subject is ShardedTimerService<BinaryHeapQueue, StressPlatform> with 4
// shards (whatever the machine, so a seed means the same everywhere) and its own
// timer thread: StressPlatform, so a case run with --mutant or with fault points
// reaches the shipped code's mutants and faults (under `tlab run` without them it
// behaves as StdPlatform). Schedules go to the shards round robin (schedule_on),
// not by the calling thread: the generic driver has 3-5 actor threads, and
// which of them land on which shard is a race, so per-thread shards would make
// "this cancel crosses shards" or "shard 0 is idle" a matter of luck; round robin
// makes 3 of 4 cancels and 3 of 4 new timers cross-shard in every run. The
// per-thread pick (schedule_at) is covered by the unit tests and compare.
//
//   | ABI call                     | service call                                    |
//   |------------------------------|-------------------------------------------------|
//   | create(config)               | the service, thread started                     |
//   | schedule(now, delay, cookie) | schedule_on(next shard, now + delay, fired)      |
//   | cancel(handle)               | cancel(id): true PREVENTED, false TOO_LATE       |
//   | destroy()                    | ~ShardedTimerService: shutdown_now(), join       |
//
// Handle: (generation << 32) | (slot index << 8) | shard, so at most 256 shards and
// 2^24 pending timers per shard (more: schedule cancels the entry and fails with
// TLAB_ENOMEM). A stale handle is the queue's generation check, as QueueSubject's.
//
// Promises: DELIVERY, EXACTLY_ONCE, NEVER_EARLY, ACCURATE_CANCEL (cancel() is true
// iff it removed the entry before a pass took it; a taken entry runs), and
// THREAD_SAFE (every call from any thread, no lock of ours). Not FIFO_TIES (no
// order across shards), not PENDING_COUNT (taken-but-unrun entries are not
// counted), not VIRTUAL (its own thread on CLOCK_MONOTONIC).
//
// Cost: the service's: one shard lock per schedule and cancel.
#include "subjects/builtin/sharded_service.h"

#include <atomic>
#include <memory>

#include "subjects/builtin/peer_support.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/sharded_timer_service.h"

namespace tlab::tool::builtin {
namespace {

using Service = ShardedTimerServiceOn<BinaryHeapQueue, StressPlatform>;

struct Sharded {
  explicit Sharded(const tlab_subject_config& c)
      : config(c), service(ShardedTimerServiceOptions{.shards = kShards}) {}
  static constexpr std::size_t kShards = 4;
  tlab_subject_config config;         // written by create only
  std::atomic<std::size_t> next{0};   // relaxed: only spreads the shards
  Service service;
};

constexpr std::uint32_t kIndexLimit = 1u << 24;

std::uint64_t encode(const Service::TimerId& id) {
  return (std::uint64_t{id.handle.generation} << 32) | (std::uint64_t{id.handle.index} << 8) |
         id.shard;
}

Service::TimerId decode(std::uint64_t h) {
  return {static_cast<std::uint32_t>(h & 0xffu),
          {static_cast<std::uint32_t>((h >> 8) & (kIndexLimit - 1)),
           static_cast<std::uint32_t>(h >> 32)}};
}

tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    *out = new Sharded(*config);
    return TLAB_OK;
  });
}

void destroy(void* p) { delete static_cast<Sharded*>(p); }

tlab_status schedule(void* p, std::int64_t now_ns, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  return guarded([&] {
    auto* self = static_cast<Sharded*>(p);
    const std::size_t shard = self->next.fetch_add(1, std::memory_order::relaxed) % Sharded::kShards;
    const Service::TimerId id = self->service.schedule_on(
        shard, Instant::from_ns(saturating_add(now_ns, delay_ns)),
        [self, cookie] { self->config.fired(self->config.host, cookie); });
    if (id.handle.index >= kIndexLimit) {
      self->service.cancel(id);
      return TLAB_ENOMEM;
    }
    *handle = encode(id);
    return TLAB_OK;
  });
}

tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  return guarded([&] {
    const bool prevented = static_cast<Sharded*>(p)->service.cancel(decode(handle));
    *result = prevented ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
    return TLAB_OK;
  });
}

constexpr tlab_subject kDescriptor =
    facility("sharded_service",
             "ShardedTimerService<binary_heap, P>: one locked queue per shard, one timer thread "
             "on the earliest head (issue 15, tokio's sharded timer)",
             TLAB_DRIVE_SELF,
             TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_NEVER_EARLY |
                 TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_THREAD_SAFE,
             {&create, &destroy, &schedule, &cancel, nullptr, nullptr});

}  // namespace

const tlab_subject* sharded_service_abi(std::string_view) { return &kDescriptor; }

}  // namespace tlab::tool::builtin
