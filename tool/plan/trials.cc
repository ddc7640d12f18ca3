// tlab/tool/plan/trials.cc: see trials.h.
#include "plan/trials.h"

#include <algorithm>
#include <optional>

namespace tlab::tool {

namespace {

// Seeds travel through JSON reports; 2^53 keeps them exact in every JSON reader.
constexpr std::uint64_t kSeedMask = (std::uint64_t{1} << 53) - 1;

// The index of the trial the folded record shows (trials.h table).
std::size_t shown_trial(const CaseSpec& spec, const std::vector<CaseRecord>& records) {
  auto first = [&](auto pred) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (pred(records[i])) return i;
    }
    return std::nullopt;
  };
  auto is = [](Verdict v) { return [v](const CaseRecord& r) { return r.result.verdict == v; }; };
  if (auto i = first(is(Verdict::kInterrupted))) return *i;
  if (auto i = first(is(Verdict::kError))) return *i;
  if (spec.expect_fail) {
    if (auto i = first([](const CaseRecord& r) { return !r.caught(); })) return *i;
  } else if (auto i =
                 first([](const CaseRecord& r) { return r.result.verdict != Verdict::kPass; })) {
    return *i;
  }
  return 0;
}

}  // namespace

CaseRecord fold_trials(const CaseSpec& spec, std::vector<CaseResult> trials) {
  std::vector<CaseRecord> records;
  records.reserve(trials.size());
  for (CaseResult& r : trials) records.push_back(CaseRecord::from(spec, std::move(r)));
  TrialTally tally;
  std::vector<std::uint64_t> detect_us;
  double duration_s = 0;
  for (const CaseRecord& r : records) {
    const Verdict v = r.result.verdict;
    tally.verdicts.push_back(v);
    duration_s += r.result.duration_s;
    if (v == Verdict::kInterrupted) continue;  // decided nothing
    const bool failed = spec.expect_fail ? r.caught() : v != Verdict::kPass;
    if (failed) ++tally.failures;
    if (spec.expect_fail && r.caught()) {
      const auto it = r.result.counters.find("detect_us");
      if (it != r.result.counters.end()) detect_us.push_back(it->second);
    }
  }
  if (!detect_us.empty()) {
    // The lower median: a value some trial really took.
    const auto mid = detect_us.begin() + static_cast<std::ptrdiff_t>((detect_us.size() - 1) / 2);
    std::nth_element(detect_us.begin(), mid, detect_us.end());
    tally.median_detect_us = *mid;
  }
  CaseRecord out = std::move(records[shown_trial(spec, records)]);
  out.result.duration_s = duration_s;
  out.trials = std::move(tally);
  return out;
}

std::uint64_t seed_for_round(std::uint64_t seed, std::uint32_t round) {
  return (seed + round - 1) & kSeedMask;
}

}  // namespace tlab::tool
