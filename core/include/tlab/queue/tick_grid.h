// tlab/queue/tick_grid.h: the tick arithmetic the timing wheels share.
//
// A TickGrid is a time origin (QueueConfig::start) and a tick length. Tick k is the
// instant start + k * tick. A deadline d is due at tick due_tick(d) = ceil((d -
// start) / tick): rounding UP is what makes a wheel never fire early, because the
// firing contract (timer_queue.h) says an entry fires in the first expire(now) with
// now >= due(d) = start + due_tick(d) * tick. expire(now) has passed every tick up to
// elapsed_tick(now) = floor((now - start) / tick).
//
// Overflow: all arithmetic is on int64 with saturation. The grid's usable ticks end
// at kLastTick = INT64_MAX - 2^40: a deadline beyond it (due tick > kLastTick, or
// d - start saturated, only possible with start < 0 and d near Instant::max()) maps
// to kNeverTick = INT64_MAX, and elapsed_tick() never exceeds kLastTick, so such an
// entry never fires (its due instant, instant_of(kNeverTick), is Instant::max()):
// huge deadlines never wrap into the past. The cap matters only for ticks of about
// 1 ns (2^63 - 2^40 ticks of 1 ns is 292 years); before it, elapsed_tick() of a now
// INT64_MAX ticks after start was kNeverTick itself, which fired every never-due
// entry (a fixed-rate task saturated at Instant::max() ran on every pass). The 2^40
// ticks of headroom let the wheels compute cursor + one revolution (per-worker
// 2^32 slots at most, hierarchical epochs of 2^36 ticks) without overflow.
//
// Division without a divide instruction: every insert and every cancel of a wheel
// converts a deadline to its tick, and a 64-bit idiv (40-90 cycles on x86-64) was
// the largest single cost of insert+cancel. The grid divides by its fixed tick with
// the precomputed reciprocal m = floor((2^64 - 1) / tick): for a magnitude
// 0 <= n <= 2^63, q = floor(n * m / 2^64) satisfies floor(n / tick) - 1 <= q <=
// floor(n / tick) (proof at udivmod below), so one compare-and-correct step on the
// remainder n - q * tick makes it exact. Signs are handled on magnitudes, so ceil
// and floor are exact for every int64 difference, negative ones and INT64_MIN
// included (tests/unit/tick_grid_test.cc compares against plain division). This is
// Granlund & Montgomery, "Division by invariant integers using multiplication"
// (1994), in its simplest form: their exact 65-bit multipliers avoid the correction
// step, which costs one multiply and a predictable compare here.
//
// Cost: one 64x64->128 multiply, one multiply, one compare per conversion.
//
// Mutant kTickConversionWraps (BasicTickGrid<P> with P a mutant platform; the wheels
// and the Executor use their own P, everyone else TickGrid, which has no mutants):
// due_tick computes d - start with a wrapping subtraction, so a deadline far from
// start lands on a tick in the past and fires at once.
//
// Ground rules: immutable after construction; copy freely.
#pragma once

#include <cstdint>
#include <limits>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/mutant.h"

namespace tlab {

template <class P>
class BasicTickGrid {
 public:
  static constexpr std::int64_t kNeverTick = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kLastTick = kNeverTick - (std::int64_t{1} << 40);

  BasicTickGrid(Instant start, Duration tick)
      : start_(start),
        tick_ns_(tick.ns()),
        tick_u_(static_cast<std::uint64_t>(tick.ns())),
        magic_(tick.ns() > 0 ? ~std::uint64_t{0} / static_cast<std::uint64_t>(tick.ns()) : 0) {
    TLAB_CHECK(tick_ns_ > 0, "TickGrid: tick must be positive, tick=", tick);
  }

  // tlab::TickGrid::due_tick: ceil((d - start) / tick); may be negative; kNeverTick
  // beyond kLastTick.
  std::int64_t due_tick(Instant d) const noexcept {
    const std::int64_t diff = P::mutated(Mutant::kTickConversionWraps)
                                  ? detail::wrap_sub(d.ns(), start_.ns())  // BUG (mutant)
                                  : (d - start_).ns();
    if (diff == detail::kNsMax) return kNeverTick;
    const std::int64_t k = ceil_div(diff);
    return k > kLastTick ? kNeverTick : k;
  }

