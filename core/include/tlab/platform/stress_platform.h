// tlab/platform/stress_platform.h: the Platform tlab runs scenarios on.
//
// Same std atomics and locks as StdPlatform, so TSan sees the real code; but
// mutated() reads the runtime switchboard (stress_control.h) and fault() may
// delay, yield or spin at a named race window per the scenario's fault plan.
//
//   BasicStressPlatform<SteadyClock>   real threads on real time
//   BasicStressPlatform<ManualClock>   real threads on virtual time, for exact
//                                      replays where a scenario allows it
#pragma once

#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_control.h"

namespace tlab {

template <Clock C>
struct BasicStressPlatform : BasicStdPlatform<C> {
  static constexpr std::string_view kName = "stress";
  static void fault(FaultPoint p) noexcept { stress::hit(p); }
  static bool mutated(Mutant m) noexcept { return stress::mutant_enabled(m); }
};

using StressPlatform = BasicStressPlatform<SteadyClock>;
using ManualStressPlatform = BasicStressPlatform<ManualClock>;
static_assert(Platform<StressPlatform>);
static_assert(Platform<ManualStressPlatform>);

}  // namespace tlab
