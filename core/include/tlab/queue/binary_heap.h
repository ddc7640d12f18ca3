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
// a heap element is 16 bytes (deadline + slot index + tie-break sequence), so a
// node's four children are one contiguous 64-byte run, and a 4-ary heap is half
// as deep. Sift-down, the operation expire() does per fired timer, touches half as
// many levels, each costing one run of four compares that mostly share a cache line
// (LaMarca & Ladner, "The influence of caches on the performance of heaps", 1996).
// Sift-up (insert) gets cheaper too: half the levels, one compare each.
//
// The tie-break sequence is 32 bits and lives in the heap element, in what was its
// padding: a tie on the deadline is decided without touching the slab, and the
// node shrinks to (heap position, payload). 32 bits wrap after 2^32 inserts, so
// before the counter would wrap, renumber_sequences() replaces every pending
// entry's sequence by its rank among them (0..n-1) and the counter restarts at n:
// a rank map is strictly increasing, so every (deadline, seq) comparison, and
// hence the heap order, is unchanged (check_invariants() re-proves it). One O(n
// log n) pass per 2^32 - n inserts: amortised nothing.
//
// Memory per pending entry, with an 8-byte payload: heap element 16 + slab node 16
// (heap position 4 + payload 8, padded) + slab generation 4 = 36 bytes. The heap
// array is a SegmentedVector (queue/segmented_vector.h): past its first 4096
// elements it grows by 64 KiB blocks that never move, so it wastes less than two
// blocks where a std::vector's doubling left up to half its capacity unused
// (`tlab compare` at 10M pending, the adapter's 8-byte handles included: 62.9 bytes
// per timer before this and the seq move, 44.0 after). The price is one more
// dependent load per element access (the block pointer): insert+cancel at 1M
// pending, the best of 8 interleaved runs of a 5M-operation loop (g++ -O2, 2
// cores, 2026-11-27): 18.3 ns before, 15.1 ns with the seq moved but a
// std::vector, 20.8 ns with both (the seq move pays for most of the block
// indexing).
//
// Ground rules: single owner, no synchronisation. The sink must not call back into
// the queue (insert/cancel/reschedule during expire() fail a TLAB_CHECK).
#pragma once

#include <algorithm>
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
#include "tlab/queue/segmented_vector.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

namespace detail {
// A pending entry of BinaryHeapQueue (outside the class so that the SlabQueue base can name it).
template <class T>
struct BinaryHeapNode {
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

  explicit BinaryHeapQueue(QueueConfig cfg = {}) : Base(cfg) {}

  // tlab::BinaryHeapQueue::insert
  // Ensures: the entry is pending and orders after every entry inserted before it
  // with the same deadline; returns its handle.
  TimerHandle insert(Instant deadline, T&& payload) {
    this->check_not_expiring("insert");
    if (next_seq_ == kLastSeq) renumber_sequences();
    const std::uint32_t i = slab_.alloc(Node{0, std::move(payload)});
    const std::size_t pos = heap_.size();
    heap_.push_back(Elem{deadline, i, next_seq_++});
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
                   " deadline=", heap_[pos].deadline, " seq=", heap_[pos].seq,
                   " orders before parent pos=", parent, " deadline=", heap_[parent].deadline,
                   " seq=", heap_[parent].seq);
      }
      TLAB_CHECK(heap_[pos].seq < next_seq_, "BinaryHeapQueue: seq=", heap_[pos].seq,
                 " not below the next sequence ", next_seq_);
    }
  }

  // tlab::BinaryHeapQueue::renumber_sequences: gives the pending entries the
  // sequences 0..size()-1 in their present (seq) order and restarts the counter at
  // size(). Order-preserving, so the heap stays valid and FIFO ties stay FIFO.
  // insert() calls it before the 32-bit counter would wrap; public so that a test
  // can drive it (with set_next_sequence) without 2^32 inserts. O(n log n).
  void renumber_sequences() {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_seq;  // (seq, heap position)
    by_seq.reserve(heap_.size());
    for (std::size_t pos = 0; pos < heap_.size(); ++pos) {
      by_seq.emplace_back(heap_[pos].seq, static_cast<std::uint32_t>(pos));
    }
    std::sort(by_seq.begin(), by_seq.end());
    for (std::size_t rank = 0; rank < by_seq.size(); ++rank) {
      heap_[by_seq[rank].second].seq = static_cast<std::uint32_t>(rank);
    }
    next_seq_ = static_cast<std::uint32_t>(by_seq.size());
  }
  // tlab::BinaryHeapQueue::set_next_sequence: for tests of the wrap. Requires: seq
  // is above every pending entry's sequence (else TLAB_CHECK), so order is kept.
  void set_next_sequence(std::uint32_t seq) {
    for (std::size_t pos = 0; pos < heap_.size(); ++pos) {
      TLAB_CHECK(heap_[pos].seq < seq, "BinaryHeapQueue::set_next_sequence: ", seq,
                 " is not above pending seq ", heap_[pos].seq);
    }
    next_seq_ = seq;
  }
  std::uint32_t next_sequence() const noexcept { return next_seq_; }

 private:
  struct Elem {
    Instant deadline;
    std::uint32_t index;  // slab slot
    std::uint32_t seq;    // insertion order among pending entries: the FIFO tie-break
  };
  // The counter never reaches this: insert() renumbers first (size() < 2^32 - 1,
  // since slab indices are 32-bit with one reserved).
  static constexpr std::uint32_t kLastSeq = 0xFFFF'FFFFu;
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
    return x.seq < y.seq;
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

  SegmentedVector<Elem, 4, 12> heap_;  // blocks of up to 4096 elements (64 KiB)
  std::uint32_t next_seq_ = 0;         // above every pending entry's seq
};

}  // namespace tlab
