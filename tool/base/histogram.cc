// tlab/tool/base/histogram.cc: see histogram.h.
#include "base/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "tlab/base/check.h"

namespace tlab::tool {

std::size_t Histogram::index_of(std::int64_t value_ns) {
  if (value_ns < kSubBuckets) return static_cast<std::size_t>(std::max<std::int64_t>(value_ns, 0));
  const auto v = static_cast<std::uint64_t>(value_ns);
  const int k = 63 - std::countl_zero(v);  // 7 .. 62
  const int shift = k - kSubBucketBits;
  const std::uint64_t sub = (v >> shift) - static_cast<std::uint64_t>(kSubBuckets);  // 0..127
  return static_cast<std::size_t>(kSubBuckets) + static_cast<std::size_t>(shift) * kSubBuckets +
         static_cast<std::size_t>(sub);
}

std::int64_t Histogram::lower_bound(std::size_t index) {
  if (index < static_cast<std::size_t>(kSubBuckets)) return static_cast<std::int64_t>(index);
  const std::size_t j = index - kSubBuckets;
  const std::size_t shift = j / kSubBuckets;
  const std::int64_t sub = kSubBuckets + static_cast<std::int64_t>(j % kSubBuckets);
  return sub << shift;
}

std::int64_t Histogram::width(std::size_t index) {
  if (index < static_cast<std::size_t>(kSubBuckets)) return 1;
  return std::int64_t{1} << ((index - kSubBuckets) / kSubBuckets);
}

void Histogram::record(std::int64_t value_ns, std::uint64_t count) {
  TLAB_CHECK(count >= 1);
  if (count_ == 0) {
    min_ = max_ = value_ns;
  } else {
    min_ = std::min(min_, value_ns);
    max_ = std::max(max_, value_ns);
  }
  if (value_ns < 0) negative_ += count;
  const std::size_t i = index_of(value_ns);
  if (counts_.size() <= i) counts_.resize(i + 1, 0);
  counts_[i] += count;
  count_ += count;
  sum_ += static_cast<long double>(value_ns) * static_cast<long double>(count);
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  if (counts_.size() < other.counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  negative_ += other.negative_;
  sum_ += other.sum_;
}

std::int64_t Histogram::percentile(double p) const {
  TLAB_CHECK(p >= 0.0 && p <= 100.0);
  if (count_ == 0) return 0;
  if (p == 0.0) return min();
  if (p == 100.0) return max();
  // Rank of the order statistic, 1-based; the epsilon keeps 99.9% of 1000 at 999.
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_) - 1e-9)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const std::int64_t mid = lower_bound(i) + (width(i) - 1) / 2;
      return std::clamp(mid, min(), max());
    }
  }
  return max();
}

nlohmann::ordered_json Histogram::to_json(bool exact) const {
  nlohmann::ordered_json j;
  j["unit"] = "ns";
  j["count"] = count_;
  j["min"] = min();
  j["max"] = max();
  j["mean"] = mean();
  j["p50"] = percentile(50);
  j["p90"] = percentile(90);
  j["p99"] = percentile(99);
  j["p999"] = percentile(99.9);
  if (exact) {
    j["negative"] = negative_;
    // The sum of integers is an integer; %.0Lf prints it exactly (64-bit mantissa).
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0Lf", sum_);
    j["sum"] = buf;
    auto& b = j["buckets"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] != 0) b.push_back({i, counts_[i]});
    }
  }
  return j;
}

Histogram Histogram::from_json(const nlohmann::json& j) {
  Histogram h;
  h.count_ = j.at("count").get<std::uint64_t>();
  h.negative_ = j.at("negative").get<std::uint64_t>();
  h.min_ = j.at("min").get<std::int64_t>();
  h.max_ = j.at("max").get<std::int64_t>();
  const std::string sum = j.at("sum").get<std::string>();
  char* end = nullptr;
  h.sum_ = std::strtold(sum.c_str(), &end);
  if (sum.empty() || end == nullptr || *end != '\0') {
    throw std::invalid_argument("histogram: sum '" + sum + "' is not a number");
  }
  std::uint64_t total = 0;
  for (const auto& pair : j.at("buckets")) {
    const auto i = pair.at(0).get<std::size_t>();
    const auto c = pair.at(1).get<std::uint64_t>();
    if (i >= kBucketCount) throw std::invalid_argument("histogram: bucket index out of range");
    if (h.counts_.size() <= i) h.counts_.resize(i + 1, 0);
    h.counts_[i] += c;
    total += c;
  }
  if (total != h.count_) {
    throw std::invalid_argument("histogram: bucket counts add up to " + std::to_string(total) +
                                ", not count " + std::to_string(h.count_));
  }
  return h;
}

}  // namespace tlab::tool
