// tlab/coro/race_slot.h: RaceSlot and RacePool, the loop-owned homes of the RFC
// 0014 tokens that decide every with_timeout race.
//
// A with_timeout (coro/with_timeout.h) is a race between two or more resolvers:
// the loop's timer, and whatever completes the awaitable (a detached runner task
// on the loop thread, or Event::set on any thread). RFC 0014 keeps the token word
// on the fiber, which outlives every resolver, so a late resolver with a stale
// token just loses its CAS. A coroutine frame does NOT outlive its resolvers (the
// loser may run after the winner resumed the frame and the frame finished), so the
// word cannot live in the frame. It lives here instead: in a slot owned by the
// loop, whose address is stable for the loop's lifetime and which is recycled,
// never freed. A stale resolver (a timer the mutant kCoroTimerLeak forgot to
// cancel, a runner that finishes after its timeout, an Event::set that lost)
// CASes a live word with an old generation and loses, harmlessly; it never
// touches freed memory.
//
// Lifecycle of one slot (loop thread unless said otherwise):
//
//   | step                       | who                  | word       | fields touched             |
//   |----------------------------|----------------------|------------|----------------------------|
//   | acquire()                  | awaiter              | disarmed   | -                          |
//   | waiter = h; t = token.arm()| awaiter              | armed(t)   | waiter (before arm)        |
//   | resolve(t) == true         | winner (any thread)  | disarmed   | outcome, then waiter read  |
//   | resolve(t') == false       | loser / stale        | unchanged  | nothing else               |
//   | release()                  | the resumed awaiter  | disarmed   | -                          |
//
// Cost: acquire/release O(1) (free list; the pool grows to the peak number of
// races in flight and never shrinks). sizeof(RaceSlot) is 24 bytes.
//
// Ground rules: acquire()/release() and the free list: loop thread only. `waiter`
// is written by the loop thread before arm() and read only by the winner of
// resolve(). `outcome` is written only by the winner, before it schedules
// `waiter`, and read by the awaiter after it resumed. The token word: anyone who
// holds a token value.
//
// Memory ordering: arm() is a release store and a winning resolve() an acq_rel
// CAS (timeout_token.h), so the winner sees `waiter`. The winner's write of
// `outcome` reaches the awaiter through the scheduling path: the ready queue (same
// thread) or EventLoop::post()'s mutex (another thread).
#pragma once

#include <coroutine>
#include <cstddef>
#include <deque>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/timeout_token.h"

namespace tlab {

// Tokens of the coroutine loop are 32 bits wide: the ABA period is 2^31 re-arms of
// one slot while one stale resolver stays stalled (RFC 0014's bound).
inline constexpr unsigned kCoroTokenBits = 32;
using CoroToken = TokenValue<kCoroTokenBits>;

template <class P>
struct RaceSlot {
  TimeoutToken<P, kCoroTokenBits> token;
  std::coroutine_handle<> waiter;  // set before arm(); read by the winner only
  // Who won, written by the winner: kCanceled = the awaitable completed first (the
  // timeout was cancelled), kExpired = the timer won.
  TimeoutResult outcome = TimeoutResult::kCanceled;
};

template <class P>
class RacePool {
 public:
  RacePool() = default;
  RacePool(const RacePool&) = delete;
  RacePool& operator=(const RacePool&) = delete;

  // tlab::RacePool::acquire
  // Ensures: returns a disarmed slot with a stable address for the pool's lifetime.
  // Thread safety: loop thread only.
  RaceSlot<P>* acquire() {
    RaceSlot<P>* s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = &slots_.emplace_back();  // deque: existing slots never move
    }
    TLAB_CHECK(!s->token.armed(), "RacePool::acquire: slot still armed word=", s->token.raw());
    ++in_use_;
    return s;
  }

  // tlab::RacePool::release
  // Requires: s came from acquire() and its race was resolved (word disarmed).
  // Thread safety: loop thread only.
  void release(RaceSlot<P>* s) {
    TLAB_CHECK(!s->token.armed(), "RacePool::release: slot still armed word=", s->token.raw());
    TLAB_CHECK(in_use_ > 0, "RacePool::release: more releases than acquires");
    s->waiter = {};
    free_.push_back(s);
    --in_use_;
  }

  // Races in flight (acquired, not yet released).
  std::size_t in_use() const noexcept { return in_use_; }
  std::size_t capacity() const noexcept { return slots_.size(); }

  void check_invariants() const {
    TLAB_CHECK(in_use_ + free_.size() == slots_.size(), "RacePool: in_use=", in_use_,
               " free=", free_.size(), " slots=", slots_.size());
  }

 private:
  std::deque<RaceSlot<P>> slots_;   // loop thread only (the words: anyone)
  std::vector<RaceSlot<P>*> free_;  // loop thread only
  std::size_t in_use_ = 0;          // loop thread only
};

}  // namespace tlab
