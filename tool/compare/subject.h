// tlab/tool/compare/subject.h: one timer facility under comparison, and the
// workloads every facility runs in the same way.
//
// A Subject is a timer facility measured through the subject ABI
// (abi_subject.cc): a built-in subject's one definition, its subject-table row's
// descriptor and benchmark hook (builtin_subject.h: our strategies, the executor,
// the sharded services, and the peers libuv, libevent, asio and a
// java.util.Timer-style heap), or a user's plugin (isolated_subject.h). Every
// subject runs the same seven workloads:
//
//   | workload           | per operation                                          | driven       |
//   |--------------------|--------------------------------------------------------|--------------|
//   | insert_cancel      | arm one timer at a random deadline among `pending`     | one thread,  |
//   |                    | others (5-15 s out), cancel it                         | caller loop  |
//   | insert_expire      | arm one timer that is already due, run one loop pass   | one thread   |
//   |                    | that fires it (`pending` others stay armed)            |              |
//   | churn              | re-arm one of 1024 rotating timers 0-2 ms out          | one thread   |
//   |                    | (cancelling its previous arming if still pending);     |              |
//   |                    | one loop pass every 16 operations fires what is due     |              |
//   | mt_schedule_cancel | schedule + cancel from `threads` (>= 1) threads on one | threads      |
//   |                    | shared facility holding `pending` timers (1 thread is  |              |
//   |                    | the scaling table's base: same locks, no contention)   |              |
//   | mt_churn           | churn from `threads` threads on one shared facility,   | threads; the |
//   |                    | each re-arming its own 1024 rotating timers, while the | facility's   |
//   |                    | facility fires what comes due (MtOps below)            | own firing   |
//   | lateness           | `samples` timers 200 us apart; fire time - deadline    | its own loop |
//   | cancel_to_resume   | a thread blocked on the facility, another cancels its  | two threads  |
//   |                    | timer: cancel call -> blocked thread running           |              |
//
// The three single-thread cost workloads are written once (run_cost below) over a
// small adapter (arm / disarm / poll; abi_subject.cc's, over any descriptor), so
// they do the same work in the same order; the mt workloads are MtOps's on MtLoops
// (below), on compare's threads or, where a subject's hook says so, its own; the
// two latency workloads are abi_subject.cc's, over the ABI's calls.
//
// Measurement: an operation count is not fixed; each cell runs batches until the
// thread's CPU time reaches CellSettings::cell_ns, so ns/op is CPU time per
// operation (robust on a loaded machine; a syscall's kernel time counts, sleeping
// does not) and ops/s is operations per wall second. Bytes per pending timer are
// measured (alloc_counter.h) while insert_cancel builds its `pending` timers.
//
// The two mt workloads' operations are MtOps's, so every subject does the same
// calls in the same order on each thread.
//
// Ground rules: a Subject is used from the compare thread only; workloads start
// and join their own threads.
#pragma once

#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "compare/alloc_counter.h"
#include "base/histogram.h"
#include "tlab/clock.h"

