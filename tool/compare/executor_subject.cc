// tlab/tool/compare/executor_subject.cc: seed 003's Executor (core/include/tlab/
// executor.h) as a compare subject, driven on its own terms: code that runs ON a
// worker schedules into that worker's wheel (the lock-free local path), and cancel
// from any thread is one CAS on the timer's handle.
//
//   | workload           | how (one op)                                               |
//   |--------------------|------------------------------------------------------------|
//   | insert_cancel,     | a manual executor (no threads) with one worker; the        |
//   | insert_expire,     | compare thread stands in as that worker (CurrentWorker), so|
//   | churn              | arm = schedule() on the local path, disarm = cancel(),     |
//   |                    | poll = tick_once() + run_worker_once(0) (which also scrubs |
//   |                    | cancelled entries; housekeeping polls too)                 |
//   | mt_schedule_cancel | s.threads workers (>= 1) with their threads and metronome; |
//   |                    | each worker runs one long task: per op it schedules one of |
//   |                    | its own 64 timers (local path) and cancels it, except every|
//   |                    | 8th op, which cancels the same slot's timer of the next    |
//   |                    | worker instead (a cross-worker cancel: one CAS on a handle |
//   |                    | another worker armed; its own stays armed and the next     |
//   |                    | schedule of it is a re-arm). `pending` timers are spread   |
//   |                    | over the workers, each armed by its own worker             |
//   | mt_churn           | s.threads workers; each re-arms its own 1024 timers on its |
//   |                    | local path (MtOps, subject.h) in tasks of 256 ops that post|
//   |                    | the next, so its wheel fires between tasks                 |
//   | lateness           | the threaded executor; timers scheduled from the compare   |
//   |                    | thread (the submission path), 1 ms resolution              |
//   | cancel_to_resume   | a thread parked on a condition variable until its timer    |
//   |                    | fires or is cancelled; the canceller calls cancel() and    |
//   |                    | notifies (the Executor has no blocking wait of its own, so |
//   |                    | this is the pattern its users write)                       |
//
// Ground rules: compare thread only; the workers' results are handed back through
// std::promise (which orders them before the compare thread reads them).
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>

#include "compare/subjects.h"
#include "tlab/executor.h"
#include "tlab/platform/std_platform.h"

namespace tlab::tool::compare {
namespace {

using P = StdPlatform;
using Ex = Executor<P>;
using Timer = Ex::Timer;

constexpr Duration kResolution = Duration::milliseconds(1);  // Config's default tick

const SteadyClock& steady() {
  static const SteadyClock clock;
  return clock;
}

// run_cost's adapter (subject.h) over a manual one-worker executor whose worker
// the compare thread is.
class LocalAdapter {
 public:
  explicit LocalAdapter(std::size_t slots)
      : ex_(Ex::Config{.workers = 1, .worker_threads = false, .metronome_thread = false},
            steady()),
        mark_(&ex_, 0) {
    timers_.reserve(slots);
    for (std::size_t i = 0; i < slots; ++i) timers_.push_back(Ex::make_timer([this] { ++fired_; }));
  }
  void arm(std::size_t slot, std::int64_t delay_ns) {
    // "Already due" (delay 0) is one tick in the past, as strategies.cc's adapter
    // does: a deadline is rounded UP to a tick, so `now` would wait for the next one.
    if (delay_ns == 0) {
      ex_.schedule_at(timers_[slot], steady().now() - kResolution);
      return;
    }
    ex_.schedule(timers_[slot], Duration::nanoseconds(delay_ns));
  }
  void disarm(std::size_t slot) { ex_.cancel(timers_[slot]); }
  std::size_t poll() {
    ex_.tick_once();
    return ex_.run_worker_once(0);
  }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() { ex_.run_worker_once(0); }

