// examples/sim/timed_latch/latch_sim.cc: TimedLatch under tlab's deterministic
// simulation, over many seeded schedules. Compiled twice by CMakeLists.txt:
// LATCH_BUGGY=0 (must pass every schedule) and LATCH_BUGGY=1 (the lost notify:
// some schedule must fail, and its seed replays it).
//
// The invariant: once the latch opened before the waiter's deadline, the waiter
// returns before that deadline. Time is virtual and moves only when every task
// waits: the opener runs at once, so a waiter still asleep at its deadline 1 ms
// later was never woken (a lost notify).
#include <memory>

#include "latch.h"
#include "tlab/platform/sim_explore.h"

#ifndef LATCH_BUGGY
#define LATCH_BUGGY 0
#endif

using Latch = TimedLatch<tlab::SimPlatform, LATCH_BUGGY != 0>;

TLAB_SIM_MAIN([](tlab::sim::Scheduler& s) {
  auto clock = std::make_shared<tlab::SimClock>();
  auto latch = std::make_shared<Latch>(*clock);
  s.spawn("opener", [clock, latch] { latch->open(); });
  s.spawn("waiter", [clock, latch] {
    const tlab::Instant deadline = clock->now() + tlab::Duration::milliseconds(1);
    latch->wait_until(deadline);
    const tlab::Instant back = clock->now();
    const auto at = latch->opened_at();
    tlab::sim::expect(!at || !(*at < deadline) || back < deadline,
                      "the waiter slept to its deadline although the latch opened before it "
                      "(a lost notify)");
  });
})
