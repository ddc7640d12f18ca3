// Implementation of tlab/platform/stress_control.h.
#include "tlab/platform/stress_control.h"

#include "tlab/platform/fault_decision.h"

#include <chrono>
#include <random>
#include <thread>

namespace tlab::stress {
namespace {

struct alignas(64) PointState {
  std::atomic<bool> armed{false};
  FaultPlan plan;  // written only while no instrumented thread runs
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> injected{0};
};

std::atomic<std::uint64_t> g_mutant_mask{0};
std::array<PointState, kFaultPointCount> g_points;

static_assert(kMutantCount <= 64, "the mutant mask is one 64-bit word");

thread_local std::mt19937_64 t_rng{0x9e3779b97f4a7c15ULL};

std::uint64_t draw_length(const FaultPlan& plan) noexcept {
  std::uint64_t len = plan.min_ns;
  if (plan.max_ns > plan.min_ns) {
    len = std::uniform_int_distribution<std::uint64_t>(plan.min_ns, plan.max_ns)(t_rng);
  }
  return len;
}

void run_action(const FaultPlan& plan) noexcept {
  const std::uint64_t len = draw_length(plan);
  switch (plan.action) {
    case FaultAction::kNone:
      return;
    case FaultAction::kYield:
      std::this_thread::yield();
      return;
    case FaultAction::kDelay:
      std::this_thread::sleep_for(std::chrono::nanoseconds(len));
      return;
    case FaultAction::kSpin: {
      const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(len);
      while (std::chrono::steady_clock::now() < end) {
      }
      return;
    }
  }
}

}  // namespace

void configure(std::optional<Mutant> mutant,
               const std::array<FaultPlan, kFaultPointCount>& plans) {
  g_mutant_mask.store(mutant ? (std::uint64_t{1} << static_cast<unsigned>(*mutant)) : 0,
                      std::memory_order::relaxed);
  for (std::size_t i = 0; i < kFaultPointCount; ++i) {
    g_points[i].plan = plans[i];
    g_points[i].hits.store(0, std::memory_order::relaxed);
    g_points[i].injected.store(0, std::memory_order::relaxed);
    g_points[i].armed.store(plans[i].action != FaultAction::kNone && plans[i].probability > 0,
                            std::memory_order::relaxed);
  }
}

void reset() { configure(std::nullopt, {}); }

bool mutant_enabled(Mutant m) noexcept {
  return (g_mutant_mask.load(std::memory_order::relaxed) >> static_cast<unsigned>(m)) & 1U;
}

namespace {

// drawn: counts the hit and says whether the plan's action runs this time.
bool drawn(PointState& s) noexcept {
  s.hits.fetch_add(1, std::memory_order::relaxed);
  if (!s.armed.load(std::memory_order::relaxed)) return false;
  if (s.plan.probability < 1.0 &&
      std::uniform_real_distribution<double>(0.0, 1.0)(t_rng) >= s.plan.probability) {
    return false;
  }
  s.injected.fetch_add(1, std::memory_order::relaxed);
  return true;
}

}  // namespace

void hit(FaultPoint p) noexcept {
  PointState& s = g_points[static_cast<std::size_t>(p)];
  if (drawn(s)) run_action(s.plan);
}

std::optional<FaultDecision> decide(FaultPoint p) noexcept {
  PointState& s = g_points[static_cast<std::size_t>(p)];
  if (!drawn(s)) return std::nullopt;
  return FaultDecision{s.plan.action, draw_length(s.plan)};
}

FaultStats stats(FaultPoint p) noexcept {
  const PointState& s = g_points[static_cast<std::size_t>(p)];
  return {s.hits.load(std::memory_order::relaxed), s.injected.load(std::memory_order::relaxed)};
}

void seed_thread(std::uint64_t seed) noexcept { t_rng.seed(seed); }

}  // namespace tlab::stress
