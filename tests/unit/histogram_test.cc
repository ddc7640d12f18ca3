// Tests for tool/base/histogram.h: geometry, the 1% error bound, merge and JSON.
#include "base/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace tlab::tool {
namespace {

// Exact order statistic of rank ceil(p/100 * n), the definition percentile() follows.
std::int64_t exact_percentile(std::vector<std::int64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const auto rank = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size()) - 1e-9)));
  return v[rank - 1];
}

void expect_within_one_percent(const Histogram& h, const std::vector<std::int64_t>& values) {
  for (double p : {1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99}) {
    const std::int64_t exact = exact_percentile(values, p);
    const std::int64_t got = h.percentile(p);
    const double err = std::abs(static_cast<double>(got - exact));
    EXPECT_LE(err, 0.01 * static_cast<double>(exact))
        << "p" << p << " exact=" << exact << " got=" << got;
  }
}

// Every bucket's lower bound maps back to that bucket, buckets tile the range
// without gaps, and the last bucket reaches INT64_MAX.
TEST(HistogramTest, BucketsTileTheInt64Range) {
  for (std::size_t i = 0; i + 1 < Histogram::kBucketCount; ++i) {
    ASSERT_EQ(Histogram::index_of(Histogram::lower_bound(i)), i);
    ASSERT_EQ(Histogram::lower_bound(i) + Histogram::width(i), Histogram::lower_bound(i + 1));
  }
  EXPECT_EQ(Histogram::index_of(std::numeric_limits<std::int64_t>::max()),
            Histogram::kBucketCount - 1);
}

// Each bucket is at most 1/128 of its lower bound wide, so a midpoint is within
// 1/256 of any value in the bucket: the geometric form of the 1% promise.
TEST(HistogramTest, BucketWidthIsAtMostOneOver128OfItsValues) {
  for (std::size_t i = 128; i < Histogram::kBucketCount; ++i) {
    ASSERT_LE(Histogram::width(i) * 128, Histogram::lower_bound(i)) << "bucket " << i;
  }
}

// Values below 128 ns are recorded exactly.
TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (std::int64_t v = 0; v < 128; ++v) h.record(v);
  EXPECT_EQ(h.percentile(50), 63);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 127);
  EXPECT_DOUBLE_EQ(h.mean(), 63.5);
}

// Percentiles of uniform, log-uniform and heavy-tailed samples stay within 1% of
// the exact order statistics.
TEST(HistogramTest, PercentilesWithinOnePercentOnRandomData) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<std::int64_t>> sets(3);
  std::uniform_int_distribution<std::int64_t> uniform(0, 10'000'000);
  std::uniform_real_distribution<double> exponent(0, 60);
  std::exponential_distribution<double> tail(1e-5);
  for (int i = 0; i < 200'000; ++i) {
    sets[0].push_back(uniform(rng));
    sets[1].push_back(static_cast<std::int64_t>(std::exp2(exponent(rng))));
    sets[2].push_back(static_cast<std::int64_t>(tail(rng)) + 1000);
  }
  for (const auto& values : sets) {
    Histogram h;
    for (std::int64_t v : values) h.record(v);
    EXPECT_EQ(h.count(), values.size());
    expect_within_one_percent(h, values);
  }
}

// The worst case for a bucket: every value at the bottom edge of a wide bucket.
TEST(HistogramTest, ErrorBoundHoldsAtBucketEdges) {
  for (std::int64_t base :
       {std::int64_t{128}, std::int64_t{1} << 20, std::int64_t{1} << 40, std::int64_t{1} << 62}) {
    for (std::int64_t v : {base, base + 1, 2 * base - 1}) {
      Histogram h;
      h.record(v / 2);  // other buckets around v, so min/max clamping cannot help
      h.record(v, 2);
      h.record(std::numeric_limits<std::int64_t>::max());
      const double got = static_cast<double>(h.percentile(50));
      EXPECT_LE(std::abs(got - static_cast<double>(v)), 0.01 * static_cast<double>(v)) << v;
    }
  }
}

// min and max are exact, p0 and p100 return them, and an empty histogram reads 0.
TEST(HistogramTest, ExtremesAreExact) {
  Histogram h;
  EXPECT_EQ(h.percentile(99), 0);
  EXPECT_EQ(h.max(), 0);
  h.record(1'234'567'891);
  h.record(987'654'321'123);
  EXPECT_EQ(h.min(), 1'234'567'891);
  EXPECT_EQ(h.max(), 987'654'321'123);
  EXPECT_EQ(h.percentile(0), 1'234'567'891);
  EXPECT_EQ(h.percentile(100), 987'654'321'123);
}

// Merging two histograms equals recording both streams into one.
TEST(HistogramTest, MergeEqualsRecordingEverything) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> d(0, 1'000'000'000);
  Histogram a, b, all;
  std::vector<std::int64_t> values;
  for (int i = 0; i < 10'000; ++i) {
    const std::int64_t v = d(rng);
    (i % 3 ? a : b).record(v);
    all.record(v);
    values.push_back(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  for (double p : {50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(a.percentile(p), all.percentile(p));
  expect_within_one_percent(a, values);
  Histogram empty;
  a.merge(empty);
  EXPECT_EQ(a.count(), all.count());
}

// Negative values (early fires) count as 0 in the buckets, are counted apart, and
// leave the true minimum visible.
TEST(HistogramTest, NegativeValuesAreCountedAndClamped) {
  Histogram h;
  h.record(-500);
  h.record(1000, 3);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.negative_count(), 1u);
  EXPECT_EQ(h.min(), -500);
  EXPECT_EQ(h.percentile(25), 0);
  EXPECT_EQ(h.percentile(50), 1000);
}

// The JSON summary carries count, min, max, mean and p50/p90/p99/p99.9 in ns.
TEST(HistogramTest, JsonSummaryHasEveryField) {
  Histogram h;
  for (std::int64_t v = 1; v <= 1000; ++v) h.record(v * 1000);
  const auto j = h.to_json();
  EXPECT_EQ(j.at("unit"), "ns");
  EXPECT_EQ(j.at("count"), 1000);
  EXPECT_EQ(j.at("min"), 1000);
  EXPECT_EQ(j.at("max"), 1'000'000);
  EXPECT_NEAR(j.at("mean").get<double>(), 500'500.0, 1e-6);
  EXPECT_NEAR(j.at("p50").get<double>(), 500'000.0, 5'000.0);
  EXPECT_NEAR(j.at("p90").get<double>(), 900'000.0, 9'000.0);
  EXPECT_NEAR(j.at("p99").get<double>(), 990'000.0, 9'900.0);
  EXPECT_NEAR(j.at("p999").get<double>(), 999'000.0, 9'990.0);
}

}  // namespace
}  // namespace tlab::tool
