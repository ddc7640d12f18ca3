// Tests for TickGrid (queue/tick_grid.h): the reciprocal-multiply division must
// give exactly what plain integer division gives, for ceil (due_tick) and floor
// (elapsed_tick), over every sign, the int64 extremes, the neighbourhood of every
// multiple boundary, ticks of every magnitude, and random values; plus saturation
// to kNeverTick and the round trip through instant_of.
#include "tlab/queue/tick_grid.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace tlab {
namespace {

using I64 = std::int64_t;
constexpr I64 kMax = std::numeric_limits<I64>::max();
constexpr I64 kMin = std::numeric_limits<I64>::min();

// Reference floor / ceil by plain (truncating) int64 division; t > 0, so no
// quotient overflows and q -+ 1 stays in range whenever the remainder is nonzero.
I64 ref_floor(I64 x, I64 t) {
  const I64 q = x / t;
  return x % t < 0 ? q - 1 : q;
}
I64 ref_ceil(I64 x, I64 t) {
  const I64 q = x / t;
  return x % t > 0 ? q + 1 : q;
}

// Ticks: 1 and 2 (the reciprocal's extreme cases), small odd and even values,
// powers of two and their neighbours, decimal units, the 1 ms default, and huge
// ticks up to INT64_MAX.
std::vector<I64> ticks() {
  std::vector<I64> t = {1,
                        2,
                        3,
                        5,
                        7,
                        10,
                        60,
                        100,
                        999,
                        1'000,
                        1'000'001,
                        999'999'937,
                        1'000'000,
                        1'000'000'000,
                        86'400'000'000'000,
                        kMax / 3,
                        kMax / 2,
                        kMax / 2 + 1,
                        kMax - 1,
                        kMax};
  for (int s = 3; s < 63; s += 6) {
    t.push_back(I64{1} << s);
    t.push_back((I64{1} << s) - 1);
    t.push_back((I64{1} << s) + 1);
  }
  return t;
}

// Values: zero, +-1, the extremes and their neighbours, and for the given tick
// every k*t + {-1, 0, +1} for k in a spread of small and huge multipliers.
std::vector<I64> edge_values(I64 t) {
  std::vector<I64> v = {0, 1, -1, 2, -2, kMax, kMax - 1, kMin, kMin + 1, kMax / 2, kMin / 2};
  const I64 ks[] = {1, 2, 3, 1000, I64{1} << 20, I64{1} << 31, I64{1} << 40, kMax / t};
  for (I64 k : ks) {
    if (k > kMax / t) continue;
    const I64 m = k * t;  // fits: k <= kMax / t
    for (I64 base : {m, -m}) {
      for (I64 d : {-1, 0, 1}) {
        if ((d > 0 && base > kMax - d) || (d < 0 && base < kMin - d)) continue;
        v.push_back(base + d);
      }
    }
  }
  return v;
}

void expect_exact(const TickGrid& g, I64 x, I64 t) {
  EXPECT_EQ(g.ceil_div(x), ref_ceil(x, t)) << "ceil x=" << x << " tick=" << t;
  EXPECT_EQ(g.floor_div(x), ref_floor(x, t)) << "floor x=" << x << " tick=" << t;
}

// ceil_div and floor_div equal plain division at every edge value for every tick.
TEST(TickGridTest, DivisionMatchesPlainDivisionAtEdges) {
  for (I64 t : ticks()) {
    const TickGrid g(Instant::from_ns(0), Duration::nanoseconds(t));
    for (I64 x : edge_values(t)) expect_exact(g, x, t);
  }
}

// ceil_div and floor_div equal plain division on random values of every magnitude
// (a random bit length, then random bits) for random ticks of every magnitude.
TEST(TickGridTest, DivisionMatchesPlainDivisionOnRandomValues) {
  std::mt19937_64 rng(2026);
  auto random_magnitude = [&rng](int max_bits) {
    const int bits = static_cast<int>(rng() % static_cast<unsigned>(max_bits)) + 1;
    return static_cast<I64>(rng() >> (64 - bits));  // in [0, 2^bits)
  };
  for (int round = 0; round < 2000; ++round) {
    const I64 t = random_magnitude(63) | 1;  // odd makes the reciprocal inexact
    const I64 t2 = random_magnitude(40) + 1;
    for (I64 tick : {t, t2}) {
      const TickGrid g(Instant::from_ns(0), Duration::nanoseconds(tick));
      for (int j = 0; j < 50; ++j) {
        const I64 x = random_magnitude(63);
        expect_exact(g, x, tick);
        expect_exact(g, -x, tick);
        expect_exact(g, x == 0 ? kMin : -x - 1, tick);
      }
    }
  }
}

// due_tick rounds up and elapsed_tick rounds down relative to start, including
// deadlines before start (negative differences) and a start far from zero.
TEST(TickGridTest, DueRoundsUpElapsedRoundsDownAroundStart) {
  const Instant start = Instant::from_ns(5'000'000'000);
  const TickGrid g(start, Duration::milliseconds(1));
  EXPECT_EQ(g.due_tick(start), 0);
  EXPECT_EQ(g.due_tick(start + Duration::nanoseconds(1)), 1);
  EXPECT_EQ(g.due_tick(start + Duration::milliseconds(1)), 1);
  EXPECT_EQ(g.due_tick(start + Duration::nanoseconds(1'000'001)), 2);
  EXPECT_EQ(g.due_tick(start - Duration::nanoseconds(1)), 0);
  EXPECT_EQ(g.due_tick(start - Duration::nanoseconds(999'999)), 0);
  EXPECT_EQ(g.due_tick(start - Duration::milliseconds(1)), -1);
  EXPECT_EQ(g.due_tick(start - Duration::nanoseconds(1'000'001)), -1);
  EXPECT_EQ(g.elapsed_tick(start), 0);
  EXPECT_EQ(g.elapsed_tick(start + Duration::nanoseconds(999'999)), 0);
  EXPECT_EQ(g.elapsed_tick(start + Duration::milliseconds(1)), 1);
  EXPECT_EQ(g.elapsed_tick(start - Duration::nanoseconds(1)), -1);
}

// A deadline whose distance from start saturates maps to kNeverTick, which
// instant_of maps back to Instant::max(); Instant::min() stays a finite past tick.
TEST(TickGridTest, SaturatedDistancesNeverWrap) {
  const TickGrid g(Instant::from_ns(-1'000), Duration::nanoseconds(7));
  EXPECT_EQ(g.due_tick(Instant::max()), TickGrid::kNeverTick);
  EXPECT_EQ(g.instant_of(TickGrid::kNeverTick), Instant::max());
  const TickGrid pos(Instant::from_ns(1'000), Duration::nanoseconds(7));
  // Instant::min() - start saturates to INT64_MIN ns: ceil(INT64_MIN / 7).
  EXPECT_EQ(pos.due_tick(Instant::min()), ref_ceil(kMin, 7));
  const TickGrid unit(Instant::from_ns(1), Duration::nanoseconds(1));
  EXPECT_EQ(unit.due_tick(Instant::min()), kMin);  // -(2^63) / 1 needs the unsigned negation
  EXPECT_EQ(unit.elapsed_tick(Instant::min()), kMin);
}

// instant_of(due_tick(d)) is the first tick instant at or after d, for random d.
TEST(TickGridTest, DueInstantIsTheFirstTickAtOrAfterTheDeadline) {
  std::mt19937_64 rng(7);
  const Instant start = Instant::from_ns(123'456'789);
  for (I64 t : {I64{1}, I64{3}, I64{1'000}, I64{1'000'000}, I64{999'999'937}}) {
    const TickGrid g(start, Duration::nanoseconds(t));
    for (int i = 0; i < 2000; ++i) {
      const Instant d =
          start + Duration::nanoseconds(static_cast<I64>(rng() % (I64{1} << 50)) - (I64{1} << 49));
      const Instant due = g.instant_of(g.due_tick(d));
      EXPECT_GE(due, d);
      EXPECT_LT(due - d, Duration::nanoseconds(t));
      EXPECT_LE(g.instant_of(g.elapsed_tick(d)), d);
    }
  }
}

}  // namespace
}  // namespace tlab
