// tlab/tool/base/histogram.h: a log-linear latency histogram (HdrHistogram-style).
//
// Records int64 nanosecond values with bounded relative error and constant memory,
// so a case can record every fire lateness of 10^8 operations and still answer
// p99.9. Tuned for recording on the measuring thread and merging per case.
//
// Geometry (kSubBucketBits = 7, so 128 linear sub-buckets per power of two):
//   | values            | bucket width | buckets |
//   | [0, 128)          | 1 ns         | 128     |
//   | [2^k, 2^(k+1))    | 2^(k-7) ns   | 128     |   k = 7 .. 62
// 7296 buckets in all cover [0, INT64_MAX]. A percentile reports its bucket's
// midpoint, clamped to [min, max]: the relative error is at most half a width over
// the bucket's lower bound, 2^(k-8) / 2^k = 1/256 ~ 0.39%, under the 1% promised.
//
// Costs: record O(1) (a bit scan and an increment; the bucket array grows lazily to
// the largest index seen, <= 58 KiB); merge O(buckets); percentile O(buckets).
//
// Follows Gil Tene's HdrHistogram (sub-bucket count per magnitude) but departs from
// it: no auto-resize of the value range (the range is fixed to int64), no
// coordinated-omission correction, midpoint rather than highest-equivalent value.
//
// Negative values (an early fire has negative lateness) are recorded as 0 in the
// buckets and counted by negative_count(); min() still reports the true minimum.
//
// Ground rules: not thread-safe; one owner records, then hands it over (merge()).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace tlab::tool {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr std::int64_t kSubBuckets = std::int64_t{1} << kSubBucketBits;      // 128
  static constexpr std::size_t kBucketCount = 128 + (62 - kSubBucketBits + 1) * 128;  // 7296

  // Histogram::record: adds `value_ns` (count times). Requires: count >= 1.
  void record(std::int64_t value_ns, std::uint64_t count = 1);
  // Histogram::merge: adds every value recorded in `other`.
  void merge(const Histogram& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t negative_count() const { return negative_; }
  // Histogram::min/max: exact extremes; 0 when empty.
  std::int64_t min() const { return count_ ? min_ : 0; }
  std::int64_t max() const { return count_ ? max_ : 0; }
  // Histogram::mean: arithmetic mean of the recorded values (negatives as recorded
  // values, i.e. exact); 0 when empty.
  double mean() const { return count_ ? static_cast<double>(sum_ / count_) : 0.0; }
  // Histogram::percentile: the value at or below which `p` percent of the values lie.
  // Requires: 0 <= p <= 100. Ensures: within 1% of the exact order statistic (the
  // value of rank ceil(p/100 * count)); p = 0 gives min(), p = 100 gives max(); 0
  // when empty.
  std::int64_t percentile(double p) const;

  // Histogram::to_json: {"unit":"ns","count","min","max","mean","p50","p90","p99",
  // "p999"}, the shape tool/report/report_schema.json calls latency_summary; with
  // `exact`, also "negative", "sum" (a decimal string: the exact sum of the values)
  // and "buckets" ([[index, count], ...], non-zero buckets only), from which
  // from_json() rebuilds an identical histogram.
  nlohmann::ordered_json to_json(bool exact = false) const;
  // Histogram::from_json: the inverse of to_json(true). Throws
  // std::invalid_argument (or nlohmann::json::exception) on a document that is
  // not one: a missing field, a bucket index out of range, counts that do not add
  // up to "count".
  static Histogram from_json(const nlohmann::json& j);

  // Bucket geometry, exposed for tests.
  static std::size_t index_of(std::int64_t value_ns);
  static std::int64_t lower_bound(std::size_t index);
  static std::int64_t width(std::size_t index);

 private:
  std::vector<std::uint64_t> counts_;  // grows to the largest index recorded
  std::uint64_t count_ = 0;
  std::uint64_t negative_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  long double sum_ = 0;  // long double: 10^8 values of 2^62 would overflow int64
};

}  // namespace tlab::tool
