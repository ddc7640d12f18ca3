// tlab/queue/binary_heap.h: BinaryHeapQueue, an indexed 4-ary min-heap of timers.
//
// The priority queue of java.util.Timer's TaskQueue, Boost.Asio's timer_queue and
// ScheduledThreadPoolExecutor's DelayedWorkQueue: an array heap ordered by
// (deadline, insertion sequence), where every node remembers its position in the
// heap so that cancel() removes it in O(log n) instead of leaving a tombstone
// (java.util.Timer's purge() problem). Exact: tick() is 1 ns and due(d) = d; the
// sequence number makes equal deadlines fire FIFO, which a bare heap does not.
//
//   insert      O(log4 n): append, sift up
//   cancel      O(log4 n): swap with the last element, sift up or down
//   expire      O(log4 n) per fired entry: pop the root
//   next        O(1): the root
//
// Why 4-ary, not binary (where this departs from the lineage above, all binary):
// a heap element is 16 bytes (deadline + slot index), so a node's four children
// are one contiguous 64-byte run, and a 4-ary heap is half as deep. Sift-down,
// the operation expire() does per fired timer, touches half as many levels, each
// costing one run of four compares that mostly share a cache line (LaMarca &
// Ladner, "The influence of caches on the performance of heaps", 1996). Sift-up
// (insert) gets cheaper too: half the levels, one compare each.
//
// Memory per pending entry, with an 8-byte payload: heap element 16 (Instant +
// slot index + padding) + slab node 24 (seq 8 + heap position 4 + payload 8, padded)
// + slab generation 4 = 44 bytes, plus the heap vector's growth slack (none with
// capacity_hint; the slab itself grows by chunks, queue/slab.h). The
// sequence lives in the node, not in the heap element: only a tie on the deadline
// needs it, and keeping elements at 16 bytes is what puts four children in 64 bytes.
//
// Ground rules: single owner, no synchronisation. The sink must not call back into
// the queue (insert/cancel/reschedule during expire() fail a TLAB_CHECK).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/slab.h"
#include "tlab/queue/slab_list.h"
#include "tlab/queue/slab_queue.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

namespace detail {
// A pending entry of BinaryHeapQueue (outside the class so that the SlabQueue base can name it).
template <class T>
struct BinaryHeapNode {
  std::uint64_t seq = 0;  // insertion order, the FIFO tie-break
  std::uint32_t pos = 0;  // index of this entry's Elem in heap_
  T payload{};
};
}  // namespace detail

template <class T, class P = StdPlatform>
class BinaryHeapQueue : public SlabQueue<BinaryHeapQueue<T, P>, detail::BinaryHeapNode<T>, P> {
  using Node = detail::BinaryHeapNode<T>;
  using Base = SlabQueue<BinaryHeapQueue<T, P>, Node, P>;
  friend Base;
  using Base::slab_;

 public:
  using Payload = T;
  static constexpr std::string_view kName = "binary_heap";
  static constexpr bool kExact = true;              // 1 ns tick, FIFO ties
  static constexpr bool kExactNextDeadline = true;  // the root
  static constexpr std::string_view kSummary =
      "indexed 4-ary min-heap; O(log n) insert and cancel (java.util.Timer, asio)";
  // Children of position i are kArity*i+1 .. kArity*i+kArity.
  static constexpr std::size_t kArity = 4;

  explicit BinaryHeapQueue(QueueConfig cfg = {}) : Base(cfg) {
    if (cfg.capacity_hint != 0) heap_.reserve(cfg.capacity_hint);
  }

  // tlab::BinaryHeapQueue::insert
  // Ensures: the entry is pending and orders after every entry inserted before it
  // with the same deadline; returns its handle.
  TimerHandle insert(Instant deadline, T&& payload) {
    this->check_not_expiring("insert");
    const std::uint32_t i = slab_.alloc(Node{next_seq_++, 0, std::move(payload)});
    const std::size_t pos = heap_.size();
    heap_.push_back(Elem{deadline, i});
    slab_[i].pos = static_cast<std::uint32_t>(pos);
    sift_up(pos);
    return slab_.handle(i);
  }

  // tlab::BinaryHeapQueue::expire: fires every entry with deadline <= now, in
  // (deadline, insertion) order, through sink(T&&, Instant deadline).
  // Requires: now >= start and now >= every earlier expire()'s now (else TLAB_CHECK).
  template <class Sink>
  std::size_t expire(Instant now, Sink&& sink) {
    auto scope = this->begin_expire(now);
    std::size_t n = 0;
    while (!heap_.empty() && heap_[0].deadline <= now) {
      const Elem top = heap_[0];
      remove_at(0);
      T payload = std::move(slab_[top.index].payload);
      slab_.free(top.index);
      ++n;
      sink(std::move(payload), top.deadline);
    }
    return n;
  }

