// tlab/tool/oracles/oracles.cc: see oracles.h.
#include "oracles/oracles.h"

#include <fmt/format.h>

#include "base/fmt_ns.h"
#include "types/case_result.h"

namespace tlab::tool {

namespace {

constexpr std::string_view kLatencyPrefix = "latency.";
constexpr std::string_view kAtLeastPrefix = "at_least.";

const LatencyBound& bound_of(const Expectations& e, std::string_view histogram) {
  return histogram == "fire_lateness" ? e.fire_lateness_us : e.cancel_to_resume_us;
}

// A latency bound broken by `h`: one finding per histogram (the first broken
// percentile names it; the count says how many percentiles broke).
void check_latency(CaseResult& r, std::string_view name, const Histogram& h,
                   const LatencyBound& b) {
  const auto check = [&](const std::optional<std::int64_t>& bound_us, double pct,
                         const char* label) {
    if (!bound_us || h.count() == 0) return;
    const std::int64_t v = pct >= 100 ? h.max() : h.percentile(pct);
    if (v > *bound_us * 1000) {
      ViolationRecord& rec = r.violations[std::string(kLatencyPrefix) + std::string(name)];
      if (rec.count++ == 0) {
        rec.first_example = fmt::format("{} {} = {} exceeds the bound {} us ({} samples)", name,
                                        label, fmt_ns(v), *bound_us, h.count());
      }
    }
  };
  check(b.p50_max, 50, "p50");
  check(b.p90_max, 90, "p90");
  check(b.p99_max, 99, "p99");
  check(b.p999_max, 99.9, "p99.9");
  check(b.max, 100, "max");
}

}  // namespace

bool judged(std::string_view key, PromiseSet promised) {
  if (key.starts_with(kAtLeastPrefix)) key.remove_prefix(kAtLeastPrefix.size());
  const auto o = oracle_from_name(key);
  if (!o) return true;  // latency.* and unknown keys: always judged
  const auto& p = info_of(*o).promise;
  return !p || promised.has(*p);
}

bool over_bound(const Expectations& expect, std::string_view key, std::uint64_t count) {
  if (key.starts_with(kAtLeastPrefix)) return true;  // an unmet requirement
  const auto o = oracle_from_name(key);
  const std::uint64_t allowed =
      o && info_of(*o).boundable ? expect.max_violations[static_cast<std::size_t>(*o)] : 0;
  return count > allowed;
}

void judge(const Expectations& expect, PromiseSet promised, CaseResult& r, bool forced) {
  r.promises = promised;
  const bool off_clock = r.counters.contains(std::string(kOffClockCounter));
  for (const LatencyBoundInfo& b : kLatencyBoundInfo) {
    if (off_clock) break;
    auto it = r.latency.find(std::string(b.histogram));
    if (it != r.latency.end())
      check_latency(r, b.histogram, it->second, bound_of(expect, b.histogram));
  }
  for (const OracleInfo& o : kOracleInfo) {
    if (!o.boundable) continue;
    const std::uint64_t need = expect.min_violations[static_cast<std::size_t>(o.id)];
    if (need == 0) continue;
    auto it = r.violations.find(std::string(o.name));
    const std::uint64_t seen = it == r.violations.end() ? 0 : it->second.count;
    if (seen < need) {
      r.violations[std::string(kAtLeastPrefix) + std::string(o.name)] = ViolationRecord{
          1, fmt::format("expect.at_least requires {} {} violation(s); the case saw {}", need,
                         o.name, seen)};
    }
  }
  if (!r.sanitizer_reports.empty()) {
    ViolationRecord& rec = r.violations[std::string(name_of(Oracle::kSanitizer))];
    rec.count = r.sanitizer_reports.size();
    const std::string& first = r.sanitizer_reports.front();
    rec.first_example = first.size() <= 600 ? first : "..." + first.substr(first.size() - 600);
  }
  if (forced) return;
  bool fail = false;
  for (const auto& [key, rec] : r.violations) {
    if (judged(key, promised) && over_bound(expect, key, rec.count)) fail = true;
  }
  r.verdict = fail ? Verdict::kFail : Verdict::kPass;
}

}  // namespace tlab::tool
