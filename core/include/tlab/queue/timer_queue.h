// tlab/queue/timer_queue.h: the interface every timer-queue strategy implements.
//
// A timer queue is a pure, single-owner data structure: no threads, no locks, no
// callbacks of its own. Whoever owns it (TimerService, an executor worker, a
// coroutine loop, a test) calls insert/cancel/reschedule and, when time moves,
// expire(now, sink). That is what lets one typed test suite, one rapidcheck model
// and one benchmark compare every strategy on equal terms.
//
// The strategies are listed once, in queue/strategy.h (StrategyList), with their
// costs; each class carries its own catalogue facts (see the concept below).
//
// The firing contract, the same for every strategy:
//   - `tick` is the strategy's granularity (1 ns for the exact ones). Let
//     due(d) = the smallest multiple of tick (counted from QueueConfig::start)
//     that is >= d. An entry fires in the first expire(now) with now >= due(d).
//     Never earlier (no early fire), and never later than that call (no late
//     fire beyond one tick).
//   - A deadline already in the past (even before `start`) fires on the next
//     expire().
//   - Each entry fires at most once, and never after a cancel() that returned
//     true. Nothing is lost: an entry that is not cancelled fires eventually.
//   - Within one expire() call, the sink sees entries in nondecreasing due()
//     order. Exact strategies order equal deadlines FIFO (insertion order; a
//     rescheduled entry counts as newly inserted). Wheels make no promise about
//     order within one tick.
//   - expire(now) with `now` before a previous expire()'s `now` is time going
//     backwards: TLAB_CHECK fails loudly; it is never clamped.
//
// Handles are {slot index, generation}; a slot's generation changes whenever its
// entry fires or is cancelled, so a stale handle (fired, cancelled, or from a
// reused slot) is recognised in O(1) and cancel() on it returns false.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "tlab/clock.h"

namespace tlab {

struct TimerHandle {
  static constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t index = kNoIndex;
  std::uint32_t generation = 0;

  constexpr bool is_null() const noexcept { return index == kNoIndex; }
  constexpr bool operator==(const TimerHandle&) const noexcept = default;
};

struct QueueConfig {
  // The queue's time origin: wheels count ticks from here. Use the owner's
  // clock.now() at construction.
  Instant start = Instant::from_ns(0);
  // Wheel granularity. 1 ms matches tokio and the Linux "jiffy" at HZ=1000;
  // scenarios with sub-millisecond timeouts set it lower. Exact strategies
  // ignore it.
  Duration tick = Duration::milliseconds(1);
  // hashed_wheel: slots per revolution (Netty's ticksPerWheel, default 512;
  // rounded up to a power of two).
  std::uint32_t wheel_slots = 512;
  // Reserve room for this many pending entries up front (0: grow on demand).
  std::size_t capacity_hint = 0;
};

// A sink receives each fired entry: sink(Payload&& payload, Instant deadline).
template <class S, class T>
concept ExpirySink = std::invocable<S&, T&&, Instant>;

template <class Q>
concept TimerQueue = requires(Q& q, const Q& cq, Instant t, typename Q::Payload p, TimerHandle h,
                              void (*sink)(typename Q::Payload&&, Instant)) {
  typename Q::Payload;
  requires std::constructible_from<Q, QueueConfig>;
  // Catalogue facts, read by queue/strategy.h:
  //   kName               the CLI spelling, unique among strategies
  //   kExact              tick() is 1 ns and equal deadlines fire FIFO
  //   kExactNextDeadline  next_deadline() is the exact earliest due instant, not
  //                       only a lower bound (an owner sleeping until a lower bound
  //                       wakes early, finds nothing due, and asks again)
  //   kSummary            one line for `tlab list strategies`
  { Q::kName } -> std::convertible_to<std::string_view>;
  { Q::kExact } -> std::convertible_to<bool>;
  { Q::kExactNextDeadline } -> std::convertible_to<bool>;
  { Q::kSummary } -> std::convertible_to<std::string_view>;
  { q.insert(t, std::move(p)) } -> std::same_as<TimerHandle>;
  { q.cancel(h) } -> std::same_as<bool>;
  { q.reschedule(h, t) } -> std::same_as<bool>;
  { q.expire(t, sink) } -> std::same_as<std::size_t>;
  { cq.next_deadline() } -> std::same_as<std::optional<Instant>>;
  { cq.size() } -> std::same_as<std::size_t>;
  { cq.empty() } -> std::same_as<bool>;
  { cq.contains(h) } -> std::same_as<bool>;
  { cq.tick() } -> std::same_as<Duration>;
  cq.check_invariants();
};

}  // namespace tlab
