// tlab/coro/event.h: Event<T, Loop>, a one-shot value that any thread can set
// and a coroutine on the loop can await.
//
// This is seed 004's SharedState {completed, waker} made into an awaitable: the
// producer (any thread) calls set(v); the coroutine waiting for it is handed to
// the loop with EventLoop::post() and resumed on the loop thread. It is also the
// cross-thread awaitable with_timeout() understands natively: while a coroutine
// waits on it under a timeout, the Event holds that race's token and set()
// resolves it, racing the loop's timer (RFC 0014: only the winner resumes).
// Tuned for one producer and one consumer at a time; it is a oneshot, not a
// channel.
//
//   set           one mutex acquisition (+ one resolve CAS and one post if a
//                 coroutine waits)
//   co_await      one mutex acquisition to register, one to read the value
//   withdraw      one mutex acquisition
//
// States (the registration is at most one waiter):
//
//   | state              | set(v)                                | co_await / register   |
//   |--------------------|---------------------------------------|-----------------------|
//   | unset, no waiter   | -> set; returns false                 | -> unset, waiter      |
//   | unset, plain waiter| -> set; post(waiter); returns true    | caller bug (CHECK)    |
//   | unset, race waiter | -> set; resolve(token): win => post,  | caller bug (CHECK)    |
//   |                    |    returns true; lose => returns false|                       |
//   | set                | caller bug (CHECK: set twice)         | ready, no suspension  |
//
// Invariant (check_invariants(), under mu_): a set Event has no registration. set()
// stores the value and takes the registration in one mu_ section, and a register
// checks "unset" and registers in one section, so it holds at every release of mu_
// and any thread may check it. So a coroutine still registered is one whose value
// has not come: if its with_timeout expires, the timeout is deserved. A lost wakeup
// (mutant kCoroEventRegisterAfterCheck: the check and the registration in two
// sections) is a set Event with a registration nobody will resume but the timer.
//
// set() returns true exactly when it resumed a waiter, so a test can check that
// "with_timeout returned the value" == "set() returned true" for every race.
//
// Ground rules: set() and is_set(): any thread. co_await, register_race(),
// withdraw_race() and value(): the loop thread. The Event must outlive every set()
// call and every coroutine awaiting it.
//
// Memory ordering: value_ and the registration are guarded by mu_. A winning
// set() posts the waiter after releasing mu_; post()'s mutex orders the value and
// the slot's outcome before the waiter resumes.
#pragma once

#include <coroutine>
#include <optional>
#include <utility>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/coro/race_slot.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab {

template <class T, class Loop>
class Event {
  using P = typename Loop::Platform;
  using Slot = typename Loop::Slot;