namespace tlab::tool::compare {

enum class Workload : std::uint8_t {
  kInsertCancel,
  kInsertExpire,
  kChurn,
  kMtScheduleCancel,
  kMtChurn,
  kLateness,
  kCancelToResume,
  kCount
};
inline constexpr const char* kWorkloadNames[] = {
    "insert_cancel", "insert_expire", "churn", "mt_schedule_cancel", "mt_churn", "lateness",
    "cancel_to_resume"};
static_assert(std::size(kWorkloadNames) == static_cast<std::size_t>(Workload::kCount));
constexpr const char* name_of(Workload w) { return kWorkloadNames[static_cast<int>(w)]; }
constexpr bool is_cost(Workload w) {
  return w == Workload::kInsertCancel || w == Workload::kInsertExpire || w == Workload::kChurn ||
         w == Workload::kMtScheduleCancel || w == Workload::kMtChurn;
}
// is_mt: a workload run on CellSettings::threads threads (one cell per count).
constexpr bool is_mt(Workload w) {
  return w == Workload::kMtScheduleCancel || w == Workload::kMtChurn;
}

struct CellSettings {
  std::int64_t cell_ns = 40'000'000;  // CPU time per cost cell
  std::size_t samples = 1000;         // lateness / cancel_to_resume samples
  std::size_t threads = 2;            // mt workloads (>= 1)
};

struct CostResult {
  std::uint64_t ops = 0;
  double ns_per_op = 0;         // CPU ns per op (summed over threads for mt)
  double wall_ns_per_op = 0;    // wall ns per op
  double bytes_per_timer = -1;  // insert_cancel only; -1 when not measured
};

class Subject {
 public:
  virtual ~Subject() = default;
  virtual std::string name() const = 0;
  virtual bool is_peer() const = 0;
  // Subject::note: one sentence on how this subject is driven and made thread-safe.
  virtual std::string note() const = 0;
  // Subject::cost: one of the five cost workloads at `pending` armed timers.
  virtual CostResult cost(Workload w, std::size_t pending, const CellSettings& s) = 0;
  // Subject::lateness: fire time minus deadline of s.samples timers (ns).
  virtual Histogram lateness(const CellSettings& s) = 0;
  // Subject::cancel_to_resume: cancel call to blocked thread running (ns).
  virtual Histogram cancel_to_resume(const CellSettings& s) = 0;
};

// ---- shared helpers ----------------------------------------------------------

inline std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
inline std::int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Background timers: deadlines 5 s to 15 s out, far enough that none fires during
// a cell (a cell lasts cell_ns plus its set-up), spread evenly over 10 s like the
// queue benchmark, and armed in increasing order so that even the O(n)-insert
// sorted list builds in O(n).
inline constexpr std::int64_t kBackgroundStartNs = 5'000'000'000;
inline constexpr std::int64_t kBackgroundSpanNs = 10'000'000'000;
inline std::int64_t background_delay(std::size_t i, std::size_t pending) {
  return kBackgroundStartNs +
         static_cast<std::int64_t>(static_cast<long double>(kBackgroundSpanNs) * i / pending);
}
// Rotating timers of churn: 1024 (a connection table's worth), re-armed 0-2 ms out.
inline constexpr std::size_t kChurnWindow = 1024;
inline constexpr std::int64_t kChurnSpanNs = 2'000'000;
inline constexpr std::size_t kChurnPollEvery = 16;
// Lateness: timers this far apart, the first this far out.
inline constexpr std::int64_t kLatenessStepNs = 200'000;
inline constexpr std::int64_t kLatenessLeadNs = 2'000'000;
// cancel_to_resume: the canceller waits this long after the blocked side has
// published its timer, so that it is really asleep when the cancel comes.
inline constexpr std::int64_t kParkSettleNs = 100'000;

// A table of 4096 pseudo-random delays in [lo, hi) (fixed seed: every subject sees
// the same sequence).
inline std::vector<std::int64_t> delay_table(std::int64_t lo, std::int64_t hi) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> d(lo, hi - 1);
  std::vector<std::int64_t> t(4096);
  for (auto& x : t) x = d(rng);
  return t;
}

// run_batches: calls batch() (which does `per_batch` operations) until the calling
// thread has used `cpu_budget_ns` of CPU time (at least once).
template <class F>
CostResult run_batches(std::int64_t cpu_budget_ns, std::uint64_t per_batch, F&& batch) {
  batch();  // warm-up, not counted
  const std::int64_t c0 = thread_cpu_ns();
  const std::int64_t w0 = mono_ns();
  std::uint64_t ops = 0;
  std::int64_t c1 = c0;
  do {
    batch();
    ops += per_batch;
    c1 = thread_cpu_ns();
  } while (c1 - c0 < cpu_budget_ns);
  const std::int64_t w1 = mono_ns();
  CostResult r;
  r.ops = ops;
  r.ns_per_op = static_cast<double>(c1 - c0) / static_cast<double>(ops);
  r.wall_ns_per_op = static_cast<double>(w1 - w0) / static_cast<double>(ops);
  return r;
}

