// tlab/tool/subjects/builtin/executor.cc: see executor.h.
//
// The instance is Executor<StdPlatform> with Config's defaults: 2 workers, a 1 ms
// metronome tick (the wheels' tick), 512-slot wheels, worker and metronome threads.
// StdPlatform, not StressPlatform: the executor's hot paths (cancel, fire) pass
// fault points, and StressPlatform counts every pass on a counter all threads share;
// its mutants are the executor engine's to catch (scenarios with worker_churn).
//
//   | ABI call                     | executor call                                   |
//   |------------------------------|-------------------------------------------------|
//   | create(config)               | Executor(Config{}), its threads started         |
//   | schedule(now, delay, cookie) | schedule_at(a slot's Timer, now + delay): on a   |
//   |                              | worker of this executor, into that worker's      |
//   |                              | wheel (the local path); elsewhere to a worker's  |
//   |                              | inbox, round robin (the submission path)         |
//   | cancel(handle)               | cancel(timer): true PREVENTED, false TOO_LATE    |
//   | destroy()                    | ~Executor: shutdown() (pending timers never      |
//   |                              | fire), threads joined                            |
//
// Handles: an Executor::Timer is a handle the program keeps and re-arms, and
// cancel() takes the Timer, not one arming of it; the ABI's handle names one
// arming. So each arming takes a slot of a HandleTable (peer_support.h), whose
// slot keeps its Timer (made once, re-armed when the slot is reused) and whose
// generation makes a stale handle answer TOO_LATE or UNKNOWN without touching the
// slot's next arming. The tables are striped (kStripes), each under its own mutex,
// so threads that arm and cancel their own timers take uncontended locks: a worker
// of this executor uses stripe w, any other thread one of the rest by a thread
// number. Handle: (generation << 32) | (slot index << 4) | stripe, so at most 2^28
// slots per stripe (more: TLAB_ENOMEM).
//
// A timer fires on a worker, which calls the slot's callback: it takes the stripe's
// mutex, resolves the slot and calls fired(). A cancel that loses the race (cancel()
// false: the worker's try_fire won) answers TOO_LATE and leaves the slot to that
// callback, so the slot is resolved once.
//
// Promises: DELIVERY (every worker runs its wheel at least every tick while it holds
// timers), EXACTLY_ONCE and ACCURATE_CANCEL (try_fire and cancel CAS one word:
// exactly one wins, and cancel() says which), NEVER_EARLY (deadlines round up to a
// tick, and a worker fires only what is due at the metronome's last tick, which is
// never later than CLOCK_MONOTONIC), THREAD_SAFE, REENTRANT (callbacks run with no
// lock held; the executor takes a callback's schedule on its worker's wheel, due at
// the worker's next poll at the earliest, since a poll collects its due entries
// before it runs any, and a sibling's cancel stops its run unless the sibling's
// try_fire already won, as ACCURATE_CANCEL says). Not FIFO_TIES (no order across
// wheels), not PENDING_COUNT (Stats::pending is exact only when quiescent), not
// VIRTUAL (its own threads on CLOCK_MONOTONIC).
//
// Benchmark hook (bench_hook.h):
//   driven     the same Config with worker_threads and metronome_thread false; the
//              thread that creates it is marked as worker 0 (CurrentWorker), so its
//              schedules take the local path, and poll is tick_once() then
//              run_worker_once(0): the executor on its own terms, one worker
//   run_loops  loop i runs on worker i, in tasks of kChunksPerTask calls that post
//              the next, so the worker runs its wheel between two tasks as it does
//              between a program's tasks; at most one loop per worker (TLAB_EINVAL
//              beyond), so a loop's thread CPU time is its worker's
//
// Cost: schedule is one stripe lock, a slot, and the executor's schedule (local: a
// CAS and a wheel push; submission: a CAS and an inbox lock); cancel one stripe lock
// and a CAS. One Timer (a shared_ptr and a std::function) per slot, kept for reuse.
// Ground rules: every call from any thread; a stripe's table is guarded by its mu;
// fired() is called on a worker with no lock of ours held (the slot is resolved and
// its cookie copied first), so it may call schedule() and cancel() (REENTRANT).
// Lock order: a stripe's mu, then the executor's own locks (never the reverse: the
// executor runs callbacks with none of its locks held).
#include "subjects/builtin/executor.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "subjects/builtin/peer_support.h"
#include "tlab/executor.h"
#include "tlab/platform/std_platform.h"