 public:
  explicit Event(Loop& loop) noexcept : loop_(&loop) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    typename P::Lock lock(mu_);
    TLAB_CHECK(reg_.kind == Kind::kNone, "Event destroyed while a coroutine waits on it");
  }

  // tlab::Event::set
  // Requires: not set before (a oneshot; a second set() fails a TLAB_CHECK).
  // Ensures: is_set(); if a coroutine waits, it is posted to the loop, unless it
  // waits under a timeout that has already won. Returns true iff this call
  // resumed a waiter.
  // Thread safety: any thread.
  bool set(T value) {
    std::coroutine_handle<> wake;
    Loop* loop = loop_;
    {
      typename P::Lock lock(mu_);
      TLAB_CHECK(!value_.has_value(), "Event::set called twice");
      value_.emplace(std::move(value));
      const Registration r = std::exchange(reg_, Registration{});
      switch (r.kind) {
        case Kind::kNone:
          return false;
        case Kind::kPlain:
          wake = r.waiter;
          break;
        case Kind::kRace:
          if (!r.slot->token.resolve(r.token)) return false;  // the timer won
          r.slot->outcome = TimeoutResult::kCanceled;
          wake = r.slot->waiter;
          break;
      }
    }
    // Won, not yet scheduled. Nobody else can resume `wake` now: the plain waiter
    // has no other waker and the race's other resolvers lose their CAS.
    P::fault(FaultPoint::kCoroBeforeResume);
    loop->post(wake);
    return true;
  }

  bool is_set() const {
    typename P::Lock lock(mu_);
    return value_.has_value();
  }

  // tlab::Event::value: a copy of the value. Requires: is_set().
  T value() const {
    typename P::Lock lock(mu_);
    TLAB_CHECK(value_.has_value(), "Event::value before set");
    return *value_;
  }

  // tlab::Event::check_invariants: a set Event has no coroutine registered on it
  // (no lost wakeup), observed under mu_. Any time, any thread.
  void check_invariants() const {
    typename P::Lock lock(mu_);
    TLAB_CHECK(!value_.has_value() || reg_.kind == Kind::kNone,
               "Event: set, with a coroutine still registered (kind=",
               static_cast<int>(reg_.kind), "): a lost wakeup");
  }

  // ---- plain wait: `T v = co_await event;` ---------------------------------
  class Awaiter {
   public:
    explicit Awaiter(Event& e) noexcept : event_(&e) {}
    Awaiter(const Awaiter&) = delete;
    Awaiter& operator=(const Awaiter&) = delete;
    // Destroyed while suspended: take the registration back so that a later
    // set() cannot post a dead frame.
    ~Awaiter() {
      if (registered_ && !resumed_) event_->withdraw_plain(waiter_);
    }
    bool await_ready() const { return event_->is_set(); }
    bool await_suspend(std::coroutine_handle<> h) {
      waiter_ = h;
      registered_ = event_->register_plain(h);
      return registered_;  // false: set in the meantime, resume at once
    }
    T await_resume() {
      resumed_ = true;
      return event_->value();
    }

   private:
    Event* event_;
    std::coroutine_handle<> waiter_;
    bool registered_ = false;
    bool resumed_ = false;
  };
  Awaiter operator co_await() noexcept { return Awaiter(*this); }

  // ---- the race protocol, used by with_timeout (loop thread) --------------

  // tlab::Event::register_race: waits under a timeout whose token is `t` on slot
  // `s`. Returns false (registering nothing) if the event is already set.
  bool register_race(Slot* s, CoroToken t) {
    return register_if_unset(Registration{Kind::kRace, {}, s, t});
  }

  // tlab::Event::withdraw_race: the timer won; drop the registration if set() has
  // not taken it already (if it has, that set() lost its CAS and did nothing).
  void withdraw_race(Slot* s, CoroToken t) {
    typename P::Lock lock(mu_);
    if (reg_.kind == Kind::kRace && reg_.slot == s && reg_.token == t) reg_ = Registration{};
  }

 private:
  enum class Kind : unsigned char { kNone, kPlain, kRace };
  struct Registration {
    Kind kind = Kind::kNone;
    std::coroutine_handle<> waiter;  // kPlain
    Slot* slot = nullptr;            // kRace
    CoroToken token{};               // kRace
  };

  bool register_plain(std::coroutine_handle<> h) {
    return register_if_unset(Registration{Kind::kPlain, h, nullptr, {}});
  }
  // Registers `r` unless the value is there; returns whether it registered.
  bool register_if_unset(const Registration& r) {
    typename P::Lock lock(mu_);
    if (value_.has_value()) return false;
    if (P::mutated(Mutant::kCoroEventRegisterAfterCheck)) {
      // BUG (mutant): decided "unset" in this section, registers in the next one;
      // a set() in between finds nobody to resume, and the awaiter waits for a
      // value that is already there.
      lock.unlock();
      P::fault(FaultPoint::kCoroBeforeRegister);
      lock.lock();
    } else {
      P::fault(FaultPoint::kCoroBeforeRegister);  // under mu_: no set() gets in
    }
    TLAB_CHECK(reg_.kind == Kind::kNone, "Event: a second coroutine waits on a oneshot");
    reg_ = r;
    return true;
  }
  void withdraw_plain(std::coroutine_handle<> h) {
    typename P::Lock lock(mu_);
    if (reg_.kind == Kind::kPlain && reg_.waiter == h) reg_ = Registration{};
  }

  Loop* const loop_;
  mutable typename P::Mutex mu_;
  std::optional<T> value_ TLAB_GUARDED_BY(mu_);
  Registration reg_ TLAB_GUARDED_BY(mu_);
};

}  // namespace tlab
