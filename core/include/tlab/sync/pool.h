// tlab/sync/pool.h: a fixed set of objects checked out with a timeout.
//
// Pool<T, P> owns a fixed set of T (connections, buffers) and lends them out:
// checkout_for(timers, d) returns a Lease, an RAII handle that gives the object
// back when destroyed, or nullopt if none came free within d. It is the RFC 0014
// motivating example ("try to checkout a connection from the pool and fail after 5
// seconds"), built on TimedSemaphore (one permit per free object) plus a free list.
// Tuned for small pools of expensive objects; lending order is LIFO (the most
// recently returned object, still warm, goes out first).
//
// Cost: checkout = TimedSemaphore::acquire_for + one lock to pop the free list.
// Return = one lock to push, holding it over TimedSemaphore::release (so the push
// and its permit are one step for every observer, see the state table).
//
// State (free_ and taken_ under mu_; the semaphore's count, list and `granted`
// under its own lock; a return pushes and releases inside one mu_ section):
//
//   | step                         | free_ | permits | in transit | section       |
//   |------------------------------|-------|---------|------------|---------------|
//   | return, nobody queued        | +1    | +1      |            | mu_ (+ sem's) |
//   | return, a borrower queued    | +1    |         | +1         | mu_ (+ sem's) |
//   | checkout takes a free permit |       | -1      | +1         | sem's         |
//   | checkout pops its object     | -1    |         | -1         | mu_           |
//
// "In transit" = permits granted (semaphore stats().granted) minus objects popped
// (taken_): borrowers that hold a permit and have not yet taken their object. The
// objects they will take are claimed; the others on free_ are unclaimed.
//
// Invariants (check_invariants(), under mu_ then the semaphore's lock; they hold at
// every release of mu_, so any thread may check them at any time):
//   - conservation: free_.size() == permits available + in transit; so a holder of
//     a permit always finds an object (take() also TLAB_CHECKs it);
//   - no lost wakeup: an unclaimed object on the free list never coexists with a
//     queued borrower (with conservation, the semaphore's own invariant). So a
//     borrower whose expiry fires while queued saw no unclaimed object: its timeout
//     is deserved. Mutant kPoolSignalOnEmptyOnly breaks it (an object returned
//     without its permit: a queued borrower waits to its timeout with it free).
//
// Ground rules: objects live in the pool for its whole life (addresses are stable;
// a Lease refers to one). Leases are move-only and may be returned from any thread.
// The pool must outlive every Lease and every checkout_for() in progress; the
// destructor checks that everything came back. Lock order: mu_ -> the semaphore's
// lock -> a Waiter's mutex; checkout never holds mu_ while it waits.
//
// Memory ordering: the free list is under mu_; a returned object's writes reach the
// next borrower through mu_ and through the semaphore's hand-off.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tlab/base/annotations.h"
#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/sync/timed_semaphore.h"
#include "tlab/timer_source.h"
#include "tlab/waiter.h"

namespace tlab {

template <class T, class P, unsigned Bits = 32>
class Pool {
 public:
  using WaiterT = Waiter<P, Bits>;

