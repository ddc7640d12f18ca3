// tlab/timeout_token.h: the cancelation token of Crystal RFC 0014.
//
// A TimeoutToken is the one atomic word a waiter owns (the RFC keeps it on the
// Fiber). Arming a timeout bumps it and hands out a Token: the value the word
// holds while that arming is live. Everyone who may end the wait (a canceller,
// the timer, a mutex's unlock) calls resolve(token); exactly one of them wins, and
// ONLY THE WINNER may resume the waiter. That rule is what makes "resume exactly
// once" hold when cancellers race each other and the expiry.
//
// The word, exactly as the RFC specifies (Bits wide, 2 <= Bits <= 32):
//
//     bit 0        armed flag
//     bits 1..B-1  generation, bumped by every arm()
//
//   arm():      word = ((word | 1) + 2) mod 2^Bits;  token = word
//   resolve(t): CAS word: t -> t & ~1;               true iff the CAS succeeded
//
// State machine of the word (only the owning waiter arms; anyone resolves):
//
//   | state                | arm()                       | resolve(t), t current | resolve(t), t stale |
//   |----------------------|-----------------------------|-----------------------|---------------------|
//   | disarmed (bit0 = 0)  | -> armed, generation + 1    | n/a (t not current)   | false, no change    |
//   | armed (bit0 = 1)     | caller bug (TLAB_CHECK)     | -> disarmed, true     | false, no change    |
//
// "Resolved by cancel" and "resolved by expiry" are the same transition; who won
// is known to the winner, which tells the waiter (TimeoutResult) when it resumes it.
//
// ABA bound (the RFC's analysis): a stale token t equals the word again after
// 2^(Bits-1) arms, because each arm adds 2 mod 2^Bits. A resolver stalled across
// exactly that many re-arms resolves the wrong arming. At 32 bits that is
// 2,147,483,648 arms; at 3 bits it is 4, which is why the width is a template
// parameter: tests and scenarios provoke the wraparound at 3-4 bits and show it
// cannot happen at 32 within any bound they run.
//
// Cost: arm() is one load and one store (no RMW: only the owner arms, RFC
// property 1). resolve() is one CAS. sizeof(TimeoutToken) == 4.
//
// Ground rules: arm() only by the owning waiter, and only while the word is
// disarmed (the waiter waits on one timeout at a time). resolve() by anyone who
// holds a token, any number of times, from any thread.
//
// Memory ordering: arm() stores with release, so a resolver that obtains the token
// through any synchronising hand-off (a mutex-protected waiting list, the timer
// queue's lock) and then wins the CAS (acq_rel) sees everything the waiter wrote
// before arming. The winner's release half publishes its own writes (the lock it
// handed over, the permit it granted) to the waiter, which the waiter's unpark
// path (mutex + condition variable) then also orders. A losing CAS is relaxed:
// the loser does nothing with the word.
#pragma once

#include <cstdint>

#include "tlab/base/check.h"
#include "tlab/platform/platform.h"

namespace tlab {

enum class TimeoutResult : std::uint8_t { kCanceled, kExpired };

constexpr const char* name_of(TimeoutResult r) {
  return r == TimeoutResult::kCanceled ? "CANCELED" : "EXPIRED";
}

// The opaque value a resolver must present. Copyable, comparable, nothing else:
// it cannot be tampered with into another arming's value.
template <unsigned Bits>
class TokenValue {
 public:
  constexpr TokenValue() noexcept = default;
  constexpr std::uint32_t raw() const noexcept { return value_; }
  constexpr auto operator<=>(const TokenValue&) const noexcept = default;

 private:
  template <class, unsigned>
  friend class TimeoutToken;
  constexpr explicit TokenValue(std::uint32_t v) noexcept : value_(v) {}
  std::uint32_t value_ = 0;
};

template <class P, unsigned Bits = 32>
class TimeoutToken {
  static_assert(Bits >= 2 && Bits <= 32, "RFC 0014 word: 1 flag bit + at least 1 generation bit");

