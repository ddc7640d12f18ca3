// tlab/queue/sorted_list.h: SortedListQueue, the O(n)-insert baseline.
//
// One doubly linked list of pending entries kept sorted by (deadline, insertion
// order). It is Varghese & Lauck's scheme 1 ("straightforward", 1987): the row of
// their complexity table that every other strategy is measured against. It is
// tuned for nothing except being obviously right; ship it only for tiny queues.
//
//   insert      O(n) worst case: walks back from the tail past later deadlines
//               (O(1) when deadlines arrive in order, as with a fixed timeout)
//   cancel      O(1): unlink by slot index
//   expire      O(1) per fired entry: pops from the head
//   next        O(1): the head
//
// Departs from the paper only in storage: nodes sit in a generation-checked Slab
// (queue/slab.h), so handles are {index, generation} and stale ones are refused.
// Exact: tick() is 1 ns; due(d) = d. Equal deadlines fire FIFO because a new
// entry is linked AFTER every entry with the same deadline.
//
// Ground rules: single owner, no synchronisation. The sink must not call back into
// the queue (insert/cancel/reschedule during expire() fail a TLAB_CHECK).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/slab.h"
#include "tlab/queue/slab_list.h"
#include "tlab/queue/slab_queue.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

namespace detail {
// A pending entry of SortedListQueue (outside the class so that the SlabQueue base can name it).
template <class T>
struct SortedListNode {
  Instant deadline;
  std::uint32_t prev = kNilIndex;
  std::uint32_t next = kNilIndex;
  T payload{};
};
}  // namespace detail

template <class T, class P = StdPlatform>
class SortedListQueue : public SlabQueue<SortedListQueue<T, P>, detail::SortedListNode<T>, P> {
  using Node = detail::SortedListNode<T>;
  using Base = SlabQueue<SortedListQueue<T, P>, Node, P>;
  friend Base;
  using Base::slab_;

 public:
  using Payload = T;
  static constexpr std::string_view kName = "sorted_list";
  static constexpr bool kExact = true;              // 1 ns tick, FIFO ties
  static constexpr bool kExactNextDeadline = true;  // the head
  static constexpr std::string_view kSummary =
      "sorted doubly linked list; O(n) insert, O(1) cancel (the baseline)";

  explicit SortedListQueue(QueueConfig cfg = {}) : Base(cfg) {}

  // tlab::SortedListQueue::insert
  // Ensures: the entry is pending; returns its handle. O(distance from the tail).
  TimerHandle insert(Instant deadline, T&& payload) {
    this->check_not_expiring("insert");
    const std::uint32_t i = slab_.alloc(Node{deadline, kNilIndex, kNilIndex, std::move(payload)});
    // Walk back from the tail to the last entry with deadline <= the new one.
    std::uint32_t pos = list_.tail;
    std::uint32_t after = kNilIndex;  // the entry the new one goes in front of
    while (pos != kNilIndex && slab_[pos].deadline > deadline) {
      after = pos;
      pos = slab_[pos].prev;
    }
    list_.insert_before(slab_, after, i);
    return slab_.handle(i);
  }

  // tlab::SortedListQueue::expire: fires every entry with deadline <= now, in
  // (deadline, insertion) order, through sink(T&&, Instant deadline).
  // Requires: now >= start and now >= every earlier expire()'s now (else TLAB_CHECK).
  template <class Sink>
  std::size_t expire(Instant now, Sink&& sink) {
    auto scope = this->begin_expire(now);
    // Detach the due prefix first, then deliver it (fire_all is throw-safe).
    SlabList due;
    while (!list_.empty() && slab_[list_.head].deadline <= now) {
      due.push_back(slab_, list_.pop_front(slab_));
    }
    return fire_all(slab_, due, sink);
  }

  std::optional<Instant> next_deadline() const {
    if (list_.empty()) return std::nullopt;
    return slab_[list_.head].deadline;
  }
  Duration tick() const noexcept { return Duration::nanoseconds(1); }

  // tlab::SortedListQueue::check_invariants: links consistent, sorted, count == size.
  void check_invariants() const {
    const std::size_t n = list_.check_links(slab_, "SortedListQueue");
    TLAB_CHECK(n == slab_.live_count(), "SortedListQueue: list length=", n,
               " live=", slab_.live_count());
    for (std::uint32_t i = list_.head; i != kNilIndex && slab_[i].next != kNilIndex;
         i = slab_[i].next) {
      TLAB_CHECK(slab_[i].deadline <= slab_[slab_[i].next].deadline,
                 "SortedListQueue: out of order at slot ", i, " deadline=", slab_[i].deadline,
                 " next=", slab_[slab_[i].next].deadline);
    }
  }

 private:
  // Takes live entry i off the list (SlabQueue frees the slot).
  void unlink(std::uint32_t i) noexcept { list_.remove(slab_, i); }

  SlabList list_;  // sorted by (deadline, insertion order)
};

}  // namespace tlab
