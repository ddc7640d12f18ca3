// tlab/executor/timer_handle.h: TimerCell, the shared state behind an executor
// timer handle, and the one atomic word that decides its fate.
//
// Seed 003 gives each handle an Arc, an AtomicU8 state and an AtomicU64 generation.
// A wheel entry stores (deadline_tick, generation, handle); a worker fires the entry
// only if the generation still matches and the state is Scheduled; cancel bumps the
// generation and sets Cancelled without touching any wheel. The handle outlives any
// one worker, so its entries survive worker stops.
//
// Where this departs from the seed: state and generation are ONE 64-bit atomic word,
// (generation << 3) | state, so "generation matches AND state is Scheduled" and the
// move to Fired are a single CAS. With two separate words a re-arm opens an ABA
// window: a worker checks the generation of an old entry, a canceller bumps it and
// sets Cancelled, the owner re-arms (state Scheduled again), and the worker's CAS
// Scheduled -> Fired then succeeds for the OLD entry. 61 bits of generation do not
// wrap in the life of any program (2^61 armings at 1 ns each is 73 years). The fault
// points of the seed's two-step flows still exist: between reading the word and
// the CAS (executor.cancel_between, executor.before_fire).
//
// State machine (g = generation; "pending" = Scheduled or Migrating):
//
//   from            operation        to                by
//   Idle/Fired/     arm()            (g, Scheduled)    the scheduling thread
//    Cancelled (g)                                      (g reused: see below)
//   pending (g)     arm()            (g+1, Scheduled)  the scheduling thread
//                                                       (old entry is now stale)
//   Scheduled (g)   try_fire(g)      (g, Fired)        the worker holding entry g
//   pending (g)     cancel()         (g+1, Cancelled)  any thread; returns true
//   not pending     cancel()         unchanged         any thread; returns false
//   Scheduled (g)   migrate_out(g)   (g, Migrating)    a stopping worker / submitter
//   Migrating (g)   adopt(g)         (g, Scheduled)    the metronome, redistributing
//   pending (g)     abandon(g)       (g+1, Cancelled)  executor shutdown
//
// Why arm() reuses g when the handle is not pending: every arming that ended left
// no entry carrying its generation that could still fire. A fired arming's entry
// was removed before it fired (entries are moved, never copied), and a cancel
// bumped g past the cancelled entry. So the generation bump of cancel is what
// invalidates the old wheel entry, exactly as the seed says; the
// executor_cancel_state_only mutant skips it and a re-armed handle's old entry fires.
//
// Exactly one winner: try_fire and cancel both CAS from a pending word with the
// same g; whichever CAS lands first wins, and the other sees a changed word.
//
// A callback may arm() or cancel() its own handle: the word is Fired(g) while it
// runs, so a re-arm starts arming g afresh and nothing after the callback writes
// the word (the executor_fired_after_run mutant does, and loses that arming).
//
// Ground rules: the callback is set at construction and never changed. Any thread
// may call any operation; `home` is a hint (which worker's wheel holds the current
// entry, for garbage accounting) and may be stale.
// Memory ordering: every transition is a CAS with acq_rel (acquire on failure):
// the firing worker acquires what the arming thread wrote before arm() (the
// callback's captured state), and a canceller that loses sees the Fired word.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab {

enum class TimerState : std::uint8_t {
  kIdle = 0,       // never armed
  kScheduled = 1,  // armed; its entry is in a wheel or a worker's inbox
  kCancelled = 2,  // a cancel() (or shutdown) won
  kFired = 3,      // a worker won try_fire() and ran (or is running) the callback
  kMigrating = 4,  // armed; its entry is on the merge queue, owned by no wheel
};

template <class P>
class TimerCell {
 public:
  static constexpr std::uint32_t kNoHome = std::numeric_limits<std::uint32_t>::max();

  explicit TimerCell(std::function<void()> callback) : callback_(std::move(callback)) {}
  TimerCell(const TimerCell&) = delete;
  TimerCell& operator=(const TimerCell&) = delete;

  struct Armed {
    std::uint64_t generation;
    bool replaced;  // a pending arming was superseded (a reschedule)
  };

  static constexpr std::uint64_t pack(std::uint64_t g, TimerState s) noexcept {
    return (g << kStateBits) | static_cast<std::uint64_t>(s);
  }
  static constexpr std::uint64_t generation_of(std::uint64_t w) noexcept { return w >> kStateBits; }
  static constexpr TimerState state_of(std::uint64_t w) noexcept {
    return static_cast<TimerState>(w & kStateMask);
  }
  static constexpr bool pending(TimerState s) noexcept {
    return s == TimerState::kScheduled || s == TimerState::kMigrating;
  }

  TimerState state() const noexcept { return state_of(load()); }
  std::uint64_t generation() const noexcept { return generation_of(load()); }