 private:
  std::uint64_t fired_ = 0;  // the compare thread only (it is the worker)
  Ex ex_;
  CurrentWorker<Ex> mark_;  // the compare thread runs worker 0: schedule() goes local
  std::vector<Timer> timers_;
};

// One worker's share of an mt workload.
struct WorkerShare {
  std::uint64_t ops = 0;
  std::int64_t cpu_ns = 0;
};

// arm_background: `pending` timers 5-15 s out, spread over the n workers, each
// armed by its own worker on its local path; returns once all are armed.
std::vector<Timer> arm_background(Ex& ex, std::size_t pending, std::size_t n) {
  std::vector<Timer> background;
  background.reserve(pending);
  for (std::size_t i = 0; i < pending; ++i) background.push_back(Ex::make_timer([] {}));
  std::vector<std::promise<void>> armed(n);
  for (std::size_t w = 0; w < n; ++w) {
    ex.post(w, [&, w] {
      for (std::size_t i = w; i < pending; i += n) {
        ex.schedule(background[i], Duration::nanoseconds(background_delay(i, pending)));
      }
      armed[w].set_value();
    });
  }
  for (auto& a : armed) a.get_future().wait();
  return background;
}

// collect: waits for every worker's share, then shuts the executor down (checking
// its invariants); wall time runs from w0 to the last share.
CostResult collect(Ex& ex, std::vector<std::promise<WorkerShare>>& shares, std::int64_t w0) {
  CostResult r;
  std::int64_t cpu = 0;
  for (auto& sh : shares) {
    const WorkerShare x = sh.get_future().get();
    r.ops += x.ops;
    cpu += x.cpu_ns;
  }
  const std::int64_t w1 = mono_ns();
  r.ns_per_op = static_cast<double>(cpu) / static_cast<double>(r.ops);
  r.wall_ns_per_op = static_cast<double>(w1 - w0) / static_cast<double>(r.ops);
  ex.shutdown();
  ex.check_invariants();
  return r;
}

CostResult mt_schedule_cancel(std::size_t pending, const CellSettings& s) {
  const std::size_t n = s.threads < 1 ? 1 : s.threads;
  constexpr std::size_t kOwn = 64;
  Ex ex(Ex::Config{.workers = n}, steady());
  std::vector<std::vector<Timer>> own(n);
  for (auto& v : own) {
    for (std::size_t i = 0; i < kOwn; ++i) v.push_back(Ex::make_timer([] {}));
  }
  const std::vector<Timer> background = arm_background(ex, pending, n);
  const auto delays = delay_table(kBackgroundStartNs, kBackgroundStartNs + kBackgroundSpanNs);
  const std::int64_t budget = s.cell_ns / static_cast<std::int64_t>(n);
  std::atomic<std::size_t> ready{0};
  std::vector<std::promise<WorkerShare>> shares(n);
  const std::int64_t w0 = mono_ns();
  for (std::size_t w = 0; w < n; ++w) {
    ex.post(w, [&, w] {
      ready.fetch_add(1);  // seq_cst: start barrier
      while (ready.load() < n) std::this_thread::yield();
      std::vector<Timer>& mine = own[w];
      std::vector<Timer>& next = own[(w + 1) % n];
      const std::int64_t c0 = thread_cpu_ns();
      std::int64_t c1 = c0;
      std::uint64_t k = 0;
      do {
        for (int i = 0; i < 64; ++i, ++k) {
          const std::size_t slot = k % kOwn;
          ex.schedule(mine[slot], Duration::nanoseconds(delays[k & 4095]));
          ex.cancel(k % 8 == 7 ? next[slot] : mine[slot]);
        }
        c1 = thread_cpu_ns();
      } while (c1 - c0 < budget);
      shares[w].set_value(WorkerShare{k, c1 - c0});
    });
  }
  return collect(ex, shares, w0);
}

// mt_churn on the executor: worker w re-arms its own kChurnWindow timers on its
// local path (MtOps), kChurnChunk operations per task; each task posts the next
// to its own worker until the worker has used its share of the CPU budget, so
// between two tasks the worker fires what came due (run_once: tasks, then its
// wheel), as a worker does between a connection's events. CPU time counts the
// firing; the first disarm of each slot cancels a timer never armed (a no-op).
constexpr int kChurnChunk = 256;

CostResult mt_churn(std::size_t pending, const CellSettings& s) {
  const std::size_t n = s.threads < 1 ? 1 : s.threads;
  const MtOps ops(Workload::kMtChurn);
  Ex ex(Ex::Config{.workers = n}, steady());
  std::vector<Timer> timers;
  timers.reserve(ops.slots(n));
  for (std::size_t i = 0; i < ops.slots(n); ++i) timers.push_back(Ex::make_timer([] {}));
  const std::vector<Timer> background = arm_background(ex, pending, n);
  const std::int64_t budget = s.cell_ns / static_cast<std::int64_t>(n);
  auto arm = [&](std::size_t slot, std::int64_t d) {
    ex.schedule(timers[slot], Duration::nanoseconds(d));  // on its worker: the local path
  };
  auto disarm = [&](std::size_t slot) { ex.cancel(timers[slot]); };
  struct Run {
    std::uint64_t k = 0;
    std::int64_t c0 = 0;
  };
  std::vector<Run> runs(n);  // runs[w]: worker w's tasks only
  std::vector<std::promise<WorkerShare>> shares(n);
  std::atomic<std::size_t> ready{0};
  std::function<void(std::size_t)> chunk = [&](std::size_t w) {
    Run& r = runs[w];
    if (r.k == 0) {
      ready.fetch_add(1);  // seq_cst: start barrier
      while (ready.load() < n) std::this_thread::yield();
      r.c0 = thread_cpu_ns();
    }
    for (int i = 0; i < kChurnChunk; ++i, ++r.k) ops.step(w, r.k, arm, disarm);
    const std::int64_t c1 = thread_cpu_ns();
    if (c1 - r.c0 < budget) {
      ex.post(w, [&chunk, w] { chunk(w); });
      return;
    }
    shares[w].set_value(WorkerShare{r.k, c1 - r.c0});
  };
  const std::int64_t w0 = mono_ns();
  for (std::size_t w = 0; w < n; ++w) ex.post(w, [&chunk, w] { chunk(w); });
  return collect(ex, shares, w0);
}

class ExecutorSubject final : public Subject {
 public:
  std::string name() const override { return "executor"; }
  bool is_peer() const override { return false; }
  std::string note() const override {
    return "seed 003's Executor: single-thread costs on one worker's local path (the compare "
           "thread is the worker); mt_schedule_cancel with one long task per worker, scheduling "
           "locally and cancelling across workers every 8th op; mt_churn re-arms each "
           "worker's own timers in tasks of 256 ops, its wheel firing between tasks";
  }

  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (w == Workload::kMtScheduleCancel) return mt_schedule_cancel(pending, s);
    if (w == Workload::kMtChurn) return mt_churn(pending, s);
    return run_cost<LocalAdapter>(w, pending, s);
  }

