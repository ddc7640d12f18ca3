// tlab/tool/strategy_catalogue.h: the strategy names the CLI and scenarios accept.
//
// A thin view over core's catalogue (tlab/queue/strategy.h, kStrategyInfo), so the
// tool has one place that says what "all" expands to and how a name is checked.
//
// Ground rules: constant data; safe from any thread. Cost: lookups scan five rows.
#pragma once

#include <string_view>

#include "tlab/queue/strategy.h"

namespace tlab::tool {

using tlab::kStrategyInfo;

// is_strategy: true when `name` is a catalogued strategy ("all" is not).
constexpr bool is_strategy(std::string_view name) {
  return tlab::strategy_from_name(name).has_value();
}

}  // namespace tlab::tool
