// Tests for Executor (executor.h, seed 003) with real worker threads on virtual
// time (label tsan): a cancel racing the fire has exactly one winner, worker churn
// loses no timer (and catches the drop-on-shutdown mutant), plus one real-clock smoke
// test of the metronome thread. The step-by-step contracts are in executor_test.cc.
#include "tlab/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/mutant_platform.h"

namespace tlab {
namespace {

constexpr Duration kRes = Duration::milliseconds(1);  // the metronome's tick

using ThreadedEx = Executor<ManualStdPlatform>;

template <class P = ManualStdPlatform>
typename Executor<P>::Config threaded_config(std::size_t workers) {
  typename Executor<P>::Config c;
  c.workers = workers;
  c.resolution = kRes;
  c.wheel_slots = 64;
  c.worker_threads = true;
  c.metronome_thread = false;
  c.scrub_garbage_threshold = 16;
  return c;
}

struct Tally {
  explicit Tally(std::size_t n) : fired(n), cancelled(n) {}
  std::vector<std::atomic<int>> fired;
  std::vector<std::atomic<int>> cancelled;
};

// Runs two passes of every running worker: posts a marker to each and waits until
// all have run, twice. A marker runs at the start of a worker's run and its poll
// follows, so once the second markers ran, every running worker has polled at or
// after the tick published before the call. Waits on the executor's own promise
// (posted tasks run), not on a clock: a starved worker delays it, never fails it.
template <class P>
void run_every_worker_twice(Executor<P>& ex, std::size_t workers) {
  for (int pass = 0; pass < 2; ++pass) {
    std::atomic<std::size_t> ran{0};
    std::size_t posted = 0;
    for (std::size_t w = 0; w < workers; ++w) {
      // A stopped worker refuses; its timers wait in the merge queue for a tick.
      if (ex.post(w, [&ran] {
            ran.fetch_add(1, std::memory_order::acq_rel);
            ran.notify_one();
          })) {
        ++posted;
      }
    }
    for (std::size_t seen = ran.load(std::memory_order::acquire); seen < posted;
         seen = ran.load(std::memory_order::acquire)) {
      ran.wait(seen, std::memory_order::acquire);
    }
  }
}

// Ticks the metronome until every arming is resolved. Each round is one tick and
// two passes of every worker (run_every_worker_twice), so "no progress" is counted
// in work the workers certainly did, not in how fast this thread spins: once time is
// past every deadline (200 ticks: the longest delay in these tests is 100 ms), a
// round that resolves nothing is a round in which every worker polled and found
// nothing due; 50 such rounds in a row mean a timer is lost. A starved worker
// slows the rounds down and never ends them early.
template <class P>
bool drive_until_resolved(ManualClock& clock, Executor<P>& ex, std::size_t workers,
                          std::uint64_t expected) {
  std::uint64_t last = 0;
  int idle = 0;
  for (int ticks = 0; idle < 50; ++ticks) {
    const auto s = ex.stats();
    const std::uint64_t resolved = s.fired + s.cancelled;
    if (s.scheduled == expected && resolved == expected) return true;
    idle = resolved == last && ticks > 200 ? idle + 1 : 0;
    last = resolved;
    clock.advance(kRes);
    ex.tick_once();
    run_every_worker_twice(ex, workers);
  }
  return false;
}

// Cancellers on other threads race the workers' fires: per timer exactly one of
// {fired, cancel returned true}, and the counts conserve. Both sides win some, in
// every run: time moves only with the scheduler's progress (below), at most 40
// ticks (40 ms) before the cancellers are done, so every 20th timer, due 100 ms out,
// is certainly still pending when a canceller picks it; a pick (uniform over the
// armed timers, whatever their number) lands on one with p >= 1/20, so 40000 picks
// all miss with p <= (19/20)^40000. And each of the last 1000 timers escapes all
// 40000 picks with p > (1 - 1/19001)^40000 > 0.12, those escapes negatively
// associated, so all of them are picked (let alone cancelled) with p < 0.88^1000.
TEST(ExecutorThreads, CancelRacingFireHasExactlyOneWinner) {
  constexpr int kTimers = 20'000;
  constexpr Duration kPastTheRace = Duration::milliseconds(100);  // > 40 ticks
  // The timers and their tally outlive the executor (declared first): a failed
  // ASSERT below returns while workers may still run callbacks, until ~Executor.
  Tally tally(kTimers);
  std::vector<ThreadedEx::Timer> ts;
  ts.reserve(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    ts.push_back(ThreadedEx::make_timer([&tally, i] { tally.fired[i].fetch_add(1); }));
  }
  ManualClock clock;
  ThreadedEx ex(threaded_config(3), clock);  // 3 workers: drive_until_resolved below
  std::atomic<int> armed{0};
  std::thread scheduler([&] {
    for (int i = 0; i < kTimers; ++i) {
      ex.schedule(ts[i], i % 20 == 0 ? kPastTheRace : Duration::milliseconds(i % 20));
      armed.store(i + 1, std::memory_order::release);
    }
  });
  std::vector<std::thread> cancellers;
  for (int c = 0; c < 2; ++c) {
    cancellers.emplace_back([&, c] {
      std::mt19937 rng(c);
      for (int k = 0; k < kTimers; ++k) {
        int limit;
        while ((limit = armed.load(std::memory_order::acquire)) == 0) std::this_thread::yield();
        const int i = static_cast<int>(rng() % static_cast<unsigned>(limit));
        if (ex.cancel(ts[i])) tally.cancelled[i].fetch_add(1);
      }
    });
  }
  // Time moves with the scheduler's progress (one tick per 500 armings), so that
  // cancellers find timers pending whatever the thread interleaving.
  std::thread driver([&] {
    int ticks = 0;
    for (int a = 0; a < kTimers; a = armed.load(std::memory_order::acquire)) {
      if (ticks < a / 500) {
        clock.advance(kRes);
        ex.tick_once();
        ++ticks;
      }
      std::this_thread::yield();
    }
  });
  scheduler.join();
  for (auto& c : cancellers) c.join();
  driver.join();
  ASSERT_TRUE(drive_until_resolved(clock, ex, 3, kTimers));
  EXPECT_EQ(ex.shutdown(), 0u);
  int fired = 0, cancelled = 0;
  for (int i = 0; i < kTimers; ++i) {
    ASSERT_EQ(tally.fired[i].load() + tally.cancelled[i].load(), 1) << "timer " << i;
    fired += tally.fired[i].load();
    cancelled += tally.cancelled[i].load();
  }
  const auto s = ex.stats();
  EXPECT_EQ(s.scheduled, static_cast<std::uint64_t>(kTimers));
  EXPECT_EQ(s.fired, static_cast<std::uint64_t>(fired));
  EXPECT_EQ(s.cancelled, static_cast<std::uint64_t>(cancelled));
  EXPECT_EQ(s.scheduled, s.fired + s.cancelled + s.pending);
  EXPECT_GT(cancelled, 0);
  EXPECT_GT(fired, 0);
}

struct ChurnOutcome {
  int lost = 0;     // neither fired nor cancelled
  int doubled = 0;  // fired twice, or fired after a successful cancel
  std::uint64_t migrated = 0;
  std::size_t abandoned = 0;
};

// Workers stop and restart repeatedly while timers are scheduled (locally through
// worker tasks and remotely) and cancelled from another thread.
template <class P>
ChurnOutcome run_churn(int kTimers) {
  using Ex = Executor<P>;
  constexpr std::size_t kWorkers = 3;
  Tally tally(kTimers);  // outlives the executor, as in CancelRacingFireHasExactlyOneWinner
  std::vector<typename Ex::Timer> ts;
  ts.reserve(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    ts.push_back(Ex::make_timer([&tally, i] { tally.fired[i].fetch_add(1); }));
  }
  ManualClock clock;
  Ex ex(threaded_config<P>(kWorkers), clock);
  std::atomic<int> armed{0};
  std::atomic<bool> done{false};
  std::thread scheduler([&] {
    for (int i = 0; i < kTimers; ++i) {
      // Every fourth timer goes through a worker task (local path) when one accepts.
      const Duration d = Duration::milliseconds(5 + i % 40);
      if (i % 4 != 0 || !ex.post(i % kWorkers, [&ex, &ts, &armed, i, d] {
            ex.schedule(ts[i], d);
            armed.fetch_add(1, std::memory_order::acq_rel);
          })) {
        ex.schedule(ts[i], d);
        armed.fetch_add(1, std::memory_order::acq_rel);
      }
    }
  });
  std::thread canceller([&] {
    std::mt19937 rng(7);
    for (int k = 0; k < kTimers / 2; ++k) {
      const int i = static_cast<int>(rng() % kTimers);
      if (ex.cancel(ts[i])) tally.cancelled[i].fetch_add(1);
    }
  });
  std::thread churn([&] {
    std::mt19937 rng(11);
    // Churn at random during the run, then 20 rounds more, round robin, while
    // timers are certainly pending: time stops when the scheduler is done, and the
    // timers due 41-44 ms out (every tenth) cannot be due within the 40 ticks the
    // driver allows. Each of those escapes the canceller's kTimers / 2 picks with
    // p > 0.6, so one of them escapes with p > 1 - 0.4^(kTimers / 10), and it sits
    // in a worker (only one is stopped at a time, so a submit always finds a running
    // one) or already in the merge queue. The round robin stops every worker: the
    // shipped stop moves it to the merge queue, to be migrated at the next tick;
    // the drop-on-shutdown mutant loses it.
    for (int extra = 0; extra < 20;) {
      const bool after = done.load(std::memory_order::acquire);
      const std::size_t w = after ? static_cast<std::size_t>(extra) % kWorkers : rng() % kWorkers;
      extra += after ? 1 : 0;
      ex.stop_worker(w);
      std::this_thread::yield();
      ex.start_worker(w);
    }
  });
  std::thread driver([&] {  // one tick per 500 armings, as above
    int ticks = 0;
    while (!done.load(std::memory_order::acquire)) {
      if (ticks < armed.load(std::memory_order::acquire) / 500) {
        clock.advance(kRes);
        ex.tick_once();
        ++ticks;
      }
      std::this_thread::yield();
    }
  });
  scheduler.join();
  canceller.join();
  // Tasks posted to a worker that stopped ran during its stop; wait for all arms.
  while (armed.load(std::memory_order::acquire) < kTimers) std::this_thread::yield();
  done.store(true, std::memory_order::release);
  churn.join();
  driver.join();
  drive_until_resolved(clock, ex, kWorkers, static_cast<std::uint64_t>(kTimers));
  ChurnOutcome out;
  out.abandoned = ex.shutdown();
  out.migrated = ex.stats().migrated;
  for (int i = 0; i < kTimers; ++i) {
    const int n = tally.fired[i].load() + tally.cancelled[i].load();
    out.lost += n == 0 ? 1 : 0;
    out.doubled += n > 1 ? 1 : 0;
  }
  return out;
}

// Under churn every timer is resolved exactly once (fired xor cancelled), none is
// left pending, and some were migrated between workers (certain: see run_churn).
TEST(ExecutorThreads, WorkerChurnLosesNoTimer) {
  const ChurnOutcome r = run_churn<ManualStdPlatform>(20'000);
  EXPECT_EQ(r.lost, 0);
  EXPECT_EQ(r.doubled, 0);
  EXPECT_EQ(r.abandoned, 0u);
  EXPECT_GT(r.migrated, 0u);
}

// The same churn run on the drop-on-shutdown mutant loses timers (certain, with the
// 500 timers due 41-44 ms out: see run_churn).
TEST(ExecutorThreads, WorkerChurnCatchesDropOnShutdown) {
  const ChurnOutcome r =
      run_churn<testing::MutantPlatform<ManualStdPlatform, Mutant::kWorkerDropOnShutdown>>(5'000);
  EXPECT_GT(r.lost, 0);
}

// The real metronome thread on the steady clock fires every timer (bounded by a
// generous cap; nothing about timing is asserted).
TEST(ExecutorThreads, RealMetronomeFiresEveryTimer) {
  constexpr int kTimers = 2'000;
  SteadyClock clock;
  Executor<StdPlatform>::Config c;
  c.workers = 2;
  c.resolution = Duration::microseconds(200);
  Executor<StdPlatform> ex(c, clock);
  std::atomic<int> fired{0};
  std::vector<Executor<StdPlatform>::Timer> ts;
  for (int i = 0; i < kTimers; ++i) {
    ts.push_back(Executor<StdPlatform>::make_timer([&] { fired.fetch_add(1); }));
    ex.schedule(ts.back(), Duration::microseconds(i % 2000));
  }
  const auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (fired.load() < kTimers && std::chrono::steady_clock::now() < cap) {
    std::this_thread::yield();
  }
  EXPECT_EQ(fired.load(), kTimers);
  EXPECT_EQ(ex.shutdown(), 0u);
  EXPECT_EQ(ex.stats().fired, static_cast<std::uint64_t>(kTimers));
}

}  // namespace
}  // namespace tlab
