// tlab/executor/stats.h: ExecutorStats, the executor's counters as a snapshot, and
// ExecutorCounters, the atomics behind them.
//
// Every timer arming ends in exactly one of four ways, so the counters conserve:
//
//   scheduled == fired + cancelled + abandoned + pending
//
//   | counter         | counts                                                         |
//   |-----------------|----------------------------------------------------------------|
//   | scheduled       | armings of a handle that was not pending                       |
//   | rescheduled     | armings that replaced a pending arming (not a new timer)       |
//   | fired           | try_fire() wins: the callback ran (or is running)              |
//   | cancelled       | cancel() calls that returned true                              |
//   | abandoned       | armings still pending at shutdown(), returned by it            |
//   | pending         | derived: scheduled - fired - cancelled - abandoned             |
//   | stale_skipped   | stale entries discarded (poll, scrub, migration, shutdown)     |
//   | migrated        | live entries the metronome moved off the merge queue           |
//   | callback_errors | exceptions that escaped a callback or a posted task            |
//
//   bump      O(1): one relaxed fetch_add
//   snapshot  O(counters) relaxed loads
//
// Ground rules: any thread bumps; snapshot() is exact only once the executor is
// quiescent (manual mode between calls, or after shutdown() joined its threads).
// Memory ordering: relaxed throughout; the counters order nothing, and the thread
// joins (or the single-threaded driver) are what make a quiescent snapshot exact.
#pragma once

#include <cstdint>

namespace tlab {

// A snapshot of the counters; exact when the executor is quiescent.
struct ExecutorStats {
  std::uint64_t scheduled = 0;
  std::uint64_t rescheduled = 0;
  std::uint64_t fired = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t stale_skipped = 0;
  std::uint64_t migrated = 0;
  std::uint64_t callback_errors = 0;
  std::uint64_t abandoned = 0;
  std::uint64_t pending = 0;
};

template <class P>
struct ExecutorCounters {
  using Counter = typename P::template Atomic<std::uint64_t>;
  Counter scheduled{0}, rescheduled{0}, fired{0}, cancelled{0}, stale_skipped{0}, migrated{0},
      callback_errors{0}, abandoned{0};

  // relaxed: statistics; exact at quiescence (thread joins / single-threaded driver).
  static void bump(Counter& c, std::uint64_t n = 1) noexcept {
    c.fetch_add(n, std::memory_order::relaxed);
  }
  static std::uint64_t read(const Counter& c) noexcept {
    return c.load(std::memory_order::relaxed);  // relaxed: pairs with bump()
  }

  ExecutorStats snapshot() const noexcept {
    ExecutorStats s;
    s.scheduled = read(scheduled);
    s.rescheduled = read(rescheduled);
    s.fired = read(fired);
    s.cancelled = read(cancelled);
    s.stale_skipped = read(stale_skipped);
    s.migrated = read(migrated);
    s.callback_errors = read(callback_errors);
    s.abandoned = read(abandoned);
    const std::uint64_t done = s.fired + s.cancelled + s.abandoned;
    s.pending = s.scheduled > done ? s.scheduled - done : 0;
    return s;
  }

  // Runs f, counting (not propagating) an exception: a throwing callback or task
  // must not take its worker down.
  template <class F>
  void run_guarded(F&& f) {
    try {
      f();
    } catch (...) {
      bump(callback_errors);
    }
  }
};

}  // namespace tlab