  // tlab::TickGrid::elapsed_tick: floor((now - start) / tick), at most kLastTick.
  // Requires: now >= start (the queues check this before calling); the result is
  // exact for earlier instants too.
  std::int64_t elapsed_tick(Instant now) const noexcept {
    const std::int64_t k = floor_div((now - start_).ns());
    return k > kLastTick ? kLastTick : k;
  }

  // tlab::TickGrid::instant_of: start + k * tick, saturating.
  Instant instant_of(std::int64_t k) const noexcept {
    if (k == kNeverTick) return Instant::max();
    return start_ + Duration::nanoseconds(tick_ns_) * k;
  }

  Instant start() const noexcept { return start_; }
  Duration tick() const noexcept { return Duration::nanoseconds(tick_ns_); }

  // tlab::TickGrid::ceil_div: ceil(x / tick) for every int64 x, exact.
  std::int64_t ceil_div(std::int64_t x) const noexcept {
    if (x >= 0) {
      const QuotRem qr = udivmod(static_cast<std::uint64_t>(x));
      return static_cast<std::int64_t>(qr.quot + (qr.rem != 0 ? 1 : 0));
    }
    // ceil(-n / t) = -floor(n / t). n = |x| <= 2^63; the negation is done in
    // unsigned arithmetic so that x = INT64_MIN, tick = 1 yields INT64_MIN.
    const QuotRem qr = udivmod(0 - static_cast<std::uint64_t>(x));
    return static_cast<std::int64_t>(0 - qr.quot);
  }

  // tlab::TickGrid::floor_div: floor(x / tick) for every int64 x, exact.
  std::int64_t floor_div(std::int64_t x) const noexcept {
    if (x >= 0) return static_cast<std::int64_t>(udivmod(static_cast<std::uint64_t>(x)).quot);
    // floor(-n / t) = -ceil(n / t); ceil(n / t) <= 2^63, so the result fits.
    const QuotRem qr = udivmod(0 - static_cast<std::uint64_t>(x));
    return static_cast<std::int64_t>(0 - (qr.quot + (qr.rem != 0 ? 1 : 0)));
  }

 private:
  struct QuotRem {
    std::uint64_t quot;
    std::uint64_t rem;
  };

  // floor(n / tick) and n mod tick. Requires: n <= 2^63 (a magnitude of an int64).
  // Why one correction suffices, with t = tick and m = floor((2^64 - 1) / t) >
  // (2^64 - 1) / t - 1:
  //   n * m / 2^64 > n / t - n / (t * 2^64) - n / 2^64 >= n / t - 1 / (2t) - 1 / 2
  //                >= n / t - 1                       (n <= 2^63, t >= 1),
  // so q = floor(n * m / 2^64) > n / t - 2, i.e. q >= floor(n / t) - 1; and
  // m <= 2^64 / t gives q <= floor(n / t). Hence r = n - q * t < 2t, and at most
  // one subtraction of t makes r < t.
  QuotRem udivmod(std::uint64_t n) const noexcept {
    __extension__ typedef unsigned __int128 U128;  // GCC/Clang; __extension__: no -Wpedantic
    std::uint64_t q = static_cast<std::uint64_t>((static_cast<U128>(n) * magic_) >> 64);
    std::uint64_t r = n - q * tick_u_;
    if (r >= tick_u_) {
      ++q;
      r -= tick_u_;
    }
    return {q, r};
  }

  Instant start_;
  std::int64_t tick_ns_;
  std::uint64_t tick_u_;  // tick_ns_ as unsigned, for udivmod
  std::uint64_t magic_;   // floor((2^64 - 1) / tick): the reciprocal udivmod multiplies by
};

namespace detail {
// The platform of a TickGrid outside any templated component: no mutants.
struct NoMutants {
  static constexpr bool mutated(Mutant) noexcept { return false; }
};
}  // namespace detail

using TickGrid = BasicTickGrid<detail::NoMutants>;

}  // namespace tlab
