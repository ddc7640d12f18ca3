// tlab/tool/compare/peer_heap.cc: the java.util.Timer-style heap (heap_timer.h) as
// a compare subject. Single-thread costs drive it with run_due() from the caller;
// the mt workloads, lateness and cancel_to_resume run its timer thread. It is
// thread-safe by design (one mutex), so mt needs nothing extra.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "subjects/builtin/heap_timer.h"
#include "compare/subjects.h"

namespace tlab::tool::compare {
namespace {

using builtin::HeapTimer;

class HeapAdapter {
 public:
  explicit HeapAdapter(std::size_t slots) : tasks_(slots), now_(mono_ns()) {}
  void arm(std::size_t slot, std::int64_t delay_ns) {
    tasks_[slot] = timer_.schedule(now_ + delay_ns, [this] { ++fired_; });
  }
  void disarm(std::size_t slot) {
    if (tasks_[slot]) HeapTimer::cancel(tasks_[slot]);
  }
  std::size_t poll() {
    now_ = mono_ns();
    return timer_.run_due(now_);
  }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() {}

 private:
  HeapTimer timer_;
  std::vector<HeapTimer::TaskPtr> tasks_;
  std::int64_t now_;
  std::uint64_t fired_ = 0;
};

class HeapSubject final : public Subject {
 public:
  std::string name() const override { return "java_timer_heap"; }
  bool is_peer() const override { return true; }
  std::string note() const override {
    return "std::priority_queue + mutex + condition variable + timer thread (java.util.Timer, "
           "seed 001); lazy cancel leaves tombstones; driven by run_due() for single-thread "
           "costs, its own thread otherwise; thread-safe through its one mutex";
  }
  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) return run_cost<HeapAdapter>(w, pending, s);
    HeapTimer timer;
    timer.start();
    const std::int64_t t0 = mono_ns();
    for (std::size_t i = 0; i < pending; ++i)
      timer.schedule(t0 + background_delay(i, pending), [] {});
    const MtOps ops(w);
    std::vector<HeapTimer::TaskPtr> tasks(ops.slots(s.threads));  // slot: its thread's only
    auto arm = [&](std::size_t slot, std::int64_t d) {
      tasks[slot] = timer.schedule(mono_ns() + d, [] {});
    };
    auto disarm = [&](std::size_t slot) { HeapTimer::cancel(tasks[slot]); };
    ops.prearm(s.threads, arm);
    return run_threads(s, [&](std::size_t t, std::uint64_t k) { ops.step(t, k, arm, disarm); });
  }
  Histogram lateness(const CellSettings& s) override {
    Histogram h;  // timer thread only until done == samples
    std::atomic<std::size_t> done{0};
    HeapTimer timer;
    timer.start();
    const std::int64_t first = mono_ns() + kLatenessLeadNs;
    for (std::size_t i = 0; i < s.samples; ++i) {
      const std::int64_t d = first + kLatenessStepNs * static_cast<std::int64_t>(i);
      timer.schedule(d, [&h, &done, d] {
        h.record(mono_ns() - d);
        done.fetch_add(1);  // seq_cst: publishes h
      });
    }
    while (done.load() < s.samples) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return h;
  }
  Histogram cancel_to_resume(const CellSettings& s) override {
    // The blocked thread waits on its own monitor for "timer fired or cancelled",
    // as Java code around a TimerTask does; the canceller cancels the task and
    // notifies the monitor.
    HeapTimer timer;
    timer.start();
    std::mutex m;
    std::condition_variable cv;
    bool woken = false;       // guarded by m
    HeapTimer::TaskPtr task;  // written before `published`, read after it
    PingPong pp;
    Histogram h;
    std::thread blocked([&] {
      for (std::size_t i = 0; i < s.samples; ++i) {
        task = timer.schedule(mono_ns() + 10'000'000'000, [&] {
          std::lock_guard<std::mutex> lk(m);
          woken = true;
          cv.notify_one();
        });
        std::unique_lock<std::mutex> lk(m);
        pp.published.store(i + 1);  // seq_cst: hand-off of `task`
        cv.wait(lk, [&] { return woken; });
        woken = false;
        lk.unlock();
        h.record(mono_ns() - pp.t0.load());
        pp.resumed.store(i + 1);
      }
    });
    for (std::size_t i = 0; i < s.samples; ++i) {
      pp.await_published(i);
      pp.t0.store(mono_ns());
      HeapTimer::cancel(task);
      {
        std::lock_guard<std::mutex> lk(m);
        woken = true;
      }
      cv.notify_one();
      pp.await_resumed(i);
    }
    blocked.join();
    return h;
  }
};

}  // namespace

std::unique_ptr<Subject> make_heap_subject(std::string_view) { return std::make_unique<HeapSubject>(); }

}  // namespace tlab::tool::compare
