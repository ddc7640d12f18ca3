// tlab/tool/runner/arming_ledger.h: who won resolve for which arming of a waiter,
// judged while the case runs, in memory bounded by the cancels in flight rather than
// by the operation count.
//
// The kService engine's waiters arm Waiter::timeout() in a loop; its cancellers (and
// the watchdog's rescue) cancel a token they read from a waiter's slot. A win is
// credited to the arming its CAS actually resolved: the one of that slot that was
// live during the cancel() call ([t0, t1]) and holds the same token value; when
// several match, the arming the canceller read the token from, else the oldest. An
// arming is then judged:
//
//   | arming returned | wins credited | finding                                        |
//   |-----------------|---------------|------------------------------------------------|
//   | CANCELED        | 0             | wrong_result: no canceller won it              |
//   | EXPIRED         | >= 1          | wrong_result: a win, yet it expired            |
//   | any             | >= 2          | double_resume: two resolvers won one arming    |
//   | any             | 1, not credited to the arming it was read from | wrong_result (RFC 0014's ABA) |
//   | CANCELED        | 1             | none; cancel_to_resume is sampled              |
//
// Memory: an arming is kept only until no cancel can still be credited to it. Every
// cancel registers its t0 under the ledger's lock (begin_cancel) and deposits its win
// at t1 (end_cancel); a cancel not yet begun will read a t0 later than every arming
// already returned. So an arming that returned before the oldest t0 in flight (or any
// arming, with none in flight) is judged and dropped. Retained: the armings returned
// since the oldest cancel in flight began, plus one pending win per cancel, i.e.
// O(resolvers + armings during one cancel() call), independent of run.operations.
//
// Cost: one lock per arming and two per cancel. Ground rules: every method is
// thread-safe (one mutex, mu_); record() is called by slot `i`'s waiter thread only,
// between its armings, so all armings of a slot armed before a deposited win's t1
// are in the ledger when record() credits it.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "runner/case_context.h"
#include "tlab/waiter.h"

namespace tlab::tool::runner {

class ArmingLedger {
 public:
  struct Arming {
    std::uint64_t seq;
    std::uint32_t token;
    std::int64_t armed, returned;  // engine clock ns
    TimeoutResult result;
  };
  struct Win {
    std::size_t slot;
    std::uint64_t seq;  // the arming the resolver read the token from
    std::uint32_t token;
    std::int64_t t0, t1;     // engine clock ns around the cancel() call
    const std::string* who;  // ActorState::name or "watchdog": outlives the case
  };

  // ArmingLedger: `resolvers` cancellers (plus the watchdog, one more); `base` is
  // subtracted from engine-clock instants before ctx.at() (the driver's base_).
  ArmingLedger(CaseContext& ctx, std::size_t resolvers, std::int64_t base)
      : ctx_(ctx), base_(base), inflight_(resolvers + 1, kIdle) {}

  // ArmingLedger::add_slot: a waiter's slot named `name` (driver thread, before
  // the actors start); returns its index.
  std::size_t add_slot(const std::string& name, ActorLog& log) {
    slots_.push_back(SlotBook{&name, &log, {}, {}, 0});
    return slots_.size() - 1;
  }
  std::size_t watchdog() const { return inflight_.size() - 1; }

  // ArmingLedger::begin_cancel: resolver `r` is about to call cancel(); returns its
  // t0, read from `now` under the lock.
  template <class Now>
  std::int64_t begin_cancel(std::size_t r, Now now) {
    std::lock_guard lk(mu_);
    return inflight_[r] = now();
  }
  // ArmingLedger::end_cancel: resolver `r`'s cancel() returned; `win` if it won.
  void end_cancel(std::size_t r, const Win* win) {
    std::lock_guard lk(mu_);
    inflight_[r] = kIdle;
    if (win != nullptr) {
      slots_[win->slot].wins.push_back(*win);
      if (*win->who == "watchdog") ++rescues_;
    }
  }

  // ArmingLedger::record: slot `i`'s waiter returned from arming `a`. Credits the
  // wins deposited so far and judges every arming no later win can be credited to.
  void record(std::size_t i, const Arming& a) {
    std::lock_guard lk(mu_);
    slots_[i].open.push_back(a);
    ++slots_[i].armings;
    settle(i, false);
  }
  // ArmingLedger::finish: every resolver and waiter is joined; judges the rest.
  void finish() {
    std::lock_guard lk(mu_);
    for (std::size_t i = 0; i < slots_.size(); ++i) settle(i, true);
  }

