// tlab/timer_source.h: the seam between things that wait and things that expire.
//
// A TimerSource is whatever plays the RFC's "event loop" for a waiter: it runs a
// callback once a deadline has passed, unless cancelled first. TimerService is the
// production TimerSource; tests use a manual one that fires when told to.
// Waiter, TimedMutex, TimedSemaphore and Pool are written against this concept
// only, so they run unchanged on any queue strategy behind any service.
//
// Contract:
//   S::TimerId    copyable, cheap; names one scheduled callback.
//   S::Callback   move-only or copyable callable `void()`, constructible from a
//                 lambda.
//   now()         the source's clock (the deadline's timeline).
//   schedule_at(deadline, cb)
//                 cb runs at most once, on the source's thread, no earlier than
//                 `deadline` (a deadline in the past runs on the next pass).
//                 Throws std::logic_error after shutdown.
//   cancel(id)    true iff it prevented the run. false: the callback has run, is
//                 running right now, or was cancelled before. A `false` gives no
//                 guarantee the callback has finished; callers that must outlive
//                 their callback make the callback itself harmless (the RFC's
//                 token does exactly that: a late resolve() just loses).
#pragma once

#include <concepts>

#include "tlab/clock.h"

namespace tlab {

template <class S>
concept TimerSource = requires(S& s, Instant deadline, typename S::Callback cb,
                               const typename S::TimerId& id) {
  typename S::TimerId;
  requires std::copyable<typename S::TimerId>;
  requires std::constructible_from<typename S::Callback, void (*)()>;
  { s.now() } -> std::same_as<Instant>;
  { s.schedule_at(deadline, std::move(cb)) } -> std::same_as<typename S::TimerId>;
  { s.cancel(id) } -> std::same_as<bool>;
};

}  // namespace tlab
