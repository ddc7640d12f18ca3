// tlab/queue/hashed_wheel.h: HashedWheelQueue, a hashed timing wheel with rounds.
//
// Netty's HashedWheelTimer as a pure data structure: a ring of S buckets (S =
// QueueConfig::wheel_slots rounded up to a power of two), one tick each. An entry
// due at tick k goes to bucket k mod S and remembers how many more times the
// cursor must pass that bucket before it is due ("remaining rounds"). Each tick
// visits one bucket: entries with 0 rounds fire, the others lose a round. Tuned
// for many short timeouts that are mostly cancelled (connection and request
// timeouts): insert and cancel are O(1) whatever the spread of deadlines, at the
// price of visiting far-future entries once per revolution.
//
//   insert      O(1): bucket k mod S, rounds = (k - elapsed - 1) / S
//   cancel      O(1): unlink from the bucket (slab index, no search)
//   expire      O(occupied buckets passed + entries in them), at most one visit of
//               each bucket per call (see "jumps" below); O(1) per fired entry
//   next        O(S / 64): next occupied bucket via the occupancy bitmap. A LOWER
//               BOUND: that bucket's tick, though its entries may have rounds left
//
// Ticks: tick k is QueueConfig::start + k * QueueConfig::tick (queue/tick_grid.h);
// a deadline is rounded UP to its tick, so nothing fires early, and it fires in
// the first expire() whose `now` reaches that tick. A deadline at or before the
// cursor (already past, or before `start`) goes to the due list and fires on the
// next expire(), whatever its `now`.
//
// Where this departs from Netty (Varghese & Lauck scheme 6 with rounds):
//   - No worker thread and no fixed tick cadence: expire(now) catches the cursor up
//     to now. Empty buckets are skipped with a 64-bit occupancy bitmap per 64
//     buckets, and an empty wheel just moves the cursor.
//   - Jumps: when one expire() passes S ticks or more, each bucket is visited once
//     and the number of passes v it would have had is computed directly: an entry
//     fires iff rounds < v, else loses v rounds. Fired entries are then sorted by
//     due tick so the sink still sees nondecreasing due order.
//   - Netty's deadline is relative to its worker's start time; ours to
//     QueueConfig::start, so equal inputs give equal ticks in every strategy.
//
// Memory per pending entry, 8-byte payload: node 32 (deadline 8, rounds 8, links
// 8, payload 8) + slab generation 4 = 36 bytes, plus less than one slab chunk of
// slack (queue/slab.h); plus 8 bytes + 1 bit per bucket.
//
// Ground rules: single owner, no synchronisation. The sink must not call back into
// the queue (insert/cancel/reschedule during expire() fail a TLAB_CHECK).
#pragma once

#include <bit>
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
#include "tlab/queue/tick_grid.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

namespace detail {
// A pending entry of HashedWheelQueue (outside the class so that the SlabQueue base can name it).
template <class T>
struct HashedWheelNode {
  Instant deadline;
  std::int64_t rounds = 0;  // passes of its bucket left, or kOnDueList
  std::uint32_t prev = kNilIndex;
  std::uint32_t next = kNilIndex;
  T payload{};
};
}  // namespace detail

template <class T, class P = StdPlatform>
class HashedWheelQueue : public SlabQueue<HashedWheelQueue<T, P>, detail::HashedWheelNode<T>, P> {
  using Node = detail::HashedWheelNode<T>;
  using Base = SlabQueue<HashedWheelQueue<T, P>, Node, P>;
  friend Base;
  using Base::slab_;

 public:
  using Payload = T;
  static constexpr std::string_view kName = "hashed_wheel";
  static constexpr bool kExact = false;              // ticked
  static constexpr bool kExactNextDeadline = false;  // a lower bound: the next occupied bucket
  static constexpr std::string_view kSummary =
      "hashed wheel with rounds; O(1) insert and cancel (Netty HashedWheelTimer)";
  // 2^24 buckets is 128 MiB of list heads: far past any sensible wheel.
  static constexpr std::uint32_t kMaxSlots = 1u << 24;

  explicit HashedWheelQueue(QueueConfig cfg = {}) : Base(cfg), grid_(cfg.start, cfg.tick) {
    TLAB_CHECK(cfg.wheel_slots >= 1 && cfg.wheel_slots <= kMaxSlots,
               "HashedWheelQueue: wheel_slots out of range, wheel_slots=", cfg.wheel_slots);
    slots_ = std::bit_ceil(cfg.wheel_slots);
    shift_ = std::countr_zero(slots_);
    mask_ = slots_ - 1;
    buckets_.resize(slots_);
    occupied_.resize((slots_ + 63) / 64);
  }

