// tlab/queue/tick_grid.h: the tick arithmetic the timing wheels share.
//
// A TickGrid is a time origin (QueueConfig::start) and a tick length. Tick k is the
// instant start + k * tick. A deadline d is due at tick due_tick(d) = ceil((d -
// start) / tick): rounding UP is what makes a wheel never fire early, because the
// firing contract (timer_queue.h) says an entry fires in the first expire(now) with
// now >= due(d) = start + due_tick(d) * tick. expire(now) has passed every tick up to
// elapsed_tick(now) = floor((now - start) / tick).
//
// Overflow: all arithmetic is on int64 with saturation. A deadline so far away that
// d - start saturates (only possible with start < 0 and d near Instant::max()) maps
// to kNeverTick, the largest tick, which no elapsed_tick() ever passes unless now
// is Instant::max() itself; so huge deadlines never wrap into the past.
//
// Cost: one division per conversion.
//
// Ground rules: immutable after construction; copy freely.
#pragma once

#include <cstdint>
#include <limits>

#include "tlab/base/check.h"
#include "tlab/clock.h"

namespace tlab {

class TickGrid {
 public:
  static constexpr std::int64_t kNeverTick = std::numeric_limits<std::int64_t>::max();

  TickGrid(Instant start, Duration tick) : start_(start), tick_ns_(tick.ns()) {
    TLAB_CHECK(tick_ns_ > 0, "TickGrid: tick must be positive, tick=", tick);
  }

  // tlab::TickGrid::due_tick: ceil((d - start) / tick); may be negative.
  std::int64_t due_tick(Instant d) const noexcept {
    const std::int64_t diff = (d - start_).ns();
    if (diff == detail::kNsMax) return kNeverTick;
    const std::int64_t q = diff / tick_ns_;  // truncates toward zero
    return (diff % tick_ns_ > 0) ? q + 1 : q;
  }

  // tlab::TickGrid::elapsed_tick: floor((now - start) / tick).
  // Requires: now >= start (the queues check this before calling).
  std::int64_t elapsed_tick(Instant now) const noexcept { return (now - start_).ns() / tick_ns_; }

  // tlab::TickGrid::instant_of: start + k * tick, saturating.
  Instant instant_of(std::int64_t k) const noexcept {
    if (k == kNeverTick) return Instant::max();
    return start_ + Duration::nanoseconds(tick_ns_) * k;
  }

  Instant start() const noexcept { return start_; }
  Duration tick() const noexcept { return Duration::nanoseconds(tick_ns_); }

 private:
  Instant start_;
  std::int64_t tick_ns_;
};

}  // namespace tlab