  Histogram lateness(const CellSettings& s) override {
    Ex ex(Ex::Config{}, steady());
    std::vector<std::int64_t> late(s.samples, 0);  // slot i written once, by a worker
    std::atomic<std::size_t> done{0};
    std::vector<Timer> timers;
    const Instant first = steady().now() + Duration::nanoseconds(kLatenessLeadNs);
    for (std::size_t i = 0; i < s.samples; ++i) {
      const Instant d =
          first + Duration::nanoseconds(kLatenessStepNs * static_cast<std::int64_t>(i));
      timers.push_back(Ex::make_timer([&late, &done, d, i] {
        late[i] = mono_ns() - d.ns();
        done.fetch_add(1);  // seq_cst: publishes late[i] to the reader below
      }));
      ex.schedule_at(timers.back(), d);
    }
    while (done.load() < s.samples) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Histogram h;
    for (const std::int64_t v : late) h.record(v);
    return h;
  }

  Histogram cancel_to_resume(const CellSettings& s) override {
    Ex ex(Ex::Config{}, steady());
    std::mutex mu;
    std::condition_variable cv;
    bool woken = false;  // guarded by mu
    Timer timer = Ex::make_timer([&] {
      std::lock_guard lock(mu);
      woken = true;
      cv.notify_one();
    });
    PingPong pp;
    Histogram h;  // blocked thread only until joined
    std::thread blocked([&] {
      for (std::size_t i = 0; i < s.samples; ++i) {
        std::unique_lock lock(mu);
        woken = false;
        ex.schedule(timer, Duration::seconds(10));
        pp.published.store(i + 1);  // seq_cst: the timer is armed
        cv.wait(lock, [&] { return woken; });
        h.record(mono_ns() - pp.t0.load());
        pp.resumed.store(i + 1);
      }
    });
    for (std::size_t i = 0; i < s.samples; ++i) {
      pp.await_published(i);
      pp.t0.store(mono_ns());
      if (ex.cancel(timer)) {
        std::lock_guard lock(mu);
        woken = true;
        cv.notify_one();
      }
      pp.await_resumed(i);
    }
    blocked.join();
    return h;
  }
};

}  // namespace

std::unique_ptr<Subject> make_executor_subject(std::string_view) {
  return std::make_unique<ExecutorSubject>();
}

}  // namespace tlab::tool::compare
