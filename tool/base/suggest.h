// tlab/tool/base/suggest.h: "did you mean ...?" for a mistyped name.
//
// closest() picks the candidate with the smallest edit distance (Damerau's
// transposition counts as one edit, so "hashed_wheeel" and "hahsed_wheel" both
// find "hashed_wheel"), and only when it is close enough to be a typo: at most
// max(2, length / 3) edits. Used for strategies, mutants, fault points, roles,
// subcommands and flags.
//
// Cost: O(candidates x |a| x |b|) with |a|, |b| <= 64 in practice. Ground rules:
// pure functions.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tlab::tool {

// edit_distance: optimal string alignment distance (insert, delete, substitute,
// transpose adjacent).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// closest: the candidate nearest to `name`, if it is within a typo's distance.
template <class Range>
std::optional<std::string> closest(std::string_view name, const Range& candidates) {
  if (name.size() > 256) return std::nullopt;  // not a typo; keep the cost bounded
  std::optional<std::string> best;
  std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::string_view cand(c);
    if (cand.size() > 256) continue;
    const std::size_t dist = edit_distance(name, cand);
    if (dist < best_d) {
      best_d = dist;
      best = std::string(cand);
    }
  }
  return best;
}

// did_you_mean: " (did you mean 'x'?)" or "".
template <class Range>
std::string did_you_mean(std::string_view name, const Range& candidates) {
  const auto c = closest(name, candidates);
  return c ? " (did you mean '" + *c + "'?)" : std::string();
}

}  // namespace tlab::tool
