// Tests for tool/base/stall_clock.h: effective time is wall time less the stall
// recorded within the interval; the stall of one period is capped at its length;
// before any sample (outside a case child) it is wall time; and on this kernel the
// sampler reads the threads' run_delay. Stalls are recorded by hand (record), so
// nothing here depends on the machine's load.
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

}  // namespace
}  // namespace tlab::tool