// run_cost: insert_cancel, insert_expire or churn over adapter A:
//   A(std::size_t slots, const Args&...)     slots = pending + kChurnWindow; then
//                                            run_cost's own trailing arguments
//   void arm(std::size_t slot, int64 delay)  slot idle (never armed, fired or disarmed)
//   void disarm(std::size_t slot)            cancel; a no-op if fired or idle
//   std::size_t poll()                       one loop pass: update now, fire due
//   std::uint64_t fired() const              timers fired so far
//   void housekeeping()                      every 256 ops (asio drains aborted waits)
// Bytes per timer are measured for insert_cancel (construction + prefill).
template <class A, class... Args>
CostResult run_cost(Workload w, std::size_t pending, const CellSettings& s, const Args&... args) {
  std::unique_ptr<A> a;
  double bytes = -1;
  {
    AllocWindow window;
    a = std::make_unique<A>(pending + kChurnWindow, args...);
    for (std::size_t i = 0; i < pending; ++i) a->arm(i, background_delay(i, pending));
    if (w == Workload::kInsertCancel && pending > 0) {
      bytes = static_cast<double>(window.live_bytes()) / static_cast<double>(pending);
    }
  }
  CostResult r;
  const std::size_t slot0 = pending;
  if (w == Workload::kInsertCancel) {
    const auto delays = delay_table(kBackgroundStartNs, kBackgroundStartNs + kBackgroundSpanNs);
    std::size_t k = 0;
    r = run_batches(s.cell_ns, 256, [&] {
      for (int i = 0; i < 256; ++i, ++k) {
        a->arm(slot0, delays[k & 4095]);
        a->disarm(slot0);
      }
      a->housekeeping();
    });
  } else if (w == Workload::kInsertExpire) {
    r = run_batches(s.cell_ns, 256, [&] {
      for (int i = 0; i < 256; ++i) {
        const std::uint64_t want = a->fired() + 1;
        a->arm(slot0, 0);
        while (a->fired() < want) a->poll();
      }
      a->housekeeping();
    });
  } else {
    const auto delays = delay_table(0, kChurnSpanNs);
    std::size_t k = 0;
    r = run_batches(s.cell_ns, 256, [&] {
      for (int i = 0; i < 256; ++i, ++k) {
        const std::size_t slot = slot0 + (k % kChurnWindow);
        a->disarm(slot);
        a->arm(slot, delays[k & 4095]);
        if (k % kChurnPollEvery == kChurnPollEvery - 1) a->poll();
      }
      a->housekeeping();
    });
  }
  r.bytes_per_timer = bytes;
  {
    // Teardown counts neither way; destroy outside any window.
    a.reset();
  }
  return r;
}

// MtLoops: the loops of one mt cell: s.threads loops (>= 1), loop t calling
// op(t, k) for k = 0, 1, ... in batches of 64 until its thread has used
// s.cell_ns / threads of CPU time, after a start barrier (every loop waits until
// all have started). step(t) is one batch of loop t on the calling thread; a loop
// runs on one thread, each on its own: compare's (run_threads) or the subject's
// (bench_hook.h, run_loops, through body). ns/op is the CPU time of all loops over
// all operations; wall ns/op is the wall time the caller measured over them.
// Ground rules: step(t) for loop t only from its thread; result() after all
// loops ended (the caller joined them, which orders their writes).
template <class Op>
class MtLoops {
 public:
  MtLoops(const CellSettings& s, Op& op)
      : op_(op),
        n_(s.threads < 1 ? 1 : s.threads),
        budget_(s.cell_ns / static_cast<std::int64_t>(n_)),
        loops_(n_) {}
  std::size_t count() const { return n_; }
  // MtLoops::step: one batch of loop t; false once the loop has used its budget.
  bool step(std::size_t t) {
    Loop& l = loops_[t];
    if (!l.started) {
      l.started = true;
      ready_.fetch_add(1);  // seq_cst: start barrier
      while (ready_.load() < n_) std::this_thread::yield();
      l.c0 = thread_cpu_ns();
    }
    for (int i = 0; i < 64; ++i, ++l.k) op_(t, l.k);
    l.cpu = thread_cpu_ns() - l.c0;
    return l.cpu < budget_;
  }
  // MtLoops::body: step as a LoopBody (bench_hook.h), ctx being the MtLoops.
  static bool body(void* ctx, std::size_t t) { return static_cast<MtLoops*>(ctx)->step(t); }
  CostResult result(std::int64_t wall_ns) const {
    CostResult r;
    std::int64_t cpu_sum = 0;
    for (const Loop& l : loops_) {
      r.ops += l.k;
      cpu_sum += l.cpu;
    }
    r.ns_per_op = static_cast<double>(cpu_sum) / static_cast<double>(r.ops);
    r.wall_ns_per_op = static_cast<double>(wall_ns) / static_cast<double>(r.ops);
    return r;
  }

 private:
  struct Loop {  // its loop's thread only
    bool started = false;
    std::uint64_t k = 0;
    std::int64_t c0 = 0;
    std::int64_t cpu = 0;
  };
  Op& op_;
  std::size_t n_;
  std::int64_t budget_;
  std::vector<Loop> loops_;
  std::atomic<std::size_t> ready_{0};
};

// run_threads: the loops of MtLoops, each on a thread of its own; wall time from
// the common start to the last finish.
template <class Op>
CostResult run_threads(const CellSettings& s, Op&& op) {
  MtLoops<std::remove_reference_t<Op>> loops(s, op);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < loops.count(); ++t) {
    threads.emplace_back([&loops, t] {
      while (loops.step(t)) {
      }
    });
  }
  const std::int64_t w0 = mono_ns();
  for (auto& th : threads) th.join();
  return loops.result(mono_ns() - w0);
}

