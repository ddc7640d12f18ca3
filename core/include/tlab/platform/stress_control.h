// tlab/platform/stress_control.h: the runtime switchboard behind StressPlatform.
//
// One process-wide table says which mutant is on and what each fault point does.
// The tlab runner sets it before a case starts and clears it after all the case's
// threads have joined; core code only reads it (through StressPlatform).
//
// Ground rules: configure()/reset() only while no instrumented thread runs (the
// runner's case boundary). fault()/mutated() may be called from any thread.
// Cost: mutated() is one relaxed load and a bit test. fault() on a point with no
// plan is one relaxed load; with a plan, one thread-local RNG draw, then the action.
//
// Memory ordering: the table is written before the case's threads are started and
// read after; std::thread's constructor is the synchronising edge, so relaxed
// loads suffice.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab::stress {

enum class FaultAction : std::uint8_t { kNone, kDelay, kYield, kSpin };

struct FaultPlan {
  FaultAction action = FaultAction::kNone;
  double probability = 0.0;      // in [0, 1]
  std::uint64_t min_ns = 0;      // delay/spin length drawn uniformly in [min_ns, max_ns]
  std::uint64_t max_ns = 0;
};

struct FaultStats {
  std::uint64_t hits = 0;        // times the point was reached
  std::uint64_t injected = 0;    // times the action ran
};

// Turns one mutant on (or none) and installs the fault plans. Resets stats.
void configure(std::optional<Mutant> mutant,
               const std::array<FaultPlan, kFaultPointCount>& plans);
// Back to production behaviour: no mutant, no faults.
void reset();

bool mutant_enabled(Mutant m) noexcept;
void hit(FaultPoint p) noexcept;
FaultStats stats(FaultPoint p) noexcept;

// Seeds the calling thread's fault RNG. Each runner thread calls this with a seed
// derived from the scenario seed and its actor index, so a replay draws the same
// fault decisions on the same thread.
void seed_thread(std::uint64_t seed) noexcept;

}  // namespace tlab::stress