  // A checked-out object. Returns it to the pool on destruction or reset().
  class Lease {
   public:
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), obj_(o.obj_) {}
    Lease& operator=(Lease&& o) noexcept {
      if (this != &o) {
        reset();
        pool_ = std::exchange(o.pool_, nullptr);
        obj_ = o.obj_;
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { reset(); }

    T& operator*() const noexcept { return *obj_; }
    T* operator->() const noexcept { return obj_; }
    T* get() const noexcept { return pool_ ? obj_ : nullptr; }

    // tlab::Pool::Lease::reset: gives the object back now; later calls do nothing.
    void reset() {
      if (pool_ != nullptr) std::exchange(pool_, nullptr)->give_back(obj_);
    }

   private:
    friend class Pool;
    Lease(Pool* pool, T* obj) noexcept : pool_(pool), obj_(obj) {}
    Pool* pool_;
    T* obj_;
  };

  // tlab::Pool::Pool: takes ownership of `objects`; the pool's size is fixed.
  // Requires: objects.size() < 2^32.
  explicit Pool(std::vector<T> objects)
      : objects_(std::move(objects)), sem_(static_cast<std::uint32_t>(objects_.size())) {
    free_.reserve(objects_.size());
    for (T& o : objects_) free_.push_back(&o);
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    typename P::Lock lk(mu_);
    TLAB_CHECK(free_.size() == objects_.size(),
               "Pool destroyed with leases out: free=", free_.size(), " size=", objects_.size());
  }

  // tlab::Pool::checkout_for
  // Returns a Lease on a free object, waiting up to `d` on the timers' clock for
  // one to be returned; nullopt if none came free in time.
  // Requires: d >= 0 (else std::invalid_argument).
  // Thread safety: any thread; `self` must not be in use by another wait.
  template <TimerSource S>
  std::optional<Lease> checkout_for(S& timers, Duration d) {
    return checkout_for(timers, d, this_thread_waiter<P, Bits>());
  }
  template <TimerSource S>
  std::optional<Lease> checkout_for(S& timers, Duration d, WaiterT& self) {
    if (!sem_.acquire_for(timers, d, self)) return std::nullopt;
    return take();
  }

  // tlab::Pool::try_checkout: a Lease iff an object is free now. Never blocks.
  std::optional<Lease> try_checkout() {
    if (!sem_.try_acquire()) return std::nullopt;
    return take();
  }

  std::size_t size() const noexcept { return objects_.size(); }
  std::size_t available() const {
    typename P::Lock lk(mu_);
    return free_.size();
  }
  const TimedSemaphore<P, Bits>& semaphore() const noexcept { return sem_; }

  // tlab::Pool::unclaimed: objects on the free list that no permit holder is about
  // to take (free minus in transit, see the state table). Snapshot.
  std::size_t unclaimed() const {
    typename P::Lock lk(mu_);
    const auto s = sem_.stats();
    return free_.size() - static_cast<std::size_t>(s.granted - taken_);
  }

  // tlab::Pool::check_invariants: conservation and no lost wakeup (file comment),
  // observed atomically under mu_ and the semaphore's lock. Any time, any thread.
  void check_invariants() const {
    typename P::Lock lk(mu_);
    sem_.check_invariants();
    const auto s = sem_.stats();  // under mu_: no return can run between the reads
    TLAB_CHECK(s.granted >= taken_, "Pool: popped=", taken_, " > permits granted=", s.granted);
    const std::uint64_t in_transit = s.granted - taken_;
    TLAB_CHECK(free_.size() == s.available + in_transit, "Pool: free=", free_.size(),
               " != permits available=", s.available, " + in transit=", in_transit);
    TLAB_CHECK(free_.size() == in_transit || s.waiting == 0, "Pool: unclaimed objects=",
               free_.size() - in_transit, " with borrowers queued=", s.waiting);
  }

 private:
  Lease take() {
    typename P::Lock lk(mu_);
    TLAB_CHECK(!free_.empty(), "Pool: a permit without a free object");
    T* obj = free_.back();
    free_.pop_back();
    ++taken_;
    return Lease(this, obj);
  }

  // Pushes and releases in one mu_ section (lock order mu_ -> the semaphore's), so
  // no observer under mu_ sees an object without its permit or hand-off.
  void give_back(T* obj) {
    typename P::Lock lk(mu_);
    const bool was_empty = free_.empty();
    free_.push_back(obj);
    if (P::mutated(Mutant::kPoolSignalOnEmptyOnly) && !was_empty) {
      // BUG (mutant): "only the empty -> non-empty transition can have a waiter to
      // wake": the object is on the free list, its permit never released, and a
      // borrower queued on the semaphore waits to its timeout with it free.
      return;
    }
    sem_.release();  // with the push: a permit always finds its object
  }

  std::vector<T> objects_;  // fixed after construction; never resized
  TimedSemaphore<P, Bits> sem_;
  mutable typename P::Mutex mu_;
  std::vector<T*> free_ TLAB_GUARDED_BY(mu_);
  std::uint64_t taken_ TLAB_GUARDED_BY(mu_) = 0;  // objects popped by take(), ever
};

}  // namespace tlab
