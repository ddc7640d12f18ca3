// tlab/tool/base/stall_clock.h: the clock every real-thread grace of a case is
// measured on: wall time less the time the case's threads spent waiting for a CPU.
//
// Why: a real-thread oracle that decides "lost" after a grace (a waiter parked past
// its deadline, a timer not fired by the drain, a timer thread that does not run a
// probe) cannot tell a lost wakeup from a thread that was runnable and got no CPU.
// On a loaded 2-core CI machine a timer thread at a fifth of a core falls hundreds
// of milliseconds behind, and a wall-clock grace calls the correct code broken
// (expiry_storm lost 338 timers of 3000 on binary_heap with the machine at load 10).
// Making the graces longer only moves the threshold; what separates the two is
// whether the thread could run. So graces are counted on this clock:
//
//   effective(t0, t1) = (t1 - t0) - (S(t1) - S(t0))
//
// where S is the case's cumulative stall: each sampling period adds the largest
// stall, over the watched threads, that the period shows, capped at the period's
// wall length. A thread's stall in a period is what the kernel says it waited for
// a CPU (run_delay: /proc/<pid>/task/<tid>/schedstat, field 2) plus the wait it is
// still in:
//
//   | the thread at the two samples                 | its stall in the period  |
//   |-----------------------------------------------|--------------------------|
//   | runnable at both, no CPU time in between      | the whole period (waits) |
//   | in an uninterruptible kernel wait (state D) at| the whole period (held)  |
//   | both, no CPU time in between                  |                          |
//   | anything else                                 | run_delay's increase, less|
//   |                                               | what was counted above   |
//
// The first row matters: the kernel adds a wait to run_delay only when the wait
// ends (the thread gets a CPU). A thread starved for a second shows no run_delay
// until it runs, and then a jump that one period's cap would cut to 10 ms: on a
// loaded machine (a memory hog at normal priority, tlab at nice 10) the timer
// thread of expiry_storm waited 976 ms of its first second while its run_delay
// stood still, and graces counted that second as time it could run. A thread that
// is runnable at both samples and got no CPU time between them cannot have slept
// in between (sleeping takes a run), so the row never counts a sleep. The second
// row is the machine's I/O and memory pressure: a thread the kernel holds in an
// uninterruptible wait (a page fault reading from disk, direct reclaim writing
// dirty pages back, a write throttled behind another process's fsync) could not
// run its code either, and run_delay never counts that wait. A lost wakeup is a
// futex or condition-variable sleep, which is interruptible (state S), so this
// row never excuses one either.
//
// The watched threads are every thread of this case process and of the processes
// registered with watch_process (an exec subject's). The largest,
// not the responsible thread's: a timer thread blocked on a mutex whose holder is
// starved is late through no fault of its own, and which thread is responsible is
// not known in general. A thread that sleeps past a deadline (the lost wakeup the
// graces exist for) accrues no run_delay, so on an idle machine effective time is
// wall time and a lost wakeup is judged as promptly as before; under load the
// graces stretch by the starvation actually seen, and a correct case passes.
//
//   | machine               | S grows by         | a 500 ms grace ends after |
//   |-----------------------|--------------------|---------------------------|
//   | idle                  | ~0                 | ~500 ms                   |
//   | our threads at 1/3 CPU| ~2/3 of wall time  | ~1.5 s                    |
//   | schedstat unavailable | the sampler's own  | ~500 ms + its oversleep   |
//   |                       | oversleep          |                           |
//
// Without schedstat (a kernel without CONFIG_SCHED_INFO) S is the sampler thread's
// own lateness past each period: a coarser estimate of the same thing.
//
// Cost: one sample every kPeriodNs on the sampler thread: a directory walk and two
// small reads per watched thread (schedstat and stat, ~5 us each; ~100 us a sample
// for ten threads, 1% of a core). effective() is two atomic loads and a binary
// search over the history (O(log kHistory)). Memory: kHistory samples of 16 bytes
// (1 MiB), enough for the longest budget a scenario may set (600 s) at kPeriodNs.
//
// Ground rules: one StallClock per case child, started before the case's actors and
// stopped after them. sample() is called by the sampler thread only; effective()
// and stalled_ns() from any thread. Memory ordering: the sampler writes a history
// entry, then publishes the count with release; readers load the count with
// acquire and read only entries below it, which are never written again.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace tlab::tool {

