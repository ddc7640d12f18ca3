// tlab/tool/subjects/builtin/peer_heap.cc: the java.util.Timer-style heap
// (heap_timer.h: one priority queue, one mutex, one condition variable,
// one timer thread; seed 001) as a self-driven subject (peers.h).
//
// Driven as a Timer user drives it: create starts the timer thread; schedule is
// HeapTimer::schedule(now + delay) of a task that calls fired(); cancel is
// TimerTask.cancel() (HeapTimer::cancel); destroy is Timer.cancel() plus joining
// the thread (HeapTimer::stop: queued tasks never run).
//
// Promises, from the documentation of the design it copies
// (https://docs.oracle.com/javase/8/docs/api/java/util/Timer.html and
// .../TimerTask.html) and of heap_timer.h:
//   delivery, exactly_once: Timer.schedule(task, delay) "Schedules the specified
//     task for execution after the specified delay"; a one-time task runs once.
//   never_early: "after the specified delay": the thread runs a task only once
//     CLOCK_MONOTONIC has reached its deadline (heap_timer.h's loop).
//   accurate_cancel: TimerTask.cancel() returns "true if this task is scheduled
//     for one-time execution and has not yet run"; "false if the task ... has
//     already run" (a running task counts as run: the thread claims it before
//     running it, heap_timer.h). true is PREVENTED, false TOO_LATE.
//   fifo_ties: heap_timer.h orders equal deadlines by a schedule sequence number
//     (Entry::seq); java.util.Timer itself documents no order among ties, so this
//     promise is HeapTimer's, not Java's.
//   thread_safe: "This class is thread-safe: multiple threads can share a single
//     Timer object without the need for external synchronization" (Timer).
//   NOT pending_count: Timer exposes no count of scheduled tasks (purge() returns
//     only the number of cancelled ones it removed).
//
// Limits: any delay is accepted; now + delay saturates at INT64_MAX ("never");
// a negative delay is due at once.
//
// Benchmark hook (bench_hook.h): `driven` is the same Heap with its timer thread
// not started, whose poll is HeapTimer::run_due(now) on the caller (heap_timer.h's
// driven mode: the thread's code path minus the wait).
//
// Cost: schedule is one heap push under two locks (ours, then HeapTimer's);
// cancel one atomic exchange under ours (the entry stays as a tombstone until it
// comes due, as in Java).
// Ground rules: every call may come from any thread; mu guards the handle table
// and is taken before HeapTimer's lock (never after: a task runs with HeapTimer's
// lock released); fired() is called on the timer thread with mu held.
#include <memory>
#include <mutex>

#include "subjects/builtin/heap_timer.h"
#include "subjects/builtin/peer_support.h"
#include "subjects/builtin/peers.h"

namespace tlab::tool::builtin {
// Named, so a unity batch (tool/CMakeLists.txt) can hold every peer's file.
namespace heap_peer {
namespace {

struct Heap {
  std::mutex mu;
  HandleTable<HeapTimer::TaskPtr> table;  // guarded by mu
  tlab_subject_config config{};           // written by create only
  HeapTimer timer;                        // thread-safe itself
};

template <bool kStartThread>
tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    auto self = std::make_unique<Heap>();
    self->config = *config;
    if (kStartThread) self->timer.start();
    *out = self.release();
    return TLAB_OK;
  });
}

void destroy(void* p) {
  auto* self = static_cast<Heap*>(p);
  self->timer.stop();  // joins; a task blocked on mu gets it (we do not hold it)
  delete self;
}

void run_task(Heap* self, std::uint32_t i, std::uint32_t gen) {
  std::lock_guard<std::mutex> lk(self->mu);
  auto& s = self->table.at(i);
  if (s.gen != gen || s.state != SlotState::kArmed) return;  // cannot happen: claimed once
  self->table.resolve(i, SlotState::kFired);
  s.timer.reset();
  self->config.fired(self->config.host, s.cookie);
}

tlab_status schedule(void* p, std::int64_t now_ns, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  return guarded([&] {
    auto* self = static_cast<Heap*>(p);
    std::lock_guard<std::mutex> lk(self->mu);
    bool fresh = false;
    const std::uint32_t i = self->table.acquire(cookie, &fresh);
    auto& slot = self->table.at(i);
    try {
      // The slot is recorded before the task exists, so a task that runs at once
      // finds it (it waits for mu).
      slot.timer = self->timer.schedule(saturating_add(now_ns, delay_ns),
                                        [self, i, gen = slot.gen] { run_task(self, i, gen); });
    } catch (...) {
      self->table.release_unused(i);
      throw;
    }
    *handle = self->table.handle(i);
    return TLAB_OK;
  });
}

tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  auto* self = static_cast<Heap*>(p);
  std::lock_guard<std::mutex> lk(self->mu);
  std::uint32_t i = 0;
  auto* slot = self->table.find_armed(handle, &i, result);
  if (slot == nullptr) return TLAB_OK;
  // false: the timer thread claimed it first; it is running or about to (its
  // run_task resolves the slot once we release mu).
  const bool prevented = HeapTimer::cancel(slot->timer);
  *result = prevented ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
  if (prevented) {
    self->table.resolve(i, SlotState::kCancelled);
    slot->timer.reset();
  }
  return TLAB_OK;
}

// poll of the driven descriptor: the due tasks, run on the caller.
tlab_status poll_driven(void* p, std::int64_t now_ns) {
  return guarded([&] {
    static_cast<Heap*>(p)->timer.run_due(now_ns);
    return TLAB_OK;
  });
}

constexpr const char* kName = "java_timer_heap";
constexpr const char* kSummary =
    "std::priority_queue + mutex + condition variable + timer thread: java.util.Timer's "
    "design (seed 001), self-driven";
constexpr std::uint64_t kPromises = TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE |
                                    TLAB_PROMISE_NEVER_EARLY | TLAB_PROMISE_ACCURATE_CANCEL |
                                    TLAB_PROMISE_FIFO_TIES | TLAB_PROMISE_THREAD_SAFE;

constexpr SelfDriven kPair =
    self_driven(kName, kSummary, kPromises,
                {&create<true>, &destroy, &schedule, &cancel, nullptr, nullptr}, &create<false>,
                &poll_driven);

SubjectShape shape(void*) {
  return {"std::priority_queue (java.util.Timer, lazy cancel)", 1, "one queue"};
}

constexpr BenchHook kBench{&shape, &kPair.driven, nullptr};

}  // namespace
}  // namespace heap_peer

const tlab_subject* heap_subject(std::string_view) { return &heap_peer::kPair.self; }
const BenchHook* heap_bench(std::string_view) { return &heap_peer::kBench; }

}  // namespace tlab::tool::builtin
