// tlab/clock.h: time for the timeout engine.
//
// `Duration` and `Instant` are signed 64-bit nanosecond counts. Signed, so that
// "how late was this timer" and "how long until the head is due" are plain
// subtractions; 64-bit nanoseconds reach +/-292 years, so the only way to overflow
// is to ask for it (Duration::max(), a hostile scenario file). All arithmetic
// therefore SATURATES: now + Duration::max() is Instant::max(), never a time in
// the past. A timer that "wraps into the past" and fires at once is a real bug
// class (see the `delay_overflow_wraps` mutant), and this file is where it dies.
//
// Contract for negative delays, the same everywhere in tlab: every API that takes
// a *delay* (TimerService::schedule, Waiter::timeout, TimedMutex::lock_for, ...)
// rejects a negative one with std::invalid_argument, via checked_delay(). A zero
// delay means "due now". APIs that take an *Instant* accept any instant; one in
// the past is simply due.
//
// Clocks (a type models `Clock` if it has `Instant now() const` and says whether
// its time is virtual):
//   SteadyClock  CLOCK_MONOTONIC via std::chrono::steady_clock. Never goes back.
//   ManualClock  virtual time, moved only by advance()/set(). Tests and
//                deterministic replays use it; nothing in tlab sleeps on it.
//                Moving it backwards fails loudly (TLAB_CHECK), never clamps.
//
// Cost: every operation here is a handful of integer instructions; now() on
// SteadyClock is one vDSO clock_gettime (~20 ns).
#pragma once

#include <atomic>
#include <chrono>
#include <compare>
#include <concepts>
#include <cstdint>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>

#include "tlab/base/check.h"
#include "tlab/platform/mutant.h"

namespace tlab {

namespace detail {
inline constexpr std::int64_t kNsMax = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kNsMin = std::numeric_limits<std::int64_t>::min();

constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kNsMax : kNsMin;
  return r;
}
constexpr std::int64_t sat_sub(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kNsMax : kNsMin;
  return r;
}
constexpr std::int64_t sat_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? kNsMin : kNsMax;
  return r;
}
// Two's-complement wrapping add/sub: what a plain `a + b` on int64 does on x86.
// Only mutant branches use them (the overflow bug class, on purpose).
constexpr std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
constexpr std::int64_t wrap_sub(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
}  // namespace detail

// A signed span of time in nanoseconds. Arithmetic saturates at min()/max().
class Duration {
 public:
  constexpr Duration() noexcept = default;