  // tlab::TimerCell::is_live: true iff an entry written with generation g may still
  // fire (g is current and the handle is pending).
  bool is_live(std::uint64_t g) const noexcept {
    const std::uint64_t w = load();
    return generation_of(w) == g && pending(state_of(w));
  }

  // tlab::TimerCell::arm: starts a new arming (see the table).
  // Ensures: the word is (returned generation, Scheduled).
  Armed arm() noexcept {
    std::uint64_t w = load();
    for (;;) {
      const bool replace = pending(state_of(w));
      const std::uint64_t g = generation_of(w) + (replace ? 1 : 0);
      if (cas(w, pack(g, TimerState::kScheduled))) return Armed{g, replace};
    }
  }

  // tlab::TimerCell::cancel: returns true iff it stopped a pending arming, which
  // then never fires. Never touches a wheel.
  bool cancel() noexcept {
    std::uint64_t w = load();
    for (;;) {
      if (!pending(state_of(w))) return false;
      P::fault(FaultPoint::kExecutorCancelBetween);
      const std::uint64_t g = generation_of(w);
      // The mutant keeps g: the stale entry still matches a later arming.
      const std::uint64_t next_g = P::mutated(Mutant::kExecutorCancelStateOnly) ? g : g + 1;
      if (cas(w, pack(next_g, TimerState::kCancelled))) return true;
    }
  }

  // tlab::TimerCell::try_fire: the worker holding entry g claims the fire.
  // Ensures: true for exactly one of {this, a racing cancel} per arming.
  bool try_fire(std::uint64_t g) noexcept {
    std::uint64_t w = load();
    if (w != pack(g, TimerState::kScheduled)) return false;
    P::fault(FaultPoint::kExecutorBeforeFire);
    return cas(w, pack(g, TimerState::kFired));
  }

  // tlab::TimerCell::migrate_out: Scheduled(g) -> Migrating(g). False if entry g is
  // stale (cancelled, re-armed), in which case it must be discarded.
  bool migrate_out(std::uint64_t g) noexcept {
    std::uint64_t w = pack(g, TimerState::kScheduled);
    return cas(w, pack(g, TimerState::kMigrating)) || w == pack(g, TimerState::kMigrating);
  }

  // tlab::TimerCell::adopt: Migrating(g) -> Scheduled(g). False if entry g is stale.
  bool adopt(std::uint64_t g) noexcept {
    std::uint64_t w = pack(g, TimerState::kMigrating);
    return cas(w, pack(g, TimerState::kScheduled)) || w == pack(g, TimerState::kScheduled);
  }

  // tlab::TimerCell::abandon: shutdown's end for a pending entry g: (g+1,
  // Cancelled), so that a later cancel() returns false. False if g is stale.
  bool abandon(std::uint64_t g) noexcept {
    std::uint64_t w = load();
    while (generation_of(w) == g && pending(state_of(w))) {
      if (cas(w, pack(g + 1, TimerState::kCancelled))) return true;
    }
    return false;
  }

  // Which worker's wheel holds the current entry (a hint; kNoHome in transit).
  void set_home(std::uint32_t worker) noexcept {
    home_.store(worker, std::memory_order::relaxed);  // relaxed: a hint, see home()
  }
  std::uint32_t home() const noexcept {
    return home_.load(std::memory_order::relaxed);  // relaxed: pairs with set_home()
  }

  // tlab::TimerCell::run: runs the callback. Called only by the worker whose
  // try_fire(g) won. The word is not touched afterwards: the callback may have
  // re-armed or cancelled this very handle, and that arming is the current one.
  void run(std::uint64_t g) {
    callback_();
    // The mutant publishes Fired after the callback, overwriting a re-arm it made.
    if (P::mutated(Mutant::kExecutorFiredAfterRun)) {
      word_.store(pack(g, TimerState::kFired), std::memory_order::release);
    }
  }

 private:
  static constexpr unsigned kStateBits = 3;
  static constexpr std::uint64_t kStateMask = (1u << kStateBits) - 1;

  std::uint64_t load() const noexcept {
    return word_.load(std::memory_order::acquire);  // pairs with cas()'s release
  }
  // acq_rel: publishes the transition (and what the caller wrote before it) and
  // acquires the previous owner's writes; acquire on failure so that `expected` is
  // a word the caller may act on.
  bool cas(std::uint64_t& expected, std::uint64_t desired) noexcept {
    return word_.compare_exchange_strong(expected, desired, std::memory_order::acq_rel,
                                         std::memory_order::acquire);
  }

  typename P::template Atomic<std::uint64_t> word_{pack(0, TimerState::kIdle)};
  typename P::template Atomic<std::uint32_t> home_{kNoHome};
  const std::function<void()> callback_;
};

}  // namespace tlab
