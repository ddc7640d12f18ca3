// tlab/queue/hierarchical_wheel.h: HierarchicalWheelQueue, six 64-slot wheels.
//
// A hierarchical timing wheel in the style of tokio's runtime/time/wheel and the
// Linux timer wheel: six levels of 64 slots; a slot at level l spans 64^l ticks.
// An entry due at tick k, seen from the cursor E (the last tick passed), goes to
// the level of the most significant 6-bit group in which k and E differ, in the
// slot named by k's bits in that group. When the cursor reaches the start of a
// coarse slot, the slot's entries are cascaded: re-placed relative to the new
// cursor, which puts each on a finer level (or on the due list if due right then).
// A 64-bit occupancy bitmap per level finds the next non-empty slot with one
// countr_zero, so idle stretches of any length cost nothing. Tuned for large
// numbers of timers with widely spread deadlines, most of them cancelled before
// they cascade (request timeouts).
//
//   insert      O(1): one xor, one count-leading-zeros, one list push
//   cancel      O(1): unlink from its slot (slab index, no search)
//   expire      O(levels) per occupied slot reached + O(1) per entry cascade; each
//               entry cascades at most 5 times (+1 from the overflow list)
//   next        O(1) amortised: cached; recomputing scans one slot (exact)
//
// Geometry (default tick = 1 ms):
//
//   level   slot width        range of the level
//   0       1 tick   = 1 ms   64 ticks      = 64 ms
//   1       64       = 64 ms  4096          = ~4.1 s
//   2       4096     = ~4.1 s 262144        = ~4.4 min
//   3       2^18     = ~4.4 min 2^24        = ~4.7 h
//   4       2^24     = ~4.7 h 2^30          = ~12.4 days
//   5       2^30     = ~12.4 days 2^36      = ~795 days (~2.2 years)
//   overflow  beyond the cursor's 2^36-tick epoch
//
// Beyond the top level: an entry whose tick differs from the cursor above bit 36
// (it lies in a later 2^36-tick "epoch"; at 1 ms, more than ~795 days away, or
// just across an epoch boundary) goes to an unordered overflow list. When the six
// levels are empty and the cursor reaches the start of the earliest overflow
// entry's epoch, the whole overflow list is re-placed from there (the entries of
// that epoch move into the levels, the rest stay). So an entry fires exactly at
// its due tick however far away it is; Duration::max() deadlines stay on the
// overflow list and never wrap. Cost: one scan of the overflow list per epoch
// crossing that has overflow entries (at 1 ms, once per ~795 days).
//
// Ticks: tick k is QueueConfig::start + k * QueueConfig::tick (queue/tick_grid.h);
// a deadline is rounded UP to its tick, so nothing fires early. A deadline at or
// before the cursor (past, or before `start`) goes to the due list and fires on the
// next expire().
//
// next_deadline() is EXACT: the due instant (tick-rounded) of the earliest entry.
// It is the minimum of the first non-empty of: the due list, the first occupied
// slot of the lowest occupied level (every other entry is in a later slot or a
// higher level, hence later), the overflow list. The value is cached: insert lowers
// it, cancelling the entry it names and expire() invalidate it. Cancel recognises
// that entry by comparing its deadline with the cached due instant, so insert and
// cancel together convert one deadline to a tick, not two.
//
// Where this departs from tokio: tokio clamps deadlines to its top level's range
// (~2 years) instead of keeping an overflow list; tokio's next_expiration reports
// a slot's start (a lower bound), ours the exact earliest tick; and there is no
// driver, expire(now) processes slots in order up to now.
//
// Memory per pending entry, 8-byte payload: node 32 (deadline 8, links 8,
// level+slot 2, payload 8, padding) + slab generation 4 = 36 bytes, plus less than
// one slab chunk of slack (queue/slab.h); fixed 3 KiB of slots.
//
// Ground rules: single owner, no synchronisation. The sink must not call back into
// the queue (insert/cancel/reschedule during expire() fail a TLAB_CHECK).
#pragma once

#include <array>
#include <bit>
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
#include "tlab/queue/tick_grid.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

namespace detail {
// A pending entry of HierarchicalWheelQueue (outside the class so that the SlabQueue base can name
// it).
template <class T>
struct HierarchicalWheelNode {
  Instant deadline;
  std::uint32_t prev = kNilIndex;
  std::uint32_t next = kNilIndex;
  std::uint8_t level = 0;  // 0..5, kOverflow or kDue
  std::uint8_t slot = 0;   // 0..63 when level < kLevels
  T payload{};
};
}  // namespace detail

