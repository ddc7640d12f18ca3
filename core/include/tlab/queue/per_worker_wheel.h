// tlab/queue/per_worker_wheel.h: PerWorkerWheelQueue, the single-owner worker-local
// wheel of seed 003, with generation-checked LAZY cancel.
//
// A hashed ring of power-of-two buckets (QueueConfig::wheel_slots, rounded up), one
// tick (QueueConfig::tick) per bucket, ticks counted from QueueConfig::start. An entry
// for deadline d is due at tick ceil((d - start) / tick) (tick_grid.h: rounding UP is
// what forbids early fire) and lives in bucket due_tick & mask, carrying
// (deadline, generation, slot index, payload): the seed's (deadline_tick,
// generation, handle_ptr), with the tick recomputed from the deadline where it is
// needed (one multiply, tick_grid.h) rather than stored: 8 bytes less per entry. It is tuned for the seed's workload: timers that are
// mostly cancelled before they fire (timeouts), where unlinking on cancel is the cost
// to avoid. cancel() bumps the slot's generation (Slab::free), counts garbage and
// destroys the entry's payload; the bucket keeps the now-stale entry, a payload-
// less tombstone, until a drain, a compaction or a scrub walks past it.
//
//   insert      O(1) amortised: push_back into the bucket
//   cancel      O(1): slab free + two counter increments + the payload moved out
//               of its entry (found by the slot's (bucket, pos)) and destroyed;
//               the entry stays in its bucket
//   reschedule  O(1): tombstone the old entry in place, push into the new bucket
//   expire      O(ticks elapsed + entries in the visited buckets), at most one
//               revolution of buckets; a longer gap sweeps each bucket once
//   scrub(k)    O(entries in k buckets)
//   take_all    O(entries): empties the wheel (worker stop)
//   next        O(S / 64): the next bucket holding a live entry, from the live-
//               bucket bitmap. A LOWER BOUND: that bucket's tick, though its live
//               entries may be a round or more further out
//
// Geometry with the defaults (512 slots): 1 ms tick -> 512 ms per revolution; 100 us
// tick -> 51.2 ms. Entries further out than a revolution share their bucket with
// nearer ones ("rounds", as in Netty's HashedWheelTimer): a drain fires only the
// entries whose due tick has come and keeps the rest.
//
// Memory: a bucket is a SegmentedVector (queue/segmented_vector.h), not a
// std::vector: 512 vectors each doubling left about 0.7x of the entries unused on
// average, and 10M pending timers cost 73.7 bytes each in `tlab compare` (with the
// adapter's 8-byte handle, and a 32-byte entry holding the due tick); with blocks
// of at most 256 entries and no stored tick, 44. Per pending entry: entry 24
// (deadline, slot index, generation, payload 8) + slab node 8 + generation 4.
//
// next_deadline() (what TimerService asks after every schedule): live_bits_ has bit b
// set iff ring bucket b holds at least one live entry, i.e. buckets_[b].size() >
// stale_[b]. insert sets the bit; a cancel or reschedule that leaves the bucket all
// stale clears it (O(1): stale_[b] is exact); drains and scrubs recompute it. The
// first set bit at or after the cursor, searched 64 buckets per word with
// countr_zero (queue/bucket_bitmap.h), is the next tick at which a live entry can be
// due: every live ring entry is due after the cursor and no earlier than its
// bucket's next visit. Buckets holding only garbage are skipped, so a mostly-
// cancelled wheel does not wake its owner for them. The overdue bucket is not in
// the bitmap: overdue_min_ is the smallest due tick put there since it was last
// emptied (every expire() empties it), a lower bound for its entries. The bound is
// exact when the first live bucket's earliest live entry is due this revolution;
// it is early by whole revolutions for entries further out, and by ticks when that
// bucket's only due-now entries are stale (the owner then wakes, drains, and asks
// again). Before the bitmap this was an O(entries) scan, stale entries included,
// twice per TimerService schedule: engine_bench's schedule+cancel took 27 us at 1K
// pending and 120 us at 100K; with the bitmap, 0.9 us at both (Release, 2 CPUs);
// with payloads released at cancel (below), 0.3 us: the cancelled tasks no longer
// pile up in the heap.
//
// Stale-entry accounting (the seed's "Garbage Tracking"; the executor's cross-thread
// striped counters live in executor/striped_counter.h, this is the owner-local half):
//   stale_[b]   exact number of stale entries (cancelled, rescheduled away) in bucket
//               b; check_invariants() recounts it.
//   garbage_    sum of stale_[]: stale entries anywhere in the wheel.
// Draining bucket b at its tick fires the due live entries and drops the due stale
// ones. Not-yet-due entries are kept after comparing their due tick only, which is a
// sequential read of the bucket. Telling a not-yet-due entry stale costs a
// random read of its slab slot, so the drain does that ("lazy compaction": the
// bucket is rebuilt with only live entries) only when stale_[b] >= kCompactMinStale
// and stale_[b] * kCompactRatio >= bucket size. With a ratio of 4 the rebuild pays at
// most 4 slot reads per stale entry it removes, so its cost is amortised O(1) per
// cancel; the minimum of 8 keeps small buckets on the cheap path, where their few
// stale entries die anyway when they come due. scrub(budget) visits the next
// `budget` buckets round-robin and rebuilds those over the same threshold: the
// seed's background scrub for far-future buckets that no drain reaches soon.
//
// Payload retention (the bug class of tokio#8252, netty#5647, grpc-java#1307): the
// payload lives in the bucket entry, and a lazily cancelled entry may stay in its
// bucket until its deadline's tick comes round, which may be arbitrarily far away.
// So cancel() and reschedule() move the old entry's payload out, leave T{} in its
// place and mark the entry a tombstone (index == kTombstone; no extra byte); the
// payload is destroyed before they return, with the queue already consistent, so
// its destructor may call back into the queue. Bound: whenever no call is under
// way, held_payloads() == size(): no stale entry holds a payload, so a dead timer
// costs its entry (sizeof(Entry), with a T{}) until a drain, compaction or scrub
// drops it, never what its payload owned. Hence T must be default-constructible.
// Before this, a TimerService on this wheel kept every cancelled task, and all its
// callback captured, until the task's deadline: ~700 MB under sustained
// schedule+cancel where every other strategy held nothing.
//
// Where it departs from seed 003: the seed keeps a VecDeque per bucket and the
// generation in a shared handle; here the generation is the slab slot's (queue/
// slab.h, 32-bit, same ABA bound) because this queue is single-owner. The seed's
// stale entry holds its Arc until it is dropped; here cancel drops the payload
// and only the generation-checked tombstone waits (see "Payload retention").
// scrub_if() lets an owner whose payloads carry their own liveness (the executor:
// a timer cancelled from another thread) drop those entries too.
//
// Mutants: kWheelNoGenerationCheck (a due stale entry fires: fired after cancel;
// it keeps cancelled payloads, the seed's way, so that there is one to fire),
// kQueueCancelLeaksEntry (cancel returns true but leaves the entry live),
// kWheelBitmapClearOnCancel (cancel clears the bucket's live bit although live
// entries remain: next_deadline() skips them and an owner that sleeps until it
// fires them late), kWheelRetainCancelledPayload (cancel keeps the payload in the
// stale entry until a drain drops it: memory retention).
//
// Ground rules: single owner, no synchronisation. Sinks run after the due entries
// have been removed, so a sink may call back into the queue; an entry it inserts that
// is already due fires on the next expire().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/clock.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/bucket_bitmap.h"
#include "tlab/queue/segmented_vector.h"
#include "tlab/queue/slab.h"
#include "tlab/queue/tick_grid.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

