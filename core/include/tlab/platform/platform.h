// tlab/platform/platform.h: the Platform concept.
//
// A Platform is a policy type with only static members and nested types. Core
// templates name what they need through it and nothing else, which is what lets
// the same algorithm run in production (StdPlatform), under the stress runner
// (StressPlatform: fault injection and mutants) and under the Relacy model checker
// (RelacyPlatform, models/relacy_platform.h). See docs/design.md, "The Platform policy".
#pragma once

#include <concepts>
#include <cstdint>

#include "tlab/clock.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab {

template <class P>
concept Platform = requires(typename P::CondVar& cv, typename P::Lock& lock,
                            const typename P::Clock& clock, Instant t) {
  typename P::template Atomic<std::uint32_t>;
  typename P::template Atomic<std::uint64_t>;
  typename P::Mutex;
  typename P::CondVar;
  typename P::Lock;
  requires Clock<typename P::Clock>;
  { P::mutated(Mutant::kTokenFlagOnly) } -> std::convertible_to<bool>;
  P::fault(FaultPoint::kTokenBeforeResolveCas);
  P::yield();
  P::wait(cv, lock);
  P::wait_until(cv, lock, clock, t);
  P::notify_one(cv);
  P::notify_all(cv);
};

}  // namespace tlab