template <class T, class P = StdPlatform>
class HierarchicalWheelQueue
    : public SlabQueue<HierarchicalWheelQueue<T, P>, detail::HierarchicalWheelNode<T>, P> {
  using Node = detail::HierarchicalWheelNode<T>;
  using Base = SlabQueue<HierarchicalWheelQueue<T, P>, Node, P>;
  friend Base;
  using Base::slab_;

 public:
  using Payload = T;
  static constexpr std::string_view kName = "hierarchical_wheel";
  static constexpr bool kExact = false;             // ticked
  static constexpr bool kExactNextDeadline = true;  // cached, recomputed exactly
  static constexpr std::string_view kSummary =
      "6 levels x 64 slots with occupancy bitmaps; O(1) insert and cancel (tokio, Linux)";
  static constexpr int kLevels = 6;
  static constexpr int kSlotBits = 6;  // 64 slots: one uint64 occupancy word per level
  static constexpr int kSlots = 1 << kSlotBits;
  static constexpr int kEpochBits = kLevels * kSlotBits;  // 36: ticks covered by the levels
  // Node::level values beyond the wheel levels.
  static constexpr std::uint8_t kOverflow = kLevels;
  static constexpr std::uint8_t kDue = kLevels + 1;

  explicit HierarchicalWheelQueue(QueueConfig cfg = {}) : Base(cfg), grid_(cfg.start, cfg.tick) {}

  // tlab::HierarchicalWheelQueue::insert
  // Ensures: the entry is pending and fires in the first expire(now) with
  // now >= start + due_tick(deadline) * tick (or the next expire if that is past).
  TimerHandle insert(Instant deadline, T&& payload) {
    this->check_not_expiring("insert");
    const std::uint32_t i =
        slab_.alloc(Node{deadline, kNilIndex, kNilIndex, 0, 0, std::move(payload)});
    const std::int64_t k = grid_.due_tick(deadline);
    place(i, k);
    if (cache_valid_ && (!cached_next_ || k < *cached_next_)) set_cache(k);
    return slab_.handle(i);
  }

  // tlab::HierarchicalWheelQueue::expire: moves the cursor to elapsed_tick(now),
  // cascading every coarse slot it reaches, and fires every entry due by then in
  // nondecreasing due-tick order (no order within a tick) through
  // sink(T&&, Instant deadline).
  // Requires: now >= start and now >= every earlier expire()'s now (else TLAB_CHECK).
  template <class Sink>
  std::size_t expire(Instant now, Sink&& sink) {
    auto scope = this->begin_expire(now);
    cache_valid_ = false;
    const std::int64_t target = grid_.elapsed_tick(now);
    std::size_t n = ready_.fire(slab_, due_key(), sink, scratch_);
    for (;;) {
      const int level = lowest_occupied_level();
      if (level == kLevels) {
        // The levels are empty: the next thing that can happen is the epoch of the
        // earliest overflow entry beginning.
        if (overflow_.empty()) break;
        const std::int64_t epoch_start = (min_due(overflow_) >> kEpochBits) << kEpochBits;
        if (epoch_start > target) break;
        elapsed_ = epoch_start;
        SlabList all = overflow_.take();
        while (!all.empty()) {
          const std::uint32_t i = all.pop_front(slab_);
          place(i, grid_.due_tick(slab_[i].deadline));
        }
      } else {
        const int slot = std::countr_zero(occupied_[level]);
        const std::int64_t slot_start = slot_start_of(level, slot);
        if (slot_start > target) break;
        elapsed_ = slot_start;
        SlabList entries = take_slot(level, slot);
        while (!entries.empty()) {
          const std::uint32_t i = entries.pop_front(slab_);
          const std::int64_t k = grid_.due_tick(slab_[i].deadline);
          if (level != 0 && P::mutated(Mutant::kHierWheelNoCascade)) {
            to_due_list(i, k);  // mutant: the whole coarse slot fires at its start
          } else {
            place(i, k);  // level 0: k == elapsed_, so the due list; else a finer level
          }
        }
      }
      n += ready_.fire(slab_, due_key(), sink, scratch_);
    }
    elapsed_ = target;
    return n;
  }

  // tlab::HierarchicalWheelQueue::next_deadline: nullopt iff empty; otherwise the
  // exact due instant (start + due_tick * tick) of the earliest entry.
  std::optional<Instant> next_deadline() const {
    if (!cache_valid_) {
      const std::optional<std::int64_t> k = compute_next_tick();
      if (k) {
        set_cache(*k);
      } else {
        cached_next_.reset();
      }
      cache_valid_ = true;
    }
    if (!cached_next_) return std::nullopt;
    return grid_.instant_of(*cached_next_);
  }

  Duration tick() const noexcept { return grid_.tick(); }

  // tlab::HierarchicalWheelQueue::level_of: where a pending entry is: 0..5 a wheel
  // level, kOverflow, or kDue (already due). For tests of the geometry.
  // Requires: contains(h).
  int level_of(TimerHandle h) const {
    TLAB_CHECK(slab_.valid(h), "HierarchicalWheelQueue::level_of: stale handle index=", h.index);
    return slab_[h.index].level;
  }

  // tlab::HierarchicalWheelQueue::check_invariants: every wheel entry is due after
  // the cursor and sits at level_for(cursor, due) in slot slot_of(due, level);
  // occupancy bits match; overflow entries lie in a later epoch; counts add up; a
  // valid next_deadline cache equals a fresh computation.
  void check_invariants() const {
    std::size_t total = 0;
    for (int l = 0; l < kLevels; ++l) {
      for (int s = 0; s < kSlots; ++s) {
        const SlabList& list = slots_[l][s];
        const std::size_t len = list.check_links(slab_, "HierarchicalWheelQueue slot");
        const bool bit = (occupied_[l] >> s) & 1u;
        TLAB_CHECK(bit == (len != 0), "HierarchicalWheelQueue: level ", l, " slot ", s,
                   " occupancy bit=", bit, " length=", len);
        for (std::uint32_t i = list.head; i != kNilIndex; i = slab_[i].next) {
          const std::int64_t k = grid_.due_tick(slab_[i].deadline);
          TLAB_CHECK(k > elapsed_, "HierarchicalWheelQueue: elapsed=", elapsed_, "; due=", k,
                     " at level ", l, " slot ", s);
          TLAB_CHECK(level_for(k) == l && slot_of(k, l) == s, "HierarchicalWheelQueue: due=", k,
                     " elapsed=", elapsed_, " belongs at level ", level_for(k), " slot ",
                     slot_of(k, level_for(k)), " but is at level ", l, " slot ", s);
          TLAB_CHECK(slab_[i].level == l && slab_[i].slot == s,
                     "HierarchicalWheelQueue: node says level ", int{slab_[i].level}, " slot ",
                     int{slab_[i].slot}, " but is at level ", l, " slot ", s);
        }
        total += len;
      }
    }
    total += overflow_.check_links(slab_, "HierarchicalWheelQueue overflow");
    for (std::uint32_t i = overflow_.head; i != kNilIndex; i = slab_[i].next) {
      const std::int64_t k = grid_.due_tick(slab_[i].deadline);
      TLAB_CHECK(k > elapsed_ && level_for(k) >= kLevels && slab_[i].level == kOverflow,
                 "HierarchicalWheelQueue: overflow entry due=", k, " elapsed=", elapsed_,
                 " level_for=", level_for(k), " node level=", int{slab_[i].level});
    }
    total += ready_.check(slab_, due_key(), "HierarchicalWheelQueue due list");
    for (std::uint32_t i = ready_.list().head; i != kNilIndex; i = slab_[i].next) {
      TLAB_CHECK(slab_[i].level == kDue,
                 "HierarchicalWheelQueue: due-list node level=", int{slab_[i].level});
    }
    TLAB_CHECK(total == slab_.live_count(), "HierarchicalWheelQueue: entries found=", total,
               " live=", slab_.live_count());
    if (cache_valid_) {
      const std::optional<std::int64_t> fresh = compute_next_tick();
      TLAB_CHECK(!cached_next_ || cached_due_ == grid_.instant_of(*cached_next_),
                 "HierarchicalWheelQueue: cached due=", cached_due_,
                 " but cached next tick=", *cached_next_);
      TLAB_CHECK(fresh == cached_next_,
                 "HierarchicalWheelQueue: cached next tick=", cached_next_.value_or(-1),
                 " fresh=", fresh.value_or(-1), " has cached=", cached_next_.has_value(),
                 " has fresh=", fresh.has_value());
    }
  }

 private:
  auto due_key() const {
    return [g = grid_](const Node& e) { return g.due_tick(e.deadline); };
  }

  // The level of the most significant 6-bit group in which k and the cursor
  // differ (group 0 if they differ only there or not at all); >= kLevels means
  // k lies in another epoch. Requires: k > elapsed_ >= 0.
  int level_for(std::int64_t k) const noexcept {
    const auto diff = static_cast<std::uint64_t>(k ^ elapsed_) | (kSlots - 1);
    return (63 - std::countl_zero(diff)) / kSlotBits;
  }
  static int slot_of(std::int64_t k, int level) noexcept {
    return static_cast<int>((k >> (level * kSlotBits)) & (kSlots - 1));
  }
  // The first tick of slot `slot` at `level` in the cursor's current block.
  std::int64_t slot_start_of(int level, int slot) const noexcept {
    const int above = (level + 1) * kSlotBits;
    const std::int64_t block = (elapsed_ >> above) << above;
    return block + (static_cast<std::int64_t>(slot) << (level * kSlotBits));
  }
  int lowest_occupied_level() const noexcept {
    for (int l = 0; l < kLevels; ++l) {
      if (occupied_[l] != 0) return l;
    }
    return kLevels;
  }

  void to_due_list(std::uint32_t i, std::int64_t k) {
    slab_[i].level = kDue;
    ready_.push(slab_, i, k);
  }

  // Puts entry i (due at tick k, on no list) where it belongs relative to the cursor.
  void place(std::uint32_t i, std::int64_t k) {
    if (k <= elapsed_) {
      to_due_list(i, k);
      return;
    }
    const int level = level_for(k);
    if (level >= kLevels) {
      slab_[i].level = kOverflow;
      overflow_.push_back(slab_, i);
      return;
    }
    const int slot = slot_of(k, level);
    slab_[i].level = static_cast<std::uint8_t>(level);
    slab_[i].slot = static_cast<std::uint8_t>(slot);
    slots_[level][slot].push_back(slab_, i);
    occupied_[level] |= std::uint64_t{1} << slot;
  }

  void unlink(std::uint32_t i) {
    Node& e = slab_[i];
    // Is e the entry the cache names? Every pending entry is due at or after the
    // cached tick c, i.e. its deadline is past instant_of(c - 1); so its due tick is
    // c iff deadline <= instant_of(c) = cached_due_. Where instant_of saturates the
    // test may say yes for a later entry: that only drops the cache, which is safe.
    if (cache_valid_ && e.deadline <= cached_due_) cache_valid_ = false;
    if (e.level == kDue) {
      ready_.remove(slab_, i);
    } else if (e.level == kOverflow) {
      overflow_.remove(slab_, i);
    } else {
      SlabList& list = slots_[e.level][e.slot];
      list.remove(slab_, i);
      if (list.empty()) occupied_[e.level] &= ~(std::uint64_t{1} << e.slot);
    }
  }

  SlabList take_slot(int level, int slot) noexcept {
    occupied_[level] &= ~(std::uint64_t{1} << slot);
    return slots_[level][slot].take();
  }

  std::int64_t min_due(const SlabList& list) const noexcept {
    std::int64_t m = TickGrid::kNeverTick;
    for (std::uint32_t i = list.head; i != kNilIndex; i = slab_[i].next) {
      const std::int64_t k = grid_.due_tick(slab_[i].deadline);
      if (k < m) m = k;
    }
    return m;
  }

  void set_cache(std::int64_t k) const noexcept {
    cached_next_ = k;
    cached_due_ = grid_.instant_of(k);
  }

  std::optional<std::int64_t> compute_next_tick() const {
    if (!ready_.empty()) return ready_.min_due(slab_, due_key());
    const int level = lowest_occupied_level();
    if (level == 0) return slot_start_of(0, std::countr_zero(occupied_[0]));  // exact tick
    if (level < kLevels) return min_due(slots_[level][std::countr_zero(occupied_[level])]);
    if (!overflow_.empty()) return min_due(overflow_);
    return std::nullopt;
  }

  BasicTickGrid<P> grid_;
  std::array<std::array<SlabList, kSlots>, kLevels> slots_{};
  std::array<std::uint64_t, kLevels> occupied_{};  // bit s of level l: slots_[l][s] non-empty
  SlabList overflow_;                              // entries in a later 2^36-tick epoch
  DueList ready_;                                  // due entries, fired at the start of expire()
  DueList::Scratch scratch_;
  std::int64_t elapsed_ = 0;  // the cursor: every tick <= it has been passed
  // next_deadline() cache (due tick of the earliest entry, nullopt if empty); valid
  // iff cache_valid_. Logically const: only a memo of compute_next_tick().
  mutable std::optional<std::int64_t> cached_next_;
  mutable Instant cached_due_ = Instant::min();  // instant_of(*cached_next_), if any
  mutable bool cache_valid_ = true;
};

}  // namespace tlab