  std::uint64_t armings(std::size_t i) const {
    std::lock_guard lk(mu_);
    return slots_[i].armings;
  }
  std::uint64_t rescues() const {
    std::lock_guard lk(mu_);
    return rescues_;
  }

 private:
  static constexpr std::int64_t kIdle = std::numeric_limits<std::int64_t>::max();

  struct Open {
    Arming a;
    std::uint32_t credited = 0;
    const std::string* first_who = nullptr;
    std::int64_t first_t0 = 0, second_t0 = 0;
    const std::string* second_who = nullptr;
    Open(const Arming& x) : a(x) {}  // NOLINT: implicit from an Arming
  };
  struct SlotBook {
    const std::string* name;
    ActorLog* log;             // the waiter's: cancel_to_resume samples
    std::deque<Open> open;     // mu_: armings not yet judged, in arming order
    std::vector<Win> wins;     // mu_: wins not yet credited
    std::uint64_t armings;     // mu_
  };

  void settle(std::size_t i, bool final) {
    SlotBook& b = slots_[i];
    for (const Win& w : b.wins) credit(b, w);
    b.wins.clear();
    std::int64_t oldest = kIdle;
    for (std::int64_t t : inflight_) oldest = std::min(oldest, t);
    while (!b.open.empty() && (final || b.open.front().a.returned < oldest)) {
      judge(b, b.open.front());
      b.open.pop_front();
    }
  }

  void credit(SlotBook& b, const Win& w) {
    Open* hit = nullptr;
    for (Open& o : b.open) {
      if (o.a.token != w.token || o.a.armed > w.t1 || o.a.returned < w.t0) continue;
      if (hit == nullptr || o.a.seq == w.seq) hit = &o;
    }
    if (hit == nullptr) return;  // resolved nothing the waiter returned from
    if (++hit->credited == 1) {
      hit->first_who = w.who;
      hit->first_t0 = w.t0;
    } else if (hit->credited == 2) {
      hit->second_who = w.who;
      hit->second_t0 = w.t0;
    }
    if (hit->a.seq != w.seq) {
      ctx_.violation(
          Oracle::kWrongResult,
          fmt::format("{}: {} read token 0x{:x} of arming {}, stalled, and its resolve at {} "
                      "won arming {} (same token value after the generation wrapped): "
                      "that arming returned {} at {} on a stale token",
                      *b.name, *w.who, w.token, w.seq, ctx_.at(w.t0 - base_), hit->a.seq,
                      name_of(hit->a.result), ctx_.at(hit->a.returned - base_)));
    }
  }

  void judge(SlotBook& b, const Open& o) {
    const Arming& a = o.a;
    if (a.result == TimeoutResult::kCanceled && o.credited == 0) {
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("{}: arming {} (token 0x{:x}, armed at {}) returned CANCELED at "
                                 "{}, but no canceller's resolve of it won",
                                 *b.name, a.seq, a.token, ctx_.at(a.armed - base_),
                                 ctx_.at(a.returned - base_)));
    } else if (o.credited > 0 && a.result == TimeoutResult::kExpired) {
      ctx_.violation(Oracle::kWrongResult,
                     fmt::format("{}: {} won resolve of arming {} (token 0x{:x}) at {}, but the "
                                 "arming returned EXPIRED at {}",
                                 *b.name, *o.first_who, a.seq, a.token, ctx_.at(o.first_t0 - base_),
                                 ctx_.at(a.returned - base_)));
    } else if (o.credited > 1) {
      ctx_.violation(Oracle::kDoubleResume,
                     fmt::format("{}: arming {} (token 0x{:x}) was won by {} resolvers: {} at {} "
                                 "and {} at {}",
                                 *b.name, a.seq, a.token, o.credited, *o.first_who,
                                 ctx_.at(o.first_t0 - base_), *o.second_who,
                                 ctx_.at(o.second_t0 - base_)));
    } else if (o.credited == 1 && *o.first_who != "watchdog") {
      // cancel_to_resume: the winning cancel to the waiter's return.
      b.log->sample(Latency::kCancelToResume, a.returned - o.first_t0);
    }
  }

  CaseContext& ctx_;
  const std::int64_t base_;
  mutable std::mutex mu_;
  std::vector<std::int64_t> inflight_;  // mu_: each resolver's t0, kIdle when not cancelling
  std::deque<SlotBook> slots_;          // the deque's shape: driver thread before the actors
  std::uint64_t rescues_ = 0;           // mu_
};

}  // namespace tlab::tool::runner
