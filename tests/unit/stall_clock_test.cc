// Tests for tool/base/stall_clock.h: effective time is wall time less the stall
// recorded within the interval; the stall of one period is capped at its length;
// before any sample (outside a case child) it is wall time; and on this kernel the
// sampler reads the threads' run_delay; a wait still going on counts while it
// lasts, not only once the kernel adds it to run_delay. Stalls are recorded by hand
// (record, account), so nothing here depends on the machine's load.
#include "base/stall_clock.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tlab::tool {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// With nothing sampled, effective time is the wall interval (the CLI's own
// process never starts the sampler).
TEST(StallClockTest, UnsampledClockIsWallTime) {
  StallClock c;
  EXPECT_EQ(c.effective_ns(10 * kMs, 35 * kMs), 25 * kMs);
  EXPECT_EQ(c.overdue_ns(35 * kMs, 10 * kMs), 0);
  EXPECT_EQ(c.stalled_ns(), 0);
}

// A stall recorded inside the interval is subtracted; one before it is not.
TEST(StallClockTest, StallInsideTheIntervalIsSubtracted) {
  StallClock c;
  c.record(10 * kMs, 0);
  c.record(20 * kMs, 8 * kMs);  // 8 of the 10 ms to t=20 ms waited for a CPU
  c.record(30 * kMs, 0);
  c.record(40 * kMs, 5 * kMs);
  EXPECT_EQ(c.stalled_ns(), 13 * kMs);
  EXPECT_EQ(c.effective_ns(10 * kMs, 40 * kMs), 30 * kMs - 13 * kMs);
  EXPECT_EQ(c.effective_ns(20 * kMs, 40 * kMs), 20 * kMs - 5 * kMs);
  EXPECT_EQ(c.effective_ns(30 * kMs, 35 * kMs), 5 * kMs);
  EXPECT_EQ(c.overdue_ns(10 * kMs, 40 * kMs), 17 * kMs);
}

// A period's stall is capped at its length, and effective time is never negative:
// a thread cannot wait longer than the wall time that passed.
TEST(StallClockTest, StallIsCappedAtThePeriod) {
  StallClock c;
  c.record(10 * kMs, 0);
  c.record(20 * kMs, 50 * kMs);
  EXPECT_EQ(c.stalled_ns(), 10 * kMs);
  EXPECT_EQ(c.effective_ns(10 * kMs, 20 * kMs), 0);
  EXPECT_EQ(c.effective_ns(15 * kMs, 20 * kMs), 0);
}

// Where the kernel has schedstat, one sample reads it; a thread of this process
// is always listed, so uses_schedstat() stays true.
TEST(StallClockTest, SamplerReadsRunDelayWhereTheKernelHasIt) {
  StallClock c;
  c.sample(10 * kMs, 0);
  const bool has = std::filesystem::exists("/proc/thread-self/schedstat");
  EXPECT_EQ(c.uses_schedstat(), has);
  EXPECT_LE(c.stalled_ns(), 10 * kMs);
}

// The kernel adds a wait to run_delay only when it ends. A thread runnable at two
// samples that got no CPU time between them is waiting: each such period counts
// whole, and when the wait ends, run_delay's jump counts only its uncounted part.
TEST(StallClockTest, AWaitStillGoingOnCountsWhileItLasts) {
  using R = StallClock::ThreadReading;
  StallClock c;
  c.account(10 * kMs, {R{1, 100, 0, true}});  // first seen: nothing to compare
  c.account(20 * kMs, {R{1, 100, 0, true}});  // runnable, no CPU time: waited 10 ms
  c.account(30 * kMs, {R{1, 100, 0, true}});  // and 10 more
  EXPECT_EQ(c.stalled_ns(), 20 * kMs);
  // It ran at last; the kernel reports the whole 25 ms wait, 20 of which counted.
  c.account(40 * kMs, {R{1, 105, 25 * kMs, false}});
  EXPECT_EQ(c.stalled_ns(), 25 * kMs);
  EXPECT_EQ(c.effective_ns(10 * kMs, 40 * kMs), 5 * kMs);
}

// A sleeping thread (a lost wakeup sleeps) is no stall; neither is a runnable one
// that got CPU time: only its finished waits count.
TEST(StallClockTest, SleepingAndRunningThreadsAreNoStall) {
  using R = StallClock::ThreadReading;
  StallClock c;
  c.account(10 * kMs, {R{1, 100, 0, false}, R{2, 100, 0, true}});
  c.account(20 * kMs, {R{1, 100, 0, false}, R{2, 108, 1 * kMs, true}});
  c.account(30 * kMs, {R{1, 100, 0, false}, R{2, 116, 2 * kMs, true}});
  EXPECT_EQ(c.stalled_ns(), 2 * kMs);
  EXPECT_EQ(c.effective_ns(10 * kMs, 30 * kMs), 18 * kMs);
}

// A thread the kernel holds in an uninterruptible wait (state D: a page fault
// from disk, reclaim, a write behind an fsync) at two samples with no CPU time
// between them could not run: the period counts whole. A sleep (state S, where a
// lost wakeup sleeps) never counts, nor does a D state seen at one sample only,
// nor one with CPU time between the samples.
TEST(StallClockTest, AThreadTheKernelHoldsCountsWhileItIsHeld) {
  using R = StallClock::ThreadReading;
  StallClock c;
  c.account(10 * kMs, {R{1, 100, 0, false, true}});
  c.account(20 * kMs, {R{1, 100, 0, false, true}});  // held for the whole 10 ms
  EXPECT_EQ(c.stalled_ns(), 10 * kMs);
  c.account(30 * kMs, {R{1, 100, 0, false, false}});  // asleep now: not held throughout
  c.account(40 * kMs, {R{1, 100, 0, false, true}});   // held again, but not at 30 ms
  c.account(50 * kMs, {R{1, 107, 0, false, true}});   // held at both, but it ran between
  c.account(60 * kMs, {R{1, 107, 0, false, false}});
  c.account(70 * kMs, {R{1, 107, 0, false, false}});  // a sleep is never a stall
  EXPECT_EQ(c.stalled_ns(), 10 * kMs);
  EXPECT_EQ(c.effective_ns(10 * kMs, 70 * kMs), 50 * kMs);
}

// The largest stall of the watched threads counts, not their sum.
TEST(StallClockTest, TheMostStalledThreadCounts) {
  using R = StallClock::ThreadReading;
  StallClock c;
  c.account(10 * kMs, {R{1, 0, 0, true}, R{2, 0, 0, true}});
  c.account(20 * kMs, {R{1, 0, 0, true}, R{2, 0, 0, true}});
  EXPECT_EQ(c.stalled_ns(), 10 * kMs);
}

}  // namespace
}  // namespace tlab::tool
