// tlab/tool/oracles/ledger_arith.h: the timer ledger's saturating deadline
// arithmetic, shared by its source files (timer_ledger.cc, timer_ledger_periodic.cc).
//
// Cost: O(1). Ground rules: pure functions.
#pragma once

#include <cstdint>

namespace tlab::tool::ledger_arith {

// ledger_deadline: at + delay saturated to [INT64_MIN, INT64_MAX] (subject.h: "due
// at now_ns + delay_ns, saturated at INT64_MAX").
inline std::int64_t ledger_deadline(std::int64_t at, std::int64_t delay) {
  std::int64_t r;
  if (__builtin_add_overflow(at, delay, &r)) return delay > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

}  // namespace tlab::tool::ledger_arith
