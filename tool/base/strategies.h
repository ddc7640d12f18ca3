// tlab/tool/base/strategies.h: the strategy names the CLI, plans and scenario
// files accept, and the one expansion of "all".
//
// A view over core's catalogue (tlab/queue/strategy.h, derived from its
// StrategyList), so the tool never lists strategies itself; the subject table
// (subjects/subjects.h) makes each one a subject row from the same catalogue.
//
// Cost: a scan of the catalogue. Ground rules: pure functions of constants.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tlab/queue/strategy.h"

namespace tlab::tool {

// strategy_names: every strategy, in core's order ("all" first if asked).
inline std::vector<std::string> strategy_names(bool with_all = false) {
  std::vector<std::string> names;
  if (with_all) names.emplace_back("all");
  for (const StrategyInfo& s : kStrategyInfo) names.emplace_back(s.name);
  return names;
}

// expand_strategies: `names` with "all" replaced by every strategy.
inline std::vector<std::string> expand_strategies(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n == "all") {
      for (std::string& s : strategy_names()) out.push_back(std::move(s));
    } else {
      out.push_back(n);
    }
  }
  return out;
}

// is_strategy: `name` is a catalogued strategy ("all" is not).
inline bool is_strategy(std::string_view name) { return strategy_from_name(name).has_value(); }

}  // namespace tlab::tool