  // tlab::HashedWheelQueue::insert
  // Ensures: the entry is pending and fires in the first expire(now) with
  // now >= start + due_tick(deadline) * tick (or the next expire if that is past).
  TimerHandle insert(Instant deadline, T&& payload) {
    this->check_not_expiring("insert");
    const std::uint32_t i =
        slab_.alloc(Node{deadline, 0, kNilIndex, kNilIndex, std::move(payload)});
    place(i);
    return slab_.handle(i);
  }

  // tlab::HashedWheelQueue::expire: moves the cursor to elapsed_tick(now) and fires
  // every entry due by then, in nondecreasing due-tick order (no order within a
  // tick), through sink(T&&, Instant deadline).
  // Requires: now >= start and now >= every earlier expire()'s now (else TLAB_CHECK).
  template <class Sink>
  std::size_t expire(Instant now, Sink&& sink) {
    auto scope = this->begin_expire(now);
    const std::int64_t target = grid_.elapsed_tick(now);
    // Entries already due (past deadlines, or left over by a throwing sink) are all
    // due at or before the cursor, so before anything still in the wheel.
    std::size_t n = ready_.fire(slab_, due_key(), sink, scratch_);
    if (target - elapsed_ >= static_cast<std::int64_t>(slots_) && in_wheel_ != 0) {
      jump_to(target);
      return n + ready_.fire(slab_, due_key(), sink, scratch_);
    }
    // Less than a revolution: visit the occupied buckets in tick order.
    while (in_wheel_ != 0) {
      const std::int64_t t = next_occupied_tick();
      if (t > target) break;
      visit(t);
      elapsed_ = t;
      n += ready_.fire(slab_, due_key(), sink, scratch_);
    }
    elapsed_ = target;
    return n;
  }

  // tlab::HashedWheelQueue::next_deadline: nullopt iff empty; otherwise a lower
  // bound on the earliest due instant: the earliest due entry's tick if one is
  // already due, else the tick of the next occupied bucket.
  std::optional<Instant> next_deadline() const {
    if (!ready_.empty()) return grid_.instant_of(ready_.min_due(slab_, due_key()));
    if (in_wheel_ == 0) return std::nullopt;
    return grid_.instant_of(next_occupied_tick());
  }

  Duration tick() const noexcept { return grid_.tick(); }
  std::uint32_t slots() const noexcept { return slots_; }

  // tlab::HashedWheelQueue::rounds_of: remaining rounds of a pending entry (-1 when
  // it is already on the due list). For tests of the geometry.
  // Requires: contains(h).
  std::int64_t rounds_of(TimerHandle h) const {
    TLAB_CHECK(slab_.valid(h), "HashedWheelQueue::rounds_of: stale handle index=", h.index);
    return slab_[h.index].rounds;
  }

  // tlab::HashedWheelQueue::check_invariants: every wheel entry sits in bucket
  // due mod S with rounds == (due - next visit of that bucket) / S and due >
  // cursor; occupancy bits match; due-list entries are due; counts add up.
  void check_invariants() const {
    std::size_t wheel = 0;
    for (std::uint32_t b = 0; b < slots_; ++b) {
      const SlabList& list = buckets_[b];
      const std::size_t len = list.check_links(slab_, "HashedWheelQueue bucket");
      TLAB_CHECK(is_occupied(b) == (len != 0), "HashedWheelQueue: bucket ", b,
                 " occupancy bit=", is_occupied(b), " length=", len);
      const std::int64_t visit = first_visit(b);
      for (std::uint32_t i = list.head; i != kNilIndex; i = slab_[i].next) {
        const Node& e = slab_[i];
        const std::int64_t k = grid_.due_tick(e.deadline);
        TLAB_CHECK(k > elapsed_, "HashedWheelQueue: entry due at or before the cursor in bucket ",
                   b, " due=", k, " elapsed=", elapsed_);
        TLAB_CHECK(static_cast<std::uint32_t>(k & mask_) == b, "HashedWheelQueue: entry due=", k,
                   " in bucket ", b, " slots=", slots_);
        TLAB_CHECK(e.rounds == ((k - visit) >> shift_), "HashedWheelQueue: rounds=", e.rounds,
                   " due=", k, " next visit=", visit, " slots=", slots_);
      }
      wheel += len;
    }
    TLAB_CHECK(wheel == in_wheel_, "HashedWheelQueue: bucket entries=", wheel,
               " in_wheel=", in_wheel_);
    const std::size_t ready = ready_.check(slab_, due_key(), "HashedWheelQueue due list");
    for (std::uint32_t i = ready_.list().head; i != kNilIndex; i = slab_[i].next) {
      TLAB_CHECK(slab_[i].rounds == kOnDueList,
                 "HashedWheelQueue: due-list entry rounds=", slab_[i].rounds);
    }
    TLAB_CHECK(wheel + ready == slab_.live_count(), "HashedWheelQueue: wheel=", wheel,
               " due list=", ready, " live=", slab_.live_count());
  }

 private:
  static constexpr std::int64_t kOnDueList = -1;  // Node::rounds of a due-list entry

