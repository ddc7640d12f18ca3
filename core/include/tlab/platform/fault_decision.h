// tlab/platform/fault_decision.h: a fault point's decision without its action,
// for a Platform that acts on it in its own terms (SimPlatform: a delay is a
// timed block on virtual time, during which every other task may run).
//
// decide(p) does what stress::hit(p) does up to the action: counts the hit, draws
// against the plan's probability from the calling thread's fault RNG
// (stress_control.h, seed_thread) and, when the action is due, counts it injected
// and returns the action with its length drawn from [min_ns, max_ns]. The same
// thread-local RNG as hit(), so a seeded thread draws the same decisions.
//
// Cost: as hit() without the action. Ground rules: as stress_control.h. Memory
// ordering: the counters are relaxed (read after the case's threads joined).
#pragma once

#include <cstdint>
#include <optional>

#include "tlab/platform/stress_control.h"

namespace tlab::stress {

struct FaultDecision {
  FaultAction action = FaultAction::kNone;
  std::uint64_t length_ns = 0;  // kDelay, kSpin: how long
};

// decide: the action to take at `p` now, or nullopt (no plan, or not drawn).
std::optional<FaultDecision> decide(FaultPoint p) noexcept;

}  // namespace tlab::stress
