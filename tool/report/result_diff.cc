// tlab/tool/report/result_diff.cc: result_diff.h.
#include "report/result_diff.h"

#include <map>

#include <fmt/format.h>

namespace tlab::tool {

namespace {

// diff_maps: the first key whose value differs or that only one side has.
template <class Map, class Show>
std::optional<std::string> diff_maps(const char* what, const Map& a, const Map& b, Show show) {
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end()) return fmt::format("{} {}: recorded {}, replayed none", what, k, show(v));
    if (show(v) != show(it->second)) {
      return fmt::format("{} {}: recorded {}, replayed {}", what, k, show(v), show(it->second));
    }
  }
  for (const auto& [k, v] : b) {
    if (!a.contains(k)) return fmt::format("{} {}: recorded none, replayed {}", what, k, show(v));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> first_difference(const CaseResult& recorded,
                                            const CaseResult& replayed) {
  if (recorded.verdict != replayed.verdict) {
    return fmt::format("verdict: recorded {}, replayed {}", name_of(recorded.verdict),
                       name_of(replayed.verdict));
  }
  if (auto d = diff_maps("violation", recorded.violations, replayed.violations,
                         [](const ViolationRecord& v) {
                           return fmt::format("{} (first: {})", v.count, v.first_example);
                         })) {
    return d;
  }
  auto run_counters = [](std::map<std::string, std::uint64_t> c) {
    for (std::string_view host : kHostCounters) c.erase(std::string(host));
    return c;
  };
  if (auto d = diff_maps("counter", run_counters(recorded.counters),
                         run_counters(replayed.counters),
                         [](std::uint64_t n) { return std::to_string(n); })) {
    return d;
  }
  return diff_maps("histogram", recorded.latency, replayed.latency,
                   [](const Histogram& h) { return h.to_json(/*exact=*/true).dump(); });
}

}  // namespace tlab::tool