  auto due_key() const {
    return [g = grid_](const Node& e) { return g.due_tick(e.deadline); };
  }

  bool is_occupied(std::uint32_t b) const noexcept { return (occupied_[b >> 6] >> (b & 63)) & 1u; }

  // The first tick after the cursor that visits bucket b.
  std::int64_t first_visit(std::uint32_t b) const noexcept {
    return elapsed_ + 1 + ((static_cast<std::int64_t>(b) - (elapsed_ + 1)) & mask_);
  }

  // The tick of the first occupied bucket after the cursor. Requires: in_wheel_ != 0.
  std::int64_t next_occupied_tick() const noexcept {
    const std::uint32_t from = static_cast<std::uint32_t>((elapsed_ + 1) & mask_);
    const std::size_t words = occupied_.size();
    std::size_t w = from >> 6;
    std::uint64_t bits = occupied_[w] & (~std::uint64_t{0} << (from & 63));
    for (std::size_t k = 0; k <= words; ++k) {
      if (bits != 0) {
        return first_visit(static_cast<std::uint32_t>((w << 6) + std::countr_zero(bits)));
      }
      w = (w + 1) % words;
      bits = occupied_[w];
    }
    TLAB_CHECK(false, "HashedWheelQueue: in_wheel=", in_wheel_, " but no bucket is occupied");
    return 0;
  }

  // Puts a freshly allocated (or re-placed) entry into its bucket or the due list.
  void place(std::uint32_t i) {
    Node& e = slab_[i];
    const std::int64_t k = grid_.due_tick(e.deadline);
    if (k <= elapsed_) {
      e.rounds = kOnDueList;
      ready_.push(slab_, i, k);
      return;
    }
    const auto b = static_cast<std::uint32_t>(k & mask_);
    e.rounds = (k - elapsed_ - 1) >> shift_;
    buckets_[b].push_back(slab_, i);
    occupied_[b >> 6] |= std::uint64_t{1} << (b & 63);
    ++in_wheel_;
  }

  void unlink(std::uint32_t i) {
    Node& e = slab_[i];
    if (e.rounds == kOnDueList) {
      ready_.remove(slab_, i);
      return;
    }
    unlink_from_bucket(static_cast<std::uint32_t>(grid_.due_tick(e.deadline) & mask_), i);
  }

  void unlink_from_bucket(std::uint32_t b, std::uint32_t i) {
    buckets_[b].remove(slab_, i);
    if (buckets_[b].empty()) occupied_[b >> 6] &= ~(std::uint64_t{1} << (b & 63));
    --in_wheel_;
  }

  void move_to_due_list(std::uint32_t b, std::uint32_t i) {
    unlink_from_bucket(b, i);
    slab_[i].rounds = kOnDueList;
    ready_.push(slab_, i, grid_.due_tick(slab_[i].deadline));
  }

  // One pass of the cursor over the bucket of tick t: 0 rounds fire, others lose one.
  void visit(std::int64_t t) {
    const auto b = static_cast<std::uint32_t>(t & mask_);
    for (std::uint32_t i = buckets_[b].head; i != kNilIndex;) {
      const std::uint32_t next = slab_[i].next;
      if (slab_[i].rounds == 0 || P::mutated(Mutant::kHashedWheelIgnoreRounds)) {
        move_to_due_list(b, i);  // mutant: fires with rounds left, revolutions early
      } else {
        --slab_[i].rounds;
      }
      i = next;
    }
  }

  // A jump of at least one revolution: each bucket is visited once, and its
  // entries are charged all the passes v the cursor makes over it up to target.
  void jump_to(std::int64_t target) {
    for (std::uint32_t b = 0; b < slots_; ++b) {
      if (!is_occupied(b)) continue;
      const std::int64_t first = first_visit(b);  // <= elapsed_ + S <= target
      const std::int64_t passes = ((target - first) >> shift_) + 1;
      for (std::uint32_t i = buckets_[b].head; i != kNilIndex;) {
        const std::uint32_t next = slab_[i].next;
        if (slab_[i].rounds < passes || P::mutated(Mutant::kHashedWheelIgnoreRounds)) {
          move_to_due_list(b, i);
        } else {
          slab_[i].rounds -= passes;
        }
        i = next;
      }
    }
    elapsed_ = target;
  }

  BasicTickGrid<P> grid_;
  std::uint32_t slots_ = 0;  // S, a power of two
  std::uint32_t shift_ = 0;  // log2(S)
  std::int64_t mask_ = 0;    // S - 1
  std::vector<SlabList> buckets_;
  std::vector<std::uint64_t> occupied_;  // bit b set iff buckets_[b] is non-empty
  std::size_t in_wheel_ = 0;             // entries in buckets (not on the due list)
  std::int64_t elapsed_ = 0;             // the cursor: every tick <= it has been visited
  DueList ready_;                        // due entries, fired at the start of expire()
  DueList::Scratch scratch_;
};

}  // namespace tlab