template <class T, class P = StdPlatform>
class PerWorkerWheelQueue {
 public:
  using Payload = T;
  static_assert(std::is_default_constructible_v<T> && std::is_move_assignable_v<T>,
                "PerWorkerWheelQueue: a tombstone holds T{} (see Payload retention)");
  static constexpr std::string_view kName = "per_worker_wheel";
  static constexpr bool kExact = false;              // ticked
  static constexpr bool kExactNextDeadline = false;  // a lower bound: the next live bucket
  static constexpr std::string_view kSummary =
      "worker-local wheel with generation-checked lazy cancel (seed 003)";
  // Rebuild a bucket only when it holds at least this many stale entries...
  static constexpr std::uint32_t kCompactMinStale = 8;
  // ...and at least 1/kCompactRatio of its entries are stale (see the header).
  static constexpr std::uint32_t kCompactRatio = 4;

  struct Counters {
    std::uint64_t compactions = 0;     // buckets rebuilt during a drain
    std::uint64_t scrub_rebuilds = 0;  // buckets rebuilt by scrub()/scrub_if()
    std::uint64_t stale_dropped = 0;   // stale entries removed by any path
  };

  explicit PerWorkerWheelQueue(QueueConfig cfg = {})
      : grid_(cfg.start, cfg.tick), last_now_(cfg.start) {
    std::uint32_t n = 2;
    while (n < cfg.wheel_slots) {
      TLAB_CHECK(n <= (1u << 30), "PerWorkerWheelQueue: wheel_slots too large: ", cfg.wheel_slots);
      n <<= 1;
    }
    mask_ = n - 1;
    buckets_.resize(n + 1);  // + the overdue bucket
    stale_.assign(n + 1, 0);
    live_bits_ = BucketBitmap(n);
    if (cfg.capacity_hint != 0) slab_.reserve(cfg.capacity_hint);
  }

