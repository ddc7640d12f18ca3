// Contract tests for tlab/clock.h: saturating time arithmetic, the negative-delay
// contract and the manual clock.
#include "tlab/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

namespace tlab {
namespace {

// Adding Duration::max() to any instant saturates at Instant::max(), never wraps.
TEST(Clock, HugeDelaySaturatesInsteadOfWrapping) {
  const Instant now = Instant::from_ns(123'456'789);
  EXPECT_EQ(now + Duration::max(), Instant::max());
  EXPECT_GT(now + Duration::seconds(std::numeric_limits<std::int64_t>::max()), now);
  EXPECT_EQ(Instant::max() + Duration::nanoseconds(1), Instant::max());
}

// Unit constructors saturate too: seconds(INT64_MAX) is Duration::max().
TEST(Clock, UnitConstructorsSaturate) {
  EXPECT_EQ(Duration::seconds(std::numeric_limits<std::int64_t>::max()), Duration::max());
  EXPECT_EQ(Duration::milliseconds(std::numeric_limits<std::int64_t>::min()), Duration::min());
  EXPECT_EQ(Duration::microseconds(3).ns(), 3'000);
}

// Instant differences saturate instead of overflowing.
TEST(Clock, DifferencesSaturate) {
  EXPECT_EQ(Instant::max() - Instant::min(), Duration::max());
  EXPECT_EQ(Instant::min() - Instant::max(), Duration::min());
  EXPECT_EQ(-Duration::min(), Duration::max());
}

// from_chrono clamps chrono durations too large for int64 nanoseconds.
TEST(Clock, FromChronoClamps) {
  EXPECT_EQ(Duration::from_chrono(std::chrono::hours::max()), Duration::max());
  EXPECT_EQ(Duration::from_chrono(std::chrono::hours::min()), Duration::min());
  EXPECT_EQ(Duration::from_chrono(std::chrono::milliseconds(5)), Duration::milliseconds(5));
}

// Negative delays are rejected with std::invalid_argument; zero is "due now".
TEST(Clock, NegativeDelayIsAnError) {
  EXPECT_THROW(checked_delay(Duration::nanoseconds(-1), "test"), std::invalid_argument);
  EXPECT_EQ(checked_delay(Duration::zero(), "test"), Duration::zero());
  EXPECT_EQ(checked_delay(Duration::max(), "test"), Duration::max());
}

// The manual clock moves only when told to, and only forwards.
TEST(Clock, ManualClockMovesForwardOnly) {
  ManualClock c(Instant::from_ns(10));
  EXPECT_EQ(c.now(), Instant::from_ns(10));
  c.advance(Duration::nanoseconds(5));
  EXPECT_EQ(c.now(), Instant::from_ns(15));
  c.set(Instant::from_ns(15));
  EXPECT_EQ(c.now(), Instant::from_ns(15));
}

// Moving the manual clock backwards is a caller bug and aborts loudly.
TEST(ClockDeathTest, ManualClockBackwardsAborts) {
  ManualClock c(Instant::from_ns(10));
  EXPECT_DEATH(c.set(Instant::from_ns(9)), "time going backwards");
  EXPECT_DEATH(c.advance(Duration::nanoseconds(-1)), "negative step");
}

// The steady clock never goes backwards between two reads.
TEST(Clock, SteadyClockIsMonotonic) {
  SteadyClock c;
  const Instant a = c.now();
  const Instant b = c.now();
  EXPECT_LE(a, b);
}

}  // namespace
}  // namespace tlab
