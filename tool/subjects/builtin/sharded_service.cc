// tlab/tool/subjects/builtin/sharded_service.cc: see sharded_service.h.
//
// One template (Sharded<Layout>), two rows, each one configuration that `tlab
// check` and `tlab compare` both run:
//
//   | row                        | queue               | shards                 | a new timer goes to          |
//   |----------------------------|---------------------|------------------------|------------------------------|
//   | sharded_service            | binary_heap         | 4                      | the next shard, round robin  |
//   |                            |                     |                        | (schedule_on)                |
//   | sharded_service_per_thread | hierarchical_wheel, | one per hardware       | the calling thread's shard   |
//   |                            | 1 ms tick           | thread, 2 to 256       | (schedule_at), as users call |
//
// sharded_service is the one scenarios name (sharded_races): 4 shards whatever the
// machine, so a seed means the same everywhere, and round robin, not the calling
// thread: the generic driver has 3-5 actor threads, and which of them land on which
// shard is a race, so per-thread shards would make "this cancel crosses shards" or
// "shard 0 is idle" a matter of luck; round robin makes 3 of 4 cancels and 3 of 4
// new timers cross-shard in every run. sharded_service_per_thread is the service as
// a program uses it, and what its scaling was built for: each thread on its own
// shard, so T threads on T shards take T uncontended locks; at least 2 shards so
// cross-shard paths exist on one core, at most 256 because the handle holds the
// shard in 8 bits. Its wheel keeps QueueConfig's 1 ms tick whatever the host's
// tick_ns, so check and compare build the same wheel.
//
// Both run ShardedTimerService<Q, StressPlatform> with its own timer thread:
// StressPlatform, so a case run with --mutant or with fault points reaches the
// shipped code's mutants and faults (under `tlab run` without them, and in compare,
// it behaves as StdPlatform, at a relaxed load per mutant check).
//
//   | ABI call                     | service call                                    |
//   |------------------------------|-------------------------------------------------|
//   | create(config)               | the service, thread started                     |
//   | schedule(now, delay, cookie) | schedule_on(next shard) or schedule_at (the     |
//   |                              | caller's shard), at now + delay, of fired()     |
//   | cancel(handle)               | cancel(id): true PREVENTED, false TOO_LATE      |
//   | destroy()                    | ~ShardedTimerService: shutdown_now(), join      |
//
// Benchmark hook (bench_hook.h): `driven` is the same service with
// start_thread = false, whose poll is run_once() (a pass on the caller, at the
// service's clock: the CLOCK_MONOTONIC the deadlines are on).
//
// Handle: (generation << 32) | (slot index << 8) | shard, so at most 256 shards and
// 2^24 pending timers per shard (more: schedule cancels the entry and fails with
// TLAB_ENOMEM). A stale handle is the queue's generation check, as QueueSubject's.
//
// Promises: DELIVERY, EXACTLY_ONCE, NEVER_EARLY, ACCURATE_CANCEL (cancel() is true
// iff it removed the entry before a pass took it; a taken entry runs), and
// THREAD_SAFE (every call from any thread, no lock of ours), REENTRANT (callbacks
// run with no lock held and may schedule and cancel: sharded_timer_service.h, so
// fired() performs callback scripts on the timer thread; a sibling a pass has
// already taken answers TOO_LATE and runs, as ACCURATE_CANCEL says). Not FIFO_TIES (no
// order across shards), not PENDING_COUNT (taken-but-unrun entries are not
// counted), not VIRTUAL (its own thread on CLOCK_MONOTONIC).
//
// Cost: the service's: one shard lock per schedule and cancel; round robin adds one
// relaxed fetch_add on a counter every caller shares.
#include "subjects/builtin/sharded_service.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "subjects/builtin/peer_support.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/queue/hierarchical_wheel.h"
#include "tlab/sharded_timer_service.h"