class StallClock {
 public:
  // 10 ms: a grace is at least 50 ms, so a sample's granularity is a fifth of the
  // shortest grace at worst, and the walk costs well under 1% of a core.
  static constexpr std::int64_t kPeriodNs = 10'000'000;
  static constexpr std::size_t kHistory = 65'536;  // 655 s at kPeriodNs

  StallClock() = default;
  StallClock(const StallClock&) = delete;
  StallClock& operator=(const StallClock&) = delete;
  ~StallClock() { stop(); }

  // StallClock::start: starts the sampler thread (idempotent). Thread safety: the
  // case's main thread.
  void start();
  // StallClock::stop: stops and joins the sampler. Thread safety: as start().
  void stop();
  // StallClock::watch_process: also counts the threads of process `pid` (an exec
  // subject) from the next sample on. Thread safety: any thread.
  void watch_process(pid_t pid);

  // StallClock::effective_ns: how much of the wall interval [t0_ns, t1_ns] (steady
  // clock) the case's threads could run: its length less the stall sampled within
  // it; at least 0. t1_ns is usually now. Thread safety: any thread.
  std::int64_t effective_ns(std::int64_t t0_ns, std::int64_t t1_ns) const;
  // StallClock::overdue_ns: effective_ns(deadline_ns, now_ns), 0 before the deadline.
  std::int64_t overdue_ns(std::int64_t deadline_ns, std::int64_t now_ns) const {
    return now_ns <= deadline_ns ? 0 : effective_ns(deadline_ns, now_ns);
  }
  // StallClock::stalled_ns: S at the last sample.
  std::int64_t stalled_ns() const;
  // StallClock::uses_schedstat: whether the kernel's run_delay is read (else the
  // sampler's oversleep stands in for it).
  bool uses_schedstat() const { return schedstat_.load(std::memory_order::relaxed); }

  // One watched thread as a sample sees it.
  struct ThreadReading {
    std::uint64_t key = 0;          // pid << 32 | tid
    std::int64_t cpu_ns = 0;        // schedstat field 1: time on a CPU
    std::int64_t run_delay_ns = 0;  // schedstat field 2: finished waits for a CPU
    bool runnable = false;          // stat's state is R (running or waiting for a CPU)
    bool held = false;              // stat's state is D (an uninterruptible kernel wait)
  };

  // StallClock::sample: one sampling step at steady instant `now_ns`: reads the
  // watched threads (or takes `oversleep_ns` without schedstat) and records the
  // stall. Thread safety: the sampler thread only.
  void sample(std::int64_t now_ns, std::int64_t oversleep_ns);
  // StallClock::account: records the stall that `threads`, read at `now_ns`, show
  // since the previous readings (the table above). What sample() does once it has
  // read /proc; tests call it directly. Thread safety: as sample().
  void account(std::int64_t now_ns, const std::vector<ThreadReading>& threads);
  // StallClock::record: the stall that grew by `grew_ns` up to steady instant
  // `now_ns` (capped at the time since the previous record; instants must not go
  // back). What sample() does once it has measured; tests call it directly.
  // Thread safety: as sample().
  void record(std::int64_t now_ns, std::int64_t grew_ns);

 private:
  struct Entry {
    std::int64_t wall = 0;   // steady ns of the sample
    std::int64_t stall = 0;  // S at that instant
  };
  // stall_at: S at steady instant t (the last sample at or before t; 0 before the
  // first).
  std::int64_t stall_at(std::int64_t t) const;
  // read_threads: every watched thread; false if this process's schedstat cannot
  // be read.
  bool read_threads(std::vector<ThreadReading>& out);
  // What the previous sample saw of a thread, and how much of its current wait
  // was already counted (the kernel adds it to run_delay only when it ends).
  struct ThreadPast {
    ThreadReading last;
    std::int64_t counted_wait = 0;
  };
  void run();

  std::array<Entry, kHistory> history_{};
  std::atomic<std::size_t> count_{0};                   // release by sample(), acquire by readers
  std::atomic<bool> schedstat_{true};                   // relaxed: a diagnostic
  std::unordered_map<std::uint64_t, ThreadPast> past_;  // sampler only
  std::int64_t last_wall_ = 0;                          // sampler only
  std::mutex pids_mu_;
  std::vector<pid_t> pids_;  // pids_mu_: besides this process
  std::atomic<bool> stop_{false};
  std::thread sampler_;
};

// stall_clock: the case child's one clock (started by the child harness,
// stress_runner.cc). Outside a case child it is never started: effective_ns is
// then plain wall time.
StallClock& stall_clock();

}  // namespace tlab::tool