 public:
  using Token = TokenValue<Bits>;
  static constexpr unsigned kBits = Bits;
  static constexpr std::uint32_t kMask =
      Bits == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << Bits) - 1;
  // Arms until a stale token matches again (the ABA period).
  static constexpr std::uint64_t kAbaPeriod = std::uint64_t{1} << (Bits - 1);

  TimeoutToken() noexcept = default;
  TimeoutToken(const TimeoutToken&) = delete;
  TimeoutToken& operator=(const TimeoutToken&) = delete;

  // tlab::TimeoutToken::arm
  // Requires: called by the owner only, while disarmed.
  // Ensures: the word is armed with a new generation; returns it as the token.
  // Memory ordering: release store, pairs with the acq_rel CAS in resolve().
  Token arm() {
    // relaxed: only the owner writes the word while it is disarmed, and the owner
    // read its own last write or a resolver's CAS it already synchronised with
    // through its unpark (mutex) path.
    const std::uint32_t cur = word_.load(std::memory_order::relaxed);
    TLAB_CHECK((cur & 1U) == 0, "TimeoutToken::arm while armed word=", cur);
    std::uint32_t next;
    if (P::mutated(Mutant::kTokenFlagOnly)) {
      next = (cur | 1U) & kMask;  // BUG: no generation, so every arming looks alike
    } else {
      next = ((cur | 1U) + 2U) & kMask;  // the RFC: (word | 1) &+ 2, wrapping in Bits
    }
    word_.store(next, std::memory_order::release);  // pairs with resolve()'s CAS
    P::fault(FaultPoint::kTokenAfterArm);
    return Token(next);
  }

  // tlab::TimeoutToken::resolve
  // Ensures: returns true for exactly one resolve() per arming, and only if `t`
  // is that arming's token; the word is then disarmed. Returns false, changing
  // nothing, for a stale token or an already-resolved arming.
  // Thread safety: any thread, concurrently with other resolve() calls and with
  // the owner's wait.
  // Memory ordering: acq_rel on success (pairs with arm()'s release and with the
  // waiter's reads after it resumes); relaxed on failure.
  bool resolve(Token t) {
    const std::uint32_t armed = t.raw();
    const std::uint32_t disarmed = armed & ~std::uint32_t{1};
    // A token with bit 0 clear was never handed out by arm() (a default-constructed
    // Token): it names no arming, and a CAS from a disarmed value to itself would
    // otherwise "win" on a word that happens to hold it.
    if (armed == disarmed) return false;
    P::fault(FaultPoint::kTokenBeforeResolveCas);
    if (P::mutated(Mutant::kTokenLoadStoreResolve)) {
      // BUG: check-then-act. Two resolvers can both see `armed` and both "win".
      if (word_.load(std::memory_order::acquire) != armed) return false;
      P::fault(FaultPoint::kTokenBeforeResolveCas);
      word_.store(disarmed, std::memory_order::release);
      return true;
    }
    std::uint32_t expected = armed;
    if (P::mutated(Mutant::kTokenRelaxedResolve)) {
      // BUG: relaxed on success too; the winner's writes may not be visible to the
      // waiter, and the waiter's pre-arm writes may not be visible to the winner.
      return word_.compare_exchange_strong(expected, disarmed, std::memory_order::relaxed,
                                           std::memory_order::relaxed);
    }
    return word_.compare_exchange_strong(expected, disarmed, std::memory_order::acq_rel,
                                         std::memory_order::relaxed);
  }

  // tlab::TimeoutToken::armed: a snapshot, for diagnostics and invariants only.
  bool armed() const noexcept { return (word_.load(std::memory_order::acquire) & 1U) != 0; }
  std::uint32_t raw() const noexcept { return word_.load(std::memory_order::acquire); }

 private:
  typename P::template Atomic<std::uint32_t> word_{0};
};

}  // namespace tlab
