// tlab/missed_tick.h: what a periodic task does about runs it missed, and the next
// deadline each policy gives (tokio's MissedTickBehavior; Java's two schedules).
//
// A periodic task's run k is due at first + k * period (its grid). When the timer
// thread takes a run late (now > deadline), the policy decides the next deadline:
//
//   | policy | next deadline                              | Java / tokio / libuv name          |
//   |--------|--------------------------------------------|------------------------------------|
//   | kBurst | deadline + period: the missed runs follow  | scheduleAtFixedRate / Burst        |
//   |        | back to back until the task catches up     |                                    |
//   | kDelay | now + period: the grid moves with the run  | scheduleWithFixedDelay / Delay /   |
//   |        |                                            | uv_timer_start's repeat            |
//   | kSkip  | the first grid point strictly after now:   | - / Skip                           |
//   |        | missed runs are dropped, the grid is kept  |                                    |
//
// Every result saturates at Instant::max() (clock.h): a period that would carry the
// next deadline past the end of time parks it there, never in the past. A run taken
// on time (now == deadline) gives deadline + period under all three.
//
// Cost: O(1), one 64-bit division for kSkip. Ground rules: pure functions, any thread.
#pragma once

#include <cstdint>

#include "tlab/clock.h"

namespace tlab {

enum class MissedTick : std::uint8_t { kBurst, kDelay, kSkip };

constexpr const char* name_of(MissedTick m) {
  switch (m) {
    case MissedTick::kBurst:
      return "burst";
    case MissedTick::kDelay:
      return "delay";
    case MissedTick::kSkip:
      return "skip";
  }
  return "?";
}

// skip_deadline: the first point of the grid {deadline + k * period, k >= 1} that is
// strictly after `now`, saturating at Instant::max().
// Requires: period > 0.
constexpr Instant skip_deadline(Instant deadline, Duration period, Instant now) noexcept {
  if (now < deadline) return deadline + period;
  const Duration behind = now - deadline;  // >= 0; saturates at Duration::max()
  const std::int64_t k = behind.ns() / period.ns() + 1;  // grid steps to just past now
  if (k > Duration::max().ns() / period.ns()) return Instant::max();
  return deadline + Duration::nanoseconds(k * period.ns());
}

// next_periodic_deadline: the policy's next deadline for a run due at `deadline`
// and taken at `now` (table above).
// Requires: period > 0.
constexpr Instant next_periodic_deadline(MissedTick policy, Instant deadline, Duration period,
                                         Instant now) noexcept {
  switch (policy) {
    case MissedTick::kBurst:
      return deadline + period;
    case MissedTick::kDelay:
      return now + period;
    case MissedTick::kSkip:
      return skip_deadline(deadline, period, now);
  }
  return now + period;
}

}  // namespace tlab
