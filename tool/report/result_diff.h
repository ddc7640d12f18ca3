// tlab/tool/report/result_diff.h: whether two results of one case are the same,
// bit for bit, and if not the first difference in words.
//
// What a deterministic run must reproduce: the verdict, every violation's count
// and first example, every counter but those that time the host (kHostCounters),
// and every histogram (exact buckets). What it may not: duration_s,
// peak_rss_bytes, sanitizer reports, the message, and detect_us (wall time from
// the case's start to its first violation): the host's, not the run's. `tlab replay` of a simulated case and the sim-mode
// replay tests use it.
//
// Cost: O(violations + counters + histogram buckets). Ground rules: pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "types/case_result.h"

namespace tlab::tool {

// The counters that measure the host's wall clock, not the run.
inline constexpr std::string_view kHostCounters[] = {"detect_us"};

// first_difference: nullopt when `replayed` reproduces `recorded` exactly, else
// the first difference found ("counter sim_trace_hash: recorded 123, replayed 456").
std::optional<std::string> first_difference(const CaseResult& recorded,
                                            const CaseResult& replayed);

}  // namespace tlab::tool