namespace tlab::tool::builtin {
// Named, so a unity batch (tool/CMakeLists.txt) can hold it with the other subjects.
namespace executor_subject {
namespace {

using Ex = Executor<StdPlatform>;

// 2 workers: Config's default, and compare's default --threads, so each mt loop has
// its own worker.
constexpr std::size_t kWorkers = 2;
// 16 stripes: 4 handle bits; the workers' plus 14 for other threads, enough that a
// few threads of a scenario or a compare cell rarely share one.
constexpr std::size_t kStripeBits = 4;
constexpr std::size_t kStripes = std::size_t{1} << kStripeBits;
static_assert(kWorkers < kStripes);
constexpr std::uint32_t kIndexLimit = 1u << (32 - kStripeBits);
// 4 calls of the loop body per task: compare's body does 64 operations a call, so a
// worker runs its wheel every 256 operations (a connection's burst of events).
constexpr int kChunksPerTask = 4;

Ex::Config config_of(bool threads) {
  Ex::Config c;
  c.workers = kWorkers;
  c.worker_threads = threads;
  c.metronome_thread = threads;
  return c;
}

const SteadyClock& steady() {
  static const SteadyClock clock;
  return clock;
}

struct Exec;

// alignas(64): two workers' stripes never share a cache line.
struct alignas(64) Stripe {
  std::mutex mu;
  HandleTable<Ex::Timer> table;  // guarded by mu
};

struct Exec {
  Exec(const tlab_subject_config& c, bool threads) : config(c), cfg(config_of(threads)) {}
  tlab_subject_config config;           // written by create only
  Ex::Config cfg;                       // what `ex` was built with (shape)
  std::array<Stripe, kStripes> stripes;  // outlive ex: its workers call into them
  std::unique_ptr<Ex> ex;               // destroyed first (~Exec): joins the workers
  std::optional<CurrentWorker<Ex>> mark;  // driven: the creating thread is worker 0
  ~Exec() {
    mark.reset();
    ex.reset();
  }
};

std::size_t stripe_of_caller(const Exec& self) {
  if (CurrentWorker<Ex>::on_worker_of(self.ex.get())) return CurrentWorker<Ex>::worker();
  static std::atomic<std::size_t> next{0};
  // relaxed: only uniqueness matters, and the RMW gives it.
  thread_local const std::size_t number = next.fetch_add(1, std::memory_order::relaxed);
  return kWorkers + number % (kStripes - kWorkers);
}

void on_fire(Exec* self, std::size_t stripe, std::uint32_t index) {
  Stripe& s = self->stripes[stripe];
  std::uint64_t cookie = 0;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    auto& slot = s.table.at(index);
    // The slot is armed: only this firing's callback resolves it (a cancel that lost
    // to it answered TOO_LATE and left it).
    if (slot.state != SlotState::kArmed) return;
    cookie = slot.cookie;
    s.table.resolve(index, SlotState::kFired);
  }
  // No lock held (REENTRANT): fired() may schedule and cancel, on this worker
  // (the local path) and on any stripe, this one included.
  self->config.fired(self->config.host, cookie);
}

template <bool kThreads>
tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    auto self = std::make_unique<Exec>(*config, kThreads);
    self->ex = std::make_unique<Ex>(self->cfg, steady());
    if (!kThreads) self->mark.emplace(self->ex.get(), 0);
    *out = self.release();
    return TLAB_OK;
  });
}

void destroy(void* p) { delete static_cast<Exec*>(p); }