  // tlab::PerWorkerWheelQueue::insert: adds `payload` due at `deadline`.
  // Ensures: the entry fires in the first expire(now) with now >= due(deadline).
  TimerHandle insert(Instant deadline, T payload) {
    const std::int64_t due = grid_.due_tick(deadline);
    const std::uint32_t b = bucket_for(due);
    const std::uint32_t i = slab_.alloc(Node{b, 0});
    place(i, b, due, deadline, std::move(payload));
    return slab_.handle(i);
  }

  // tlab::PerWorkerWheelQueue::cancel: lazily cancels h.
  // Ensures: returns true iff h was pending; then it never fires and its payload has
  // been destroyed. The bucket entry stays where it is, a tombstone counted in
  // stale_[its bucket] and garbage().
  bool cancel(TimerHandle h) {
    if (!slab_.valid(h)) return false;
    if (P::mutated(Mutant::kQueueCancelLeaksEntry)) return true;  // bug: entry stays live
    const Node n = slab_[h.index];
    Entry& e = buckets_[n.bucket][n.pos];
    TLAB_DCHECK(e.index == h.index && e.generation == h.generation,
                "PerWorkerWheelQueue: node position out of date, pos=", n.pos);
    mark_stale(n.bucket);
    slab_.free(h.index);  // bumps the slot generation: the bucket entry is now stale
    if (P::mutated(Mutant::kWheelRetainCancelledPayload) ||
        P::mutated(Mutant::kWheelNoGenerationCheck)) {
      return true;  // BUG (mutants): the stale entry keeps its payload until dropped
    }
    [[maybe_unused]] const T dropped = take_payload(e);  // destroyed on return
    return true;
  }

  // tlab::PerWorkerWheelQueue::reschedule: moves pending h to `deadline`; h stays
  // valid. Returns false (and does nothing) if h is not pending.
  bool reschedule(TimerHandle h, Instant deadline) {
    if (!slab_.valid(h)) return false;
    Node& n = slab_[h.index];
    Entry& old = buckets_[n.bucket][n.pos];
    TLAB_DCHECK(old.index == h.index && old.generation == h.generation,
                "PerWorkerWheelQueue: node position out of date, pos=", n.pos);
    T payload = take_payload(old);  // the old entry is a stale tombstone from now on
    mark_stale(n.bucket);
    const std::int64_t due = grid_.due_tick(deadline);
    const std::uint32_t b = bucket_for(due);
    n.bucket = b;
    place(h.index, b, due, deadline, std::move(payload));
    return true;
  }

