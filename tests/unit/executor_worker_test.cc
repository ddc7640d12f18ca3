// Tests for a worker's stop (executor/worker.h, and its sequencing in executor.h's
// retire): work posted to a worker before its stop (the stop window) may schedule
// timers, and the stop must hand every one of them over: fired by a worker that
// remains, or returned by shutdown(). Manual mode: no threads, virtual time.
#include "tlab/executor/worker.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/mutant_platform.h"
#include "tlab/executor.h"

namespace tlab {
namespace {

constexpr Duration kRes = Duration::milliseconds(1);

template <class P>
typename Executor<P>::Config manual_config() {
  typename Executor<P>::Config c;
  c.workers = 2;
  c.resolution = kRes;
  c.wheel_slots = 64;
  c.worker_threads = false;
  c.metronome_thread = false;
  return c;
}

// How the timers of one stop window ended.
struct WindowLedger {
  int scheduled = 0;
  int fired = 0;
  std::size_t returned = 0;  // shutdown()'s count
  std::uint64_t pending_after_shutdown = 0;
};

// Posts a task that schedules `n` timers (half due in 2 ms, half in 50 ms) to
// worker 0, stops it before it ever runs, lets worker 1 run 3 ms, then shuts down.
template <class P>
WindowLedger stop_window(int n) {
  ManualClock clock;
  Executor<P> ex(manual_config<P>(), clock);
  WindowLedger r;
  std::vector<typename Executor<P>::Timer> timers;
  for (int i = 0; i < n; ++i) timers.push_back(Executor<P>::make_timer([&] { ++r.fired; }));
  ex.tick_once();
  EXPECT_TRUE(ex.post(0, [&] {
    for (int i = 0; i < n; ++i) {
      ex.schedule(timers[i], Duration::milliseconds(i % 2 == 0 ? 2 : 50));
      ++r.scheduled;
    }
  }));
  ex.stop_worker(0);  // manual mode: the stop runs inline, and with it the posted task
  for (int i = 0; i < 3; ++i) {
    clock.advance(kRes);
    ex.tick_once();
    ex.run_worker_once(1);
  }
  r.returned = ex.shutdown();
  r.pending_after_shutdown = ex.stats().pending;
  return r;
}

// Every timer scheduled in a stop window fires on the remaining worker or is
// returned by shutdown(): fired + returned == scheduled.
TEST(ExecutorWorkerStop, StopWindowTimersFireOrAreReturned) {
  const WindowLedger r = stop_window<ManualStdPlatform>(10);
  EXPECT_EQ(r.scheduled, 10);
  EXPECT_EQ(r.fired, 5);
  EXPECT_EQ(r.returned, 5u);
  EXPECT_EQ(r.pending_after_shutdown, 0u);
}

// The retire-early mutant strands the window's timers in the stopped worker's
// fresh wheel: none fires, shutdown() returns none, all stay pending.
TEST(ExecutorWorkerStop, RetireEarlyMutantLosesTheWindowsTimers) {
  const WindowLedger r = stop_window<
      testing::MutantPlatform<ManualStdPlatform, Mutant::kExecutorStopRetiresWheelEarly>>(10);
  EXPECT_EQ(r.scheduled, 10);
  EXPECT_EQ(r.fired, 0);
  EXPECT_EQ(r.returned, 0u);
  EXPECT_EQ(r.pending_after_shutdown, 10u);
}

// retire_wheel hands back every entry, live or stale, with its deadline, and leaves
// an empty wheel for the next start.
TEST(ExecutorWorker, RetireWheelReturnsEveryEntryAndLeavesItEmpty) {
  using W = ExecutorWorker<ManualStdPlatform>;
  QueueConfig qc;
  qc.start = Instant::from_ns(0);
  qc.tick = kRes;
  qc.wheel_slots = 8;
  W w(qc);
  for (int i = 0; i < 20; ++i) {
    auto t = std::make_shared<TimerCell<ManualStdPlatform>>([] {});
    const auto armed = t->arm();
    if (i % 4 == 0) t->cancel();  // stale: retire_wheel still returns it
    w.wheel.insert(Instant::from_ns(0) + Duration::milliseconds(1 + i),
                   W::WheelEntry{t, armed.generation});
  }
  std::vector<W::Transit> out;
  w.retire_wheel(qc, out);
  EXPECT_EQ(out.size(), 20u);
  EXPECT_TRUE(w.wheel.empty());
  std::int64_t ms_sum = 0;
  for (const W::Transit& t : out) ms_sum += t.deadline.ns() / 1'000'000;
  EXPECT_EQ(ms_sum, 20 * 21 / 2);  // each deadline exactly once
}

}  // namespace
}  // namespace tlab