  static constexpr Duration nanoseconds(std::int64_t n) noexcept { return Duration(n); }
  static constexpr Duration microseconds(std::int64_t n) noexcept {
    return Duration(detail::sat_mul(n, 1'000));
  }
  static constexpr Duration milliseconds(std::int64_t n) noexcept {
    return Duration(detail::sat_mul(n, 1'000'000));
  }
  static constexpr Duration seconds(std::int64_t n) noexcept {
    return Duration(detail::sat_mul(n, 1'000'000'000));
  }
  template <class Rep, class Period>
  static constexpr Duration from_chrono(std::chrono::duration<Rep, Period> d) noexcept {
    // duration_cast can overflow for huge inputs; clamp in long double first.
    const long double ns =
        std::chrono::duration<long double, std::nano>(d).count();
    if (ns >= static_cast<long double>(detail::kNsMax)) return max();
    if (ns <= static_cast<long double>(detail::kNsMin)) return min();
    return Duration(static_cast<std::int64_t>(ns));
  }

  static constexpr Duration zero() noexcept { return Duration(0); }
  static constexpr Duration max() noexcept { return Duration(detail::kNsMax); }
  static constexpr Duration min() noexcept { return Duration(detail::kNsMin); }

  constexpr std::int64_t ns() const noexcept { return ns_; }
  constexpr double us() const noexcept { return static_cast<double>(ns_) / 1e3; }
  constexpr std::chrono::nanoseconds to_chrono() const noexcept {
    return std::chrono::nanoseconds(ns_);
  }
  constexpr bool is_negative() const noexcept { return ns_ < 0; }

  constexpr auto operator<=>(const Duration&) const noexcept = default;

  constexpr Duration operator+(Duration o) const noexcept {
    return Duration(detail::sat_add(ns_, o.ns_));
  }
  constexpr Duration operator-(Duration o) const noexcept {
    return Duration(detail::sat_sub(ns_, o.ns_));
  }
  constexpr Duration operator*(std::int64_t k) const noexcept {
    return Duration(detail::sat_mul(ns_, k));
  }
  constexpr Duration operator-() const noexcept { return Duration(detail::sat_sub(0, ns_)); }
  constexpr Duration& operator+=(Duration o) noexcept { return *this = *this + o; }
  constexpr Duration& operator-=(Duration o) noexcept { return *this = *this - o; }

 private:
  constexpr explicit Duration(std::int64_t ns) noexcept : ns_(ns) {}
  std::int64_t ns_ = 0;
};

// A point on some clock's timeline, in nanoseconds since that clock's epoch.
// Instants of different clocks must not be mixed; tlab never does.
class Instant {
 public:
  constexpr Instant() noexcept = default;
  static constexpr Instant from_ns(std::int64_t ns) noexcept { return Instant(ns); }
  static constexpr Instant max() noexcept { return Instant(detail::kNsMax); }
  static constexpr Instant min() noexcept { return Instant(detail::kNsMin); }

  constexpr std::int64_t ns() const noexcept { return ns_; }
  constexpr auto operator<=>(const Instant&) const noexcept = default;

  // Saturating: Instant + Duration::max() == Instant::max().
  constexpr Instant operator+(Duration d) const noexcept {
    return Instant(detail::sat_add(ns_, d.ns()));
  }
  constexpr Instant operator-(Duration d) const noexcept {
    return Instant(detail::sat_sub(ns_, d.ns()));
  }
  constexpr Duration operator-(Instant o) const noexcept {
    return Duration::nanoseconds(detail::sat_sub(ns_, o.ns_));
  }

 private:
  constexpr explicit Instant(std::int64_t ns) noexcept : ns_(ns) {}
  std::int64_t ns_ = 0;
};

inline std::ostream& operator<<(std::ostream& os, Duration d) { return os << d.ns() << "ns"; }
inline std::ostream& operator<<(std::ostream& os, Instant t) { return os << "@" << t.ns() << "ns"; }

// tlab::checked_delay: the one place the negative-delay contract lives.
// Requires: nothing. Ensures: returns d when d >= 0.
// Throws std::invalid_argument naming `what` when d < 0.
inline Duration checked_delay(Duration d, const char* what) {
  if (d.is_negative()) {
    throw std::invalid_argument(std::string(what) + ": negative delay " + std::to_string(d.ns()) +
                                "ns (tlab rejects negative delays; use zero for 'now')");
  }
  return d;
}

// tlab::deadline_after<P>: the deadline of a timer armed at `now` with delay `d`.
// Requires: d >= 0 (pass it through checked_delay() first).
// Ensures: now + d, saturating: Duration::max() yields Instant::max(), never a time
// in the past. Every component that turns a delay into a deadline (Waiter,
// TimedWaitGroup, TimerService, Executor, sleep_for, with_timeout) goes through
// here, so the overflow bug class lives in one spot.
// Mutant kDelayOverflowWraps: two's-complement wrapping addition instead, so a huge
// delay lands in the past and the timer fires at once.
template <class P>
constexpr Instant deadline_after(Instant now, Duration d) noexcept {
  if (P::mutated(Mutant::kDelayOverflowWraps)) {
    // BUG: wrapping arithmetic (what a plain `now + d` on int64 does on x86).
    return Instant::from_ns(detail::wrap_add(now.ns(), d.ns()));
  }
  return now + d;
}

template <class C>
concept Clock = requires(const C& c) {
  { c.now() } -> std::same_as<Instant>;
  { C::kVirtual } -> std::convertible_to<bool>;
};

// CLOCK_MONOTONIC. Stateless; copies are free.
struct SteadyClock {
  static constexpr bool kVirtual = false;
  Instant now() const noexcept {
    return Instant::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count());
  }
  // Converts an Instant of this clock to a steady_clock time_point, saturating.
  static std::chrono::steady_clock::time_point to_time_point(Instant t) noexcept {
    using TP = std::chrono::steady_clock::time_point;
    // Leave headroom: libstdc++'s wait_until adds to the time point internally.
    constexpr std::int64_t kCap = detail::kNsMax / 2;
    const std::int64_t ns = t.ns() > kCap ? kCap : t.ns();
    return TP(std::chrono::duration_cast<TP::duration>(std::chrono::nanoseconds(ns)));
  }
};

// Virtual time. Thread-safe: now() may be read from any thread while one driver
// advances it.
// Memory ordering: advance()/set() store with release and now() loads with
// acquire, so whatever the driver wrote before moving time is visible to a thread
// that observes the new time.
class ManualClock {
 public:
  static constexpr bool kVirtual = true;

  explicit ManualClock(Instant start = Instant::from_ns(0)) noexcept : now_(start.ns()) {}

  Instant now() const noexcept {
    return Instant::from_ns(now_.load(std::memory_order::acquire));  // pairs with set()
  }

  // tlab::ManualClock::advance
  // Requires: d >= 0 (time never goes backwards; a negative step aborts).
  void advance(Duration d) {
    TLAB_CHECK(!d.is_negative(), "ManualClock::advance: negative step d=", d);
    set(now() + d);
  }

  // tlab::ManualClock::set
  // Requires: t >= now(). Moving time backwards is a bug in the caller and aborts
  // with both instants printed; it is never clamped.
  void set(Instant t) {
    const Instant cur = now();
    TLAB_CHECK(t >= cur, "ManualClock::set: time going backwards now=", cur, " t=", t);
    now_.store(t.ns(), std::memory_order::release);  // pairs with now()
  }

 private:
  std::atomic<std::int64_t> now_;
};

}  // namespace tlab