namespace tlab::tool::builtin {
// Named, so a unity batch (tool/CMakeLists.txt) can hold it with the other subjects.
namespace sharded_subject {
namespace {

constexpr std::size_t kShardLimit = 256;  // the handle's 8 shard bits
constexpr std::uint32_t kIndexLimit = 1u << 24;

struct HeapRoundRobin {
  template <class T, class P>
  using Queue = BinaryHeapQueue<T, P>;
  static constexpr bool kRoundRobin = true;
  static constexpr const char* kQueue = "binary_heap";
  static constexpr const char* kPlacement = "round robin over the shards (schedule_on)";
  static std::size_t shards() { return 4; }
};

struct WheelPerThread {
  template <class T, class P>
  using Queue = HierarchicalWheelQueue<T, P>;
  static constexpr bool kRoundRobin = false;
  static constexpr const char* kQueue = "hierarchical_wheel, 1 ms tick";
  static constexpr const char* kPlacement = "the calling thread's shard (schedule_at)";
  static std::size_t shards() {
    return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, kShardLimit);
  }
};

template <class L>
struct Sharded {
  using Service = ShardedTimerServiceOn<L::template Queue, StressPlatform>;
  Sharded(const tlab_subject_config& c, bool start_thread)
      : config(c),
        service(ShardedTimerServiceOptions{.shards = L::shards(), .start_thread = start_thread}) {}
  tlab_subject_config config;        // written by create only
  std::atomic<std::size_t> next{0};  // relaxed: only spreads the shards
  Service service;
};

template <class L>
std::uint64_t encode(const typename Sharded<L>::Service::TimerId& id) {
  return (std::uint64_t{id.handle.generation} << 32) | (std::uint64_t{id.handle.index} << 8) |
         id.shard;
}

template <class L>
typename Sharded<L>::Service::TimerId decode(std::uint64_t h) {
  return {static_cast<std::uint32_t>(h & 0xffu),
          {static_cast<std::uint32_t>((h >> 8) & (kIndexLimit - 1)),
           static_cast<std::uint32_t>(h >> 32)}};
}

template <class L, bool kStartThread>
tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    *out = new Sharded<L>(*config, kStartThread);
    return TLAB_OK;
  });
}

template <class L>
void destroy(void* p) {
  delete static_cast<Sharded<L>*>(p);
}

template <class L>
tlab_status schedule(void* p, std::int64_t now_ns, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  return guarded([&] {
    auto* self = static_cast<Sharded<L>*>(p);
    const Instant deadline = Instant::from_ns(saturating_add(now_ns, delay_ns));
    auto fire = [self, cookie] { self->config.fired(self->config.host, cookie); };
    typename Sharded<L>::Service::TimerId id;
    if constexpr (L::kRoundRobin) {
      const std::size_t shard =
          self->next.fetch_add(1, std::memory_order::relaxed) % self->service.shards();
      id = self->service.schedule_on(shard, deadline, std::move(fire));
    } else {
      id = self->service.schedule_at(deadline, std::move(fire));
    }
    if (id.handle.index >= kIndexLimit) {
      self->service.cancel(id);
      return TLAB_ENOMEM;
    }
    *handle = encode<L>(id);
    return TLAB_OK;
  });
}

template <class L>
tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  return guarded([&] {
    const bool prevented = static_cast<Sharded<L>*>(p)->service.cancel(decode<L>(handle));
    *result = prevented ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
    return TLAB_OK;
  });
}

// poll of the driven descriptor: one pass on the caller.
template <class L>
tlab_status poll_driven(void* p, std::int64_t) {
  return guarded([&] {
    static_cast<Sharded<L>*>(p)->service.run_once();
    return TLAB_OK;
  });
}

template <class L>
SubjectShape shape(void* p) {
  return {L::kQueue, static_cast<Sharded<L>*>(p)->service.shards(), L::kPlacement};
}

constexpr std::uint64_t kPromises = TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE |
                                    TLAB_PROMISE_NEVER_EARLY | TLAB_PROMISE_ACCURATE_CANCEL |
                                    TLAB_PROMISE_THREAD_SAFE | TLAB_PROMISE_REENTRANT;

// The row's descriptor and driven twin (self_driven), and its hook, for layout L.
template <class L>
struct Row {
  static constexpr SelfDriven kPair = self_driven(
      L::kName, L::kSummary, kPromises,
      {&create<L, true>, &destroy<L>, &schedule<L>, &cancel<L>, nullptr, nullptr},
      &create<L, false>, &poll_driven<L>);
  static constexpr BenchHook kBench{&shape<L>, &kPair.driven, nullptr};
};

struct RoundRobinRow : HeapRoundRobin {
  static constexpr const char* kName = "sharded_service";
  static constexpr const char* kSummary =
      "ShardedTimerService<binary_heap, P>: 4 locked shards, timers spread round robin, one "
      "timer thread on the earliest head (tokio's sharded timer)";
};
struct PerThreadRow : WheelPerThread {
  static constexpr const char* kName = "sharded_service_per_thread";
  static constexpr const char* kSummary =
      "ShardedTimerService<hierarchical_wheel, P>: a locked shard per hardware thread, each "
      "caller on its own shard, one timer thread on the earliest head";
};

}  // namespace
}  // namespace sharded_subject

const tlab_subject* sharded_service_abi(std::string_view name) {
  using namespace sharded_subject;
  if (name == RoundRobinRow::kName) return &Row<RoundRobinRow>::kPair.self;
  if (name == PerThreadRow::kName) return &Row<PerThreadRow>::kPair.self;
  return nullptr;
}

const BenchHook* sharded_service_bench(std::string_view name) {
  using namespace sharded_subject;
  if (name == RoundRobinRow::kName) return &Row<RoundRobinRow>::kBench;
  if (name == PerThreadRow::kName) return &Row<PerThreadRow>::kBench;
  return nullptr;
}

}  // namespace tlab::tool::builtin