  // tlab::PerWorkerWheelQueue::expire: fires every entry due at `now`.
  // Requires: now >= the previous expire()'s now (and >= QueueConfig::start).
  // Ensures: sink(payload, deadline) for each, in nondecreasing due() order; due
  // stale entries in the visited buckets are dropped. Returns the number fired.
  template <class Sink>
  std::size_t expire(Instant now, Sink&& sink) {
    TLAB_CHECK(now >= last_now_,
               "PerWorkerWheelQueue::expire: time going backwards last=", last_now_, " now=", now);
    last_now_ = now;
    P::fault(FaultPoint::kQueueBeforeExpire);
    const std::int64_t now_tick = grid_.elapsed_tick(now);
    std::vector<Entry> batch;
    batch.swap(batch_);  // reuse capacity; a re-entrant expire() gets an empty one
    batch.clear();
    drain(overdue(), now_tick, batch);  // everything there is due (<= cursor_)
    const std::uint64_t gap =
        static_cast<std::uint64_t>(now_tick) - static_cast<std::uint64_t>(cursor_);
    if (now_tick > cursor_ && gap > mask_) {
      for (std::uint32_t b = 0; b <= mask_; ++b) drain(b, now_tick, batch);
    } else {
      for (std::int64_t t = cursor_ + 1; t <= now_tick; ++t) {
        drain(static_cast<std::uint32_t>(static_cast<std::uint64_t>(t) & mask_), t, batch);
      }
    }
    if (now_tick > cursor_) cursor_ = now_tick;
    const auto by_due = [this](const Entry& a, const Entry& b) {
      return grid_.due_tick(a.deadline) < grid_.due_tick(b.deadline);
    };
    if (!std::is_sorted(batch.begin(), batch.end(), by_due)) {
      std::stable_sort(batch.begin(), batch.end(), by_due);
    }
    for (Entry& e : batch) sink(std::move(e.payload), e.deadline);
    const std::size_t fired = batch.size();
    batch.clear();
    batch_.swap(batch);
    return fired;
  }

  // tlab::PerWorkerWheelQueue::next_deadline: nullopt iff empty; otherwise a lower
  // bound on the earliest live entry's due() instant: overdue_min_'s tick if the
  // overdue bucket holds a live entry, else the next visit of the first bucket with
  // a live entry (see the header). O(S / 64).
  std::optional<Instant> next_deadline() const {
    if (slab_.live_count() == 0) return std::nullopt;
    if (has_live(overdue())) return grid_.instant_of(overdue_min_);
    return grid_.instant_of(next_live_tick());
  }

  std::size_t size() const noexcept { return slab_.live_count(); }
  bool empty() const noexcept { return size() == 0; }
  bool contains(TimerHandle h) const noexcept { return slab_.valid(h); }
  Duration tick() const noexcept { return grid_.tick(); }

  // Stale entries anywhere in the wheel (owner-local garbage counter).
  std::size_t garbage() const noexcept { return garbage_; }
  // Number of ring buckets (a power of two; the overdue bucket is not counted).
  std::size_t bucket_count() const noexcept { return mask_ + 1; }
  // Entries, live and stale, physically held (memory the garbage costs).
  std::size_t stored_entries() const noexcept {
    std::size_t n = 0;
    for (const auto& bucket : buckets_) n += bucket.size();
    return n;
  }
  // Entries, live and stale, that hold a payload. O(entries). Equals size() whenever
  // no call is under way (see "Payload retention"); tests compare the two.
  std::size_t held_payloads() const noexcept {
    std::size_t n = 0;
    for (const auto& bucket : buckets_) {
      for (std::size_t k = 0; k < bucket.size(); ++k) n += bucket[k].index != kTombstone ? 1 : 0;
    }
    return n;
  }
  // Stale entries in the bucket that tick `t` maps to.
  std::uint32_t stale_in_bucket_of_tick(std::int64_t t) const noexcept {
    return stale_[static_cast<std::uint64_t>(t) & mask_];
  }
  const Counters& counters() const noexcept { return counters_; }

  // tlab::PerWorkerWheelQueue::scrub: visits the next `budget` buckets round-robin
  // and rebuilds each whose stale count passes the compaction threshold.
  // Returns the number of stale entries removed.
  std::size_t scrub(std::size_t budget) {
    return scrub_if(budget, [](const T&) { return false; });
  }