// MtOps: the operations of the mt workloads, over per-thread slots (thread t owns
// slots [t * slots_per_thread(), (t + 1) * slots_per_thread())), so no two threads
// touch one timer and a subject's slot storage needs no lock:
//   mt_schedule_cancel  the thread's one slot: arm 5-15 s out, then disarm it
//                       (nothing fires: the two calls under contention)
//   mt_churn            slot k % kChurnWindow: disarm its previous arming (a no-op
//                       once it fired), arm it 0-2 ms out; every slot is armed once
//                       before the cell (prearm), and the facility's own thread(s)
//                       fire what comes due meanwhile: a connection table's idle
//                       timers, re-armed from every thread
// A subject with no thread of its own that fires (a libuv loop, a LOOP plugin)
// runs one loop pass when poll_due(k), under the lock that serialises its calls,
// as single-thread churn polls every kChurnPollEvery operations.
// Cost: step is two calls and a table read. Ground rules: immutable after
// construction; step is called by thread t for its own slots only.
class MtOps {
 public:
  explicit MtOps(Workload w)
      : churn_(w == Workload::kMtChurn),
        delays_(churn_ ? delay_table(0, kChurnSpanNs)
                       : delay_table(kBackgroundStartNs, kBackgroundStartNs + kBackgroundSpanNs)) {}
  std::size_t slots_per_thread() const { return churn_ ? kChurnWindow : 1; }
  std::size_t slots(std::size_t threads) const {
    return slots_per_thread() * (threads < 1 ? 1 : threads);
  }
  // MtOps::thread_of: the thread that owns `slot`.
  std::size_t thread_of(std::size_t slot) const { return slot / slots_per_thread(); }
  // MtOps::storage / storage_index: per-slot storage (a handle) laid out so that two
  // threads' slots never share a cache line: each thread's block is followed by
  // kPadSlots unused entries (mt_schedule_cancel's one slot per thread would
  // otherwise put every thread's handle on one line, and measure its ping-pong).
  static constexpr std::size_t kPadSlots = 64 / sizeof(std::uint64_t);
  std::size_t storage(std::size_t threads) const {
    return slots(threads) + kPadSlots * (threads < 1 ? 1 : threads);
  }
  std::size_t storage_index(std::size_t slot) const { return slot + kPadSlots * thread_of(slot); }
  // MtOps::prearm: mt_churn arms every slot once (the compare thread, before the
  // cell's threads start); mt_schedule_cancel arms nothing.
  template <class Arm>
  void prearm(std::size_t threads, Arm&& arm) const {
    if (!churn_) return;
    for (std::size_t i = 0; i < slots(threads); ++i) arm(i, delays_[i & 4095]);
  }
  // MtOps::step: operation k of thread t, as arm(slot, delay_ns) and disarm(slot).
  template <class Arm, class Disarm>
  void step(std::size_t t, std::uint64_t k, Arm&& arm, Disarm&& disarm) const {
    const std::int64_t d = delays_[k & 4095];
    if (!churn_) {
      arm(t, d);
      disarm(t);
      return;
    }
    const std::size_t slot = t * kChurnWindow + k % kChurnWindow;
    disarm(slot);
    arm(slot, d);
  }
  bool poll_due(std::uint64_t k) const {
    return churn_ && k % kChurnPollEvery == kChurnPollEvery - 1;
  }

 private:
  bool churn_;
  std::vector<std::int64_t> delays_;
};

// PingPong: the shape shared by cancel_to_resume and the cv-wake baseline. The
// blocked side publishes round i (publish(i)); the waker sees it, waits
// kParkSettleNs so the blocked side is asleep, records t0 and wakes it; the
// blocked side records (now - t0) once it runs. Both sides are supplied by the
// caller; this holds the hand-off counters and the t0 cell.
struct PingPong {
  std::atomic<std::size_t> published{0};  // rounds the blocked side has armed
  std::atomic<std::size_t> resumed{0};    // rounds the blocked side has finished
  std::atomic<std::int64_t> t0{0};        // the waker's timestamp of round i

  // PingPong::await_published: waker side; spins (yielding) until round i is armed,
  // then lets the blocked side fall asleep.
  void await_published(std::size_t i) {
    while (published.load() < i + 1) std::this_thread::yield();  // seq_cst: hand-off
    const std::int64_t until = mono_ns() + kParkSettleNs;
    while (mono_ns() < until) std::this_thread::yield();
  }
  void await_resumed(std::size_t i) {
    while (resumed.load() < i + 1) std::this_thread::yield();  // seq_cst: hand-off
  }
};

}  // namespace tlab::tool::compare
