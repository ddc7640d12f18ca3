// tlab/queue/slab_queue.h: the handle-level operations every slab-backed queue shares.
//
// SlabQueue<Derived, Node, P> is a CRTP base holding a strategy's Slab<Node> and the
// bookkeeping of the firing contract that does not depend on the strategy: cancel,
// reschedule, contains, size, the time-never-goes-backwards check and the re-entry
// guard. A strategy (BinaryHeapQueue, SortedListQueue, HashedWheelQueue,
// HierarchicalWheelQueue) supplies only `insert(Instant, T&&)` and
// `unlink(std::uint32_t slot)`, which takes a live entry out of its structure
// without freeing the slot. Node must have a `payload` member.
//
//   cancel      O(1) + Derived::unlink
//   reschedule  Derived::unlink + Derived::insert (the entry counts as newly inserted)
//   contains    O(1): generation check
//
// Ground rules: single owner, no synchronisation. The sink passed to expire() must
// not call back into the queue: insert/cancel/reschedule during expire() fail a
// TLAB_CHECK (Derived::insert calls check_not_expiring()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/mutant.h"
#include "tlab/queue/slab.h"
#include "tlab/queue/slab_list.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

template <class Derived, class Node, class P>
class SlabQueue {
 public:
  // tlab::SlabQueue::cancel
  // Ensures: returns true iff h was pending; it then never fires. A null, fired,
  // cancelled or reused-slot handle returns false.
  bool cancel(TimerHandle h) {
    check_not_expiring("cancel");
    if (!slab_.valid(h)) return false;
    if (P::mutated(Mutant::kQueueCancelLeaksEntry)) return true;  // mutant: entry stays queued
    self().unlink(h.index);
    slab_.free(h.index);
    return true;
  }

  // tlab::SlabQueue::reschedule
  // Ensures: returns true iff h was pending; the entry then counts as newly inserted
  // at `deadline` (on exact strategies, FIFO behind equal deadlines) and h names it;
  // the old value of h is stale.
  bool reschedule(TimerHandle& h, Instant deadline) {
    check_not_expiring("reschedule");
    if (!slab_.valid(h)) return false;
    self().unlink(h.index);
    auto payload = std::move(slab_[h.index].payload);
    slab_.free(h.index);
    h = self().insert(deadline, std::move(payload));
    return true;
  }

  std::size_t size() const noexcept { return slab_.live_count(); }
  bool empty() const noexcept { return slab_.live_count() == 0; }
  bool contains(TimerHandle h) const noexcept { return slab_.valid(h); }

 protected:
  explicit SlabQueue(const QueueConfig& cfg) : last_now_(cfg.start) {
    if (cfg.capacity_hint != 0) slab_.reserve(cfg.capacity_hint);
  }

  void check_not_expiring(const char* op) const {
    TLAB_CHECK(!expiring_, Derived::kName, "::", op, " called from inside expire()'s sink");
  }

  // tlab::SlabQueue::begin_expire: the start of every expire(now).
  // Requires: now >= start and now >= every earlier expire()'s now; otherwise time
  // is going backwards and TLAB_CHECK fails with both instants (never clamped).
  // Ensures: returns the guard that marks the expire() span (keep it alive).
  [[nodiscard]] ExpireScope begin_expire(Instant now) {
    TLAB_CHECK(now >= last_now_, Derived::kName,
               "::expire: time going backwards last_now=", last_now_, " now=", now);
    last_now_ = now;
    return ExpireScope(expiring_);
  }

  Slab<Node> slab_;

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }

  Instant last_now_;       // the latest expire()'s now (QueueConfig::start at first)
  bool expiring_ = false;  // true while expire() runs
};

}  // namespace tlab