  // tlab::PerWorkerWheelQueue::scrub_if: scrub(), and also removes every live entry
  // in the visited buckets whose payload satisfies `is_garbage` (garbage the owner
  // knows of that the queue does not, e.g. a timer cancelled from another thread).
  // Those entries are freed as if cancelled: they never reach a sink. Returns the
  // number of entries removed (stale + is_garbage).
  template <class Pred>
  std::size_t scrub_if(std::size_t budget, Pred&& is_garbage) {
    std::size_t removed = 0;
    const std::size_t visits = std::min<std::size_t>(budget, mask_ + 1);
    for (std::size_t k = 0; k < visits; ++k) {
      const std::uint32_t b = scrub_cursor_;
      scrub_cursor_ = (scrub_cursor_ + 1) & mask_;
      auto& v = buckets_[b];
      const bool rebuild = over_threshold(b);
      std::size_t w = 0;
      const std::size_t before = v.size();
      for (std::size_t r = 0; r < v.size(); ++r) {
        Entry& e = v[r];
        if (!truly_live(e)) {
          if (rebuild) {
            drop_stale(b);
            continue;
          }
        } else if (is_garbage(std::as_const(e.payload))) {
          slab_.free(e.index);
          continue;
        }
        keep(v, r, w);
      }
      v.truncate(w);
      update_live_bit(b);
      removed += before - w;
      if (rebuild) ++counters_.scrub_rebuilds;
    }
    return removed;
  }

  // tlab::PerWorkerWheelQueue::take_all: moves every live entry out to
  // sink(payload, deadline), in no particular order, and leaves the queue empty
  // (stale entries are dropped). The executor's "swap out the wheel" on worker stop.
  // Returns the number of entries handed out.
  template <class Sink>
  std::size_t take_all(Sink&& sink) {
    std::size_t n = 0;
    for (auto& bucket : buckets_) {
      for (std::size_t k = 0; k < bucket.size(); ++k) {
        Entry& e = bucket[k];
        if (!truly_live(e)) {
          ++counters_.stale_dropped;
          continue;
        }
        slab_.free(e.index);
        sink(std::move(e.payload), e.deadline);
        ++n;
      }
      bucket.clear();
    }
    std::fill(stale_.begin(), stale_.end(), 0u);
    live_bits_.reset();
    overdue_min_ = TickGrid::kNeverTick;
    garbage_ = 0;
    return n;
  }