  std::optional<Instant> next_deadline() const {
    if (heap_.empty()) return std::nullopt;
    return heap_[0].deadline;
  }
  Duration tick() const noexcept { return Duration::nanoseconds(1); }

  // tlab::BinaryHeapQueue::check_invariants: positions agree both ways, every
  // parent orders before its children, heap size == live slab entries.
  void check_invariants() const {
    TLAB_CHECK(heap_.size() == slab_.live_count(), "BinaryHeapQueue: heap size=", heap_.size(),
               " live=", slab_.live_count());
    for (std::size_t pos = 0; pos < heap_.size(); ++pos) {
      const std::uint32_t i = heap_[pos].index;
      TLAB_CHECK(slab_.live(i), "BinaryHeapQueue: dead slot ", i, " at pos ", pos);
      TLAB_CHECK(slab_[i].pos == pos, "BinaryHeapQueue: slot ", i, " thinks pos=", slab_[i].pos,
                 " but is at ", pos);
      if (pos != 0) {
        const std::size_t parent = (pos - 1) / kArity;
        TLAB_CHECK(!before(pos, parent), "BinaryHeapQueue: child pos=", pos,
                   " deadline=", heap_[pos].deadline, " seq=", slab_[i].seq,
                   " orders before parent pos=", parent, " deadline=", heap_[parent].deadline,
                   " seq=", slab_[heap_[parent].index].seq);
      }
    }
  }

 private:
  struct Elem {
    Instant deadline;
    std::uint32_t index;  // slab slot
  };
  static_assert(sizeof(Elem) == 16, "four children must fit one 64-byte run");

 public:
  // Bytes a pending entry costs at steady state, without vector growth slack:
  // slab node + heap element + the slab's 4-byte generation.
  static constexpr std::size_t kBytesPerEntry = sizeof(Node) + sizeof(Elem) + 4;

 private:
  // True iff the element at heap position a must fire before the one at b.
  bool before(std::size_t a, std::size_t b) const noexcept {
    const Elem& x = heap_[a];
    const Elem& y = heap_[b];
    if (x.deadline != y.deadline) return x.deadline < y.deadline;
    if (P::mutated(Mutant::kHeapUnstableTies)) return false;  // mutant: ties unordered
    return slab_[x.index].seq < slab_[y.index].seq;
  }

  void place(std::size_t pos, const Elem& e) noexcept {
    heap_[pos] = e;
    slab_[e.index].pos = static_cast<std::uint32_t>(pos);
  }
  void swap_at(std::size_t a, std::size_t b) noexcept {
    const Elem ea = heap_[a];
    place(a, heap_[b]);
    place(b, ea);
  }

  void sift_up(std::size_t pos) noexcept {
    while (pos != 0) {
      const std::size_t parent = (pos - 1) / kArity;
      if (!before(pos, parent)) break;
      swap_at(pos, parent);
      pos = parent;
    }
  }

  void sift_down(std::size_t pos) noexcept {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = kArity * pos + 1;
      if (first >= n) break;
      const std::size_t last = first + kArity < n ? first + kArity : n;
      std::size_t best = first;
      for (std::size_t c = first + 1; c < last; ++c) {
        if (before(c, best)) best = c;
      }
      if (!before(best, pos)) break;
      swap_at(pos, best);
      pos = best;
    }
  }

  // Takes live entry i out of the heap (SlabQueue frees the slot).
  void unlink(std::uint32_t i) noexcept { remove_at(slab_[i].pos); }

  // Removes the element at heap position pos (its slab slot stays allocated).
  void remove_at(std::size_t pos) noexcept {
    const std::size_t last = heap_.size() - 1;
    if (pos != last) {
      place(pos, heap_[last]);
      heap_.pop_back();
      // The moved element may belong above or below pos; at most one sift moves it.
      if (pos != 0 && before(pos, (pos - 1) / kArity)) {
        sift_up(pos);
      } else {
        sift_down(pos);
      }
    } else {
      heap_.pop_back();
    }
  }

  std::vector<Elem> heap_;
  std::uint64_t next_seq_ = 0;  // 2^64 inserts never wrap in practice
};

}  // namespace tlab