tlab_status schedule(void* p, std::int64_t now_ns, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  return guarded([&] {
    auto* self = static_cast<Exec*>(p);
    const std::size_t stripe = stripe_of_caller(*self);
    Stripe& s = self->stripes[stripe];
    std::lock_guard<std::mutex> lk(s.mu);
    bool fresh = false;
    const std::uint32_t i = s.table.acquire(cookie, &fresh);
    if (i >= kIndexLimit) {
      s.table.release_unused(i);
      return TLAB_ENOMEM;
    }
    auto& slot = s.table.at(i);
    try {
      if (fresh) slot.timer = Ex::make_timer([self, stripe, i] { on_fire(self, stripe, i); });
      self->ex->schedule_at(slot.timer, Instant::from_ns(saturating_add(now_ns, delay_ns)));
    } catch (...) {
      s.table.release_unused(i);
      throw;
    }
    *handle = (s.table.handle(i) & ~std::uint64_t{0xffff'ffff}) |
              (std::uint64_t{i} << kStripeBits) | stripe;
    return TLAB_OK;
  });
}

tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  auto* self = static_cast<Exec*>(p);
  Stripe& s = self->stripes[handle & (kStripes - 1)];
  const std::uint64_t index = (handle & 0xffff'ffffu) >> kStripeBits;
  std::lock_guard<std::mutex> lk(s.mu);
  std::uint32_t i = 0;
  auto* slot = s.table.find_armed((handle & ~std::uint64_t{0xffff'ffff}) | index, &i, result);
  if (slot == nullptr) return TLAB_OK;
  const bool prevented = self->ex->cancel(slot->timer);
  *result = prevented ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
  if (prevented) s.table.resolve(i, SlotState::kCancelled);
  return TLAB_OK;
}

// poll of the driven descriptor: one metronome tick, then worker 0's run.
tlab_status poll_driven(void* p, std::int64_t) {
  return guarded([&] {
    Ex& ex = *static_cast<Exec*>(p)->ex;
    ex.tick_once();
    ex.run_worker_once(0);
    return TLAB_OK;
  });
}

// One run_loops call: its loops' body, and how many loops have finished.
struct Loops {
  Loops(Ex* e, LoopBody b, void* c) : ex(e), body(b), ctx(c) {}
  Ex* ex;
  LoopBody body;
  void* ctx;
  std::mutex mu;
  std::condition_variable cv;
  std::size_t done = 0;  // guarded by mu
};

// run_chunks: loop i's task on worker i: kChunksPerTask calls, then the next task.
void run_chunks(Loops* run, std::size_t i) {
  for (int c = 0; c < kChunksPerTask; ++c) {
    if (!run->body(run->ctx, i)) {
      // Notified under the lock: once run_loops sees the last count it returns and
      // destroys *run, so the worker must not touch run->cv after releasing mu.
      std::lock_guard<std::mutex> lk(run->mu);
      ++run->done;
      run->cv.notify_one();
      return;
    }
  }
  run->ex->post(i, [run, i] { run_chunks(run, i); });
}

tlab_status run_loops(void* p, std::size_t loops, LoopBody body, void* ctx) {
  auto* self = static_cast<Exec*>(p);
  if (loops > self->cfg.workers || !self->cfg.worker_threads) return TLAB_EINVAL;
  Loops run(self->ex.get(), body, ctx);
  std::size_t posted = 0;  // a refused post (a stopped worker; never here) runs nothing
  while (posted < loops && self->ex->post(posted, [r = &run, i = posted] { run_chunks(r, i); })) {
    ++posted;
  }
  std::unique_lock<std::mutex> lk(run.mu);
  run.cv.wait(lk, [&] { return run.done == posted; });  // the tasks hold &run until then
  return posted == loops ? TLAB_OK : TLAB_EFAIL;
}

SubjectShape shape(void* p) {
  return {"per_worker_wheel (one per worker, 1 ms tick)", static_cast<Exec*>(p)->cfg.workers,
          "the calling worker's own wheel; from other threads a worker's inbox, round robin"};
}

constexpr const char* kName = "executor";
constexpr const char* kSummary =
    "seed 003's Executor<P>: 2 workers, each with its own wheel, a metronome; schedule local on "
    "a worker, submitted elsewhere; cancel one CAS from any thread";
constexpr std::uint64_t kPromises = TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE |
                                    TLAB_PROMISE_NEVER_EARLY | TLAB_PROMISE_ACCURATE_CANCEL |
                                    TLAB_PROMISE_THREAD_SAFE | TLAB_PROMISE_REENTRANT;

// The driven twin's CurrentWorker mark is its creating thread's: one thread creates,
// calls and destroys it (self_driven).
constexpr SelfDriven kPair =
    self_driven(kName, kSummary, kPromises,
                {&create<true>, &destroy, &schedule, &cancel, nullptr, nullptr}, &create<false>,
                &poll_driven);
constexpr BenchHook kBench{&shape, &kPair.driven, &run_loops};

}  // namespace
}  // namespace executor_subject

const tlab_subject* executor_abi(std::string_view name) {
  return name == executor_subject::kName ? &executor_subject::kPair.self : nullptr;
}

const BenchHook* executor_bench(std::string_view name) {
  return name == executor_subject::kName ? &executor_subject::kBench : nullptr;
}

}  // namespace tlab::tool::builtin