  // tlab::PerWorkerWheelQueue::for_each: calls f(payload, deadline) for every live
  // entry, in no particular order. O(entries).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& bucket : buckets_) {
      for (std::size_t k = 0; k < bucket.size(); ++k) {
        const Entry& e = bucket[k];
        if (truly_live(e)) f(e.payload, e.deadline);
      }
    }
  }

  // tlab::PerWorkerWheelQueue::check_invariants: per-bucket stale counters equal the
  // actual stale entries, garbage_ is their sum, every live slot has exactly one live
  // entry, at its recorded (bucket, pos), in the bucket its due_tick maps to; a ring
  // bucket's live bit is set iff it holds a live entry; no overdue entry is due
  // before overdue_min_.
  void check_invariants() const {
    std::size_t live_entries = 0;
    std::size_t total_stale = 0;
    for (std::uint32_t b = 0; b < buckets_.size(); ++b) {
      std::uint32_t stale = 0;
      for (std::size_t pos = 0; pos < buckets_[b].size(); ++pos) {
        const Entry& e = buckets_[b][pos];
        if (!truly_live(e)) {
          ++stale;
          continue;
        }
        ++live_entries;
        const std::int64_t due_tick = grid_.due_tick(e.deadline);
        const Node& n = slab_[e.index];
        TLAB_CHECK(n.bucket == b && n.pos == pos, "PerWorkerWheelQueue: slot ", e.index,
                   " records bucket=", n.bucket, " pos=", n.pos, " but sits at bucket=", b,
                   " pos=", pos);
        if (b == overdue()) {
          TLAB_CHECK(due_tick >= overdue_min_,
                     "PerWorkerWheelQueue: overdue entry due_tick=", due_tick,
                     " < overdue_min=", overdue_min_);
          TLAB_CHECK(due_tick <= cursor_,
                     "PerWorkerWheelQueue: overdue entry due_tick=", due_tick,
                     " > cursor=", cursor_);
        } else {
          TLAB_CHECK((static_cast<std::uint64_t>(due_tick) & mask_) == b,
                     "PerWorkerWheelQueue: due_tick=", due_tick, " in bucket ", b);
          TLAB_CHECK(due_tick > cursor_,
                     "PerWorkerWheelQueue: missed entry due_tick=", due_tick,
                     " cursor=", cursor_);
        }
      }
      TLAB_CHECK(stale == stale_[b], "PerWorkerWheelQueue: bucket ", b,
                 " stale counter=", stale_[b], " actual=", stale);
      if (b != overdue()) {
        TLAB_CHECK(live_bits_.test(b) == (buckets_[b].size() > stale),
                   "PerWorkerWheelQueue: bucket ", b, " live bit=", live_bits_.test(b),
                   " entries=", buckets_[b].size(), " stale=", stale);
      }
      total_stale += stale;
    }
    TLAB_CHECK(total_stale == garbage_, "PerWorkerWheelQueue: garbage=", garbage_,
               " actual stale=", total_stale);
    TLAB_CHECK(live_entries == slab_.live_count(),
               "PerWorkerWheelQueue: live entries=", live_entries, " size=", slab_.live_count());
  }

 private:
  static constexpr std::uint32_t kTombstone = TimerHandle::kNoIndex;

  struct Node {
    std::uint32_t bucket = 0;  // where this slot's live entry sits...
    std::uint32_t pos = 0;     // ...and at which index (kept up to date on moves)
  };
  // A bucket entry. A tombstone (index == kTombstone: cancelled or rescheduled
  // away) holds a value-initialized T, nothing the payload owned (take_payload()).
  struct Entry {
    Instant deadline;  // its due tick is grid_.due_tick(deadline)
    std::uint32_t index;       // slab slot, or kTombstone once the payload is taken
    std::uint32_t generation;  // the slot's generation when the entry was written
    T payload;
  };

  // Blocks of 8 entries doubling to 256 (6 KiB with an 8-byte payload): a bucket
  // of a few entries costs what a vector would; a full one wastes < 512 entries.
  using Bucket = SegmentedVector<Entry, 3, 8>;

  std::uint32_t overdue() const noexcept { return mask_ + 1; }

  // Moves e's payload out and makes e a tombstone. Assigning T{} ends whatever a
  // moved-from T may still own (a type without a move constructor copies), so the
  // tombstone owns nothing once the returned payload is destroyed.
  static T take_payload(Entry& e) {
    TLAB_DCHECK(e.index != kTombstone, "PerWorkerWheelQueue: payload taken twice");
    T out(std::move(e.payload));
    e.payload = T{};
    e.index = kTombstone;
    return out;
  }

  // Entries already due when inserted go to the overdue bucket, which every expire()
  // drains first: a wheel bucket is only visited when its tick comes round again.
  std::uint32_t bucket_for(std::int64_t due) const noexcept {
    if (due <= cursor_) return overdue();
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(due) & mask_);
  }

  void place(std::uint32_t i, std::uint32_t b, std::int64_t due, Instant deadline, T payload) {
    auto& v = buckets_[b];
    slab_[i].pos = static_cast<std::uint32_t>(v.size());
    v.push_back(Entry{deadline, i, slab_.generation(i), std::move(payload)});
    if (b == overdue()) {
      overdue_min_ = std::min(overdue_min_, due);
    } else {
      live_bits_.set(b);
    }
  }

  bool has_live(std::uint32_t b) const noexcept { return buckets_[b].size() > stale_[b]; }

  // Counts one more stale entry in bucket b (a cancel, or a reschedule away) and
  // clears its live bit if no live entry is left there.
  void mark_stale(std::uint32_t b) noexcept {
    ++stale_[b];
    ++garbage_;
    if (b == overdue()) return;
    const bool none_live = P::mutated(Mutant::kWheelBitmapClearOnCancel)
                               ? true  // BUG (mutant): live entries may remain
                               : !has_live(b);
    if (none_live) live_bits_.clear(b);
  }

  // Recomputes bucket b's live bit (or, for the overdue bucket, resets overdue_min_
  // once it is empty) after a drain or scrub removed entries.
  void update_live_bit(std::uint32_t b) noexcept {
    if (b == overdue()) {
      if (buckets_[b].empty()) overdue_min_ = TickGrid::kNeverTick;
      return;
    }
    live_bits_.assign(b, has_live(b));
  }

  // The next tick after the cursor that visits ring bucket b.
  std::int64_t first_visit(std::uint32_t b) const noexcept {
    const std::int64_t from = cursor_ + 1;
    return from + static_cast<std::int64_t>(
                      (static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(from)) & mask_);
  }

  // The next visit of the first ring bucket (from the cursor on, wrapping) whose
  // live bit is set. Requires: some ring bucket holds a live entry.
  std::int64_t next_live_tick() const {
    const auto from = static_cast<std::uint32_t>(static_cast<std::uint64_t>(cursor_ + 1) & mask_);
    const std::optional<std::uint32_t> b = live_bits_.next_set(from);
    TLAB_CHECK(b.has_value(), "PerWorkerWheelQueue: size=", slab_.live_count(),
               " but no bucket's live bit is set");
    return first_visit(*b);
  }

  // The real liveness test: the slot is live and still in the generation the entry
  // was written in.
  bool truly_live(const Entry& e) const noexcept {
    return e.index != kTombstone && slab_.valid(TimerHandle{e.index, e.generation});
  }
  // The liveness test the drain uses; the mutant skips the generation comparison.
  bool live(const Entry& e) const noexcept {
    if (P::mutated(Mutant::kWheelNoGenerationCheck)) return e.index != kTombstone;
    return truly_live(e);
  }

  bool over_threshold(std::uint32_t b) const noexcept {
    return stale_[b] >= kCompactMinStale &&
           std::uint64_t{stale_[b]} * kCompactRatio >= buckets_[b].size();
  }

  void drop_stale(std::uint32_t b) noexcept {
    --stale_[b];
    --garbage_;
    ++counters_.stale_dropped;
  }

  // Keeps v[r] at position w (moving it down if entries before it were removed).
  void keep(Bucket& v, std::size_t r, std::size_t& w) {
    if (w != r) {
      v[w] = std::move(v[r]);
      if (truly_live(v[w])) slab_[v[w].index].pos = static_cast<std::uint32_t>(w);
    }
    ++w;
  }

  // Moves bucket b's entries due at or before tick t that are live into `batch` (freeing
  // their slots), drops due stale ones, and rebuilds the bucket without its not-yet-
  // due stale entries when it is over the compaction threshold.
  void drain(std::uint32_t b, std::int64_t t, std::vector<Entry>& batch) {
    auto& v = buckets_[b];
    if (v.empty()) return;
    const bool rebuild = over_threshold(b);
    std::size_t w = 0;
    for (std::size_t r = 0; r < v.size(); ++r) {
      Entry& e = v[r];
      if (grid_.due_tick(e.deadline) <= t) {
        const bool is_live = truly_live(e);
        if (!is_live) drop_stale(b);
        if (live(e)) {  // == is_live, except under kWheelNoGenerationCheck
          if (is_live) slab_.free(e.index);
          batch.push_back(std::move(e));
        }
        continue;
      }
      if (rebuild && !truly_live(e)) {
        drop_stale(b);
        continue;
      }
      keep(v, r, w);
    }
    v.truncate(w);
    update_live_bit(b);
    if (rebuild) ++counters_.compactions;
  }

  BasicTickGrid<P> grid_;
  Instant last_now_;
  std::int64_t cursor_ = -1;  // every tick <= cursor_ has been drained
  std::uint32_t mask_ = 0;
  std::uint32_t scrub_cursor_ = 0;
  std::vector<Bucket> buckets_;                      // mask_ + 1 ring buckets, then overdue
  std::vector<std::uint32_t> stale_;                 // per bucket, exact
  BucketBitmap live_bits_;                           // bit b: ring bucket b holds a live entry
  std::int64_t overdue_min_ = TickGrid::kNeverTick;  // <= every overdue entry's due_tick
  std::size_t garbage_ = 0;
  Slab<Node> slab_;
  std::vector<Entry> batch_;
  Counters counters_;
};

}  // namespace tlab
