// wheel.h: example::Wheel<T>, a user's own small hashed timing wheel, written
// against tlab's TimerQueue concept (tlab/queue/timer_queue.h) so that
// tlab/subject_adapter.h can export it as a subject (subject.cc, one line).
//
// Varghese & Lauck's scheme 4 without per-entry round counters: a ring of kSlots
// buckets, one tick each; an entry due at tick k sits in bucket k mod kSlots, and a
// visit of that bucket at tick t fires the entries with k <= t and leaves the later
// ones (they are a revolution or more away) for a later visit. Deadlines at or
// before the cursor go to an overdue bucket that every expire() drains.
//
//   | geometry                     | with tlab's default tick (1 ms) |
//   |------------------------------|---------------------------------|
//   | kSlots = 256 buckets         | 1 ms per bucket                 |
//   | one revolution = 256 ticks   | 256 ms                          |
//   | a later deadline             | skipped at each visit until due |
//
//   insert      O(1): push onto a bucket's vector
//   cancel      O(1): swap-remove from the bucket (every entry knows its position)
//   expire      O(ticks passed + entries in the buckets visited), at most one
//               visit per bucket per call; fired entries sorted by due tick
//   next        O(1): a lower bound (the cursor's next tick)
//
// Where it departs from tlab's own hashed_wheel: no occupancy bitmap (an idle
// expire() walks every tick it passes, up to kSlots) and no round counters (a
// far-future entry is compared, not decremented, at each visit). It is the kind
// of wheel people write in an afternoon; tlab checks that it keeps the same
// promises as the engine's.
//
// Handles are {index, generation}; an index's generation changes when its entry
// fires or is cancelled, so a stale handle is recognised and cancel() says false.
//
// Ground rules: single owner, no locks; the sink must not call back into the wheel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tlab/clock.h"
#include "tlab/queue/timer_queue.h"

namespace example {

template <class T>
class Wheel {
 public:
  using Payload = T;
  // Catalogue facts the TimerQueue concept asks for.
  static constexpr std::string_view kName = "cpp_wheel";
  static constexpr bool kExact = false;              // ticked: no FIFO among ties
  static constexpr bool kExactNextDeadline = false;  // a lower bound
  static constexpr std::string_view kSummary = "a user's 256-bucket hashed wheel";
  static constexpr std::uint32_t kSlots = 256;  // a power of two: bucket = tick & kMask
  static constexpr std::uint32_t kMask = kSlots - 1;
  static constexpr std::uint32_t kOverdue = kSlots;  // the bucket of already-due entries

  explicit Wheel(tlab::QueueConfig cfg)
      : start_(cfg.start), tick_ns_(cfg.tick.ns()), last_now_(cfg.start), buckets_(kSlots + 1) {
    if (tick_ns_ <= 0) throw std::invalid_argument("example::Wheel: tick must be positive");
  }

  tlab::TimerHandle insert(tlab::Instant deadline, T&& payload) {
    std::uint32_t i;
    if (free_.empty()) {
      i = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
    } else {
      i = free_.back();
      free_.pop_back();
    }
    Node& n = nodes_[i];
    n.deadline = deadline;
    n.due = due_tick(deadline);
    n.payload = std::move(payload);
    n.live = true;
    place(i);
    ++live_;
    return tlab::TimerHandle{i, n.generation};
  }

  bool cancel(tlab::TimerHandle h) {
    if (!contains(h)) return false;
    unplace(h.index);
    release(h.index);
    return true;
  }

  // example::Wheel::reschedule: moves pending h to `deadline`; h stays valid.
  bool reschedule(tlab::TimerHandle& h, tlab::Instant deadline) {
    if (!contains(h)) return false;
    unplace(h.index);
    nodes_[h.index].deadline = deadline;
    nodes_[h.index].due = due_tick(deadline);
    place(h.index);
    return true;
  }

  // example::Wheel::expire: fires every entry whose due tick has been reached, in
  // nondecreasing due order, through sink(T&&, Instant deadline).
  template <class Sink>
  std::size_t expire(tlab::Instant now, Sink&& sink) {
    if (now < last_now_) throw std::invalid_argument("example::Wheel: time going backwards");
    last_now_ = now;
    const std::int64_t now_tick = (now - start_).ns() / tick_ns_;
    std::vector<std::uint32_t> batch;
    drain(kOverdue, now_tick, batch);
    if (now_tick - cursor_ >= static_cast<std::int64_t>(kSlots)) {
      for (std::uint32_t b = 0; b < kSlots; ++b) drain(b, now_tick, batch);
    } else {
      for (std::int64_t t = cursor_ + 1; t <= now_tick; ++t) {
        drain(static_cast<std::uint32_t>(t & kMask), t, batch);
      }
    }
    cursor_ = std::max(cursor_, now_tick);
    std::stable_sort(batch.begin(), batch.end(), [&](std::uint32_t a, std::uint32_t b) {
      return nodes_[a].due < nodes_[b].due;
    });
    for (std::uint32_t i : batch) {
      T payload = std::move(nodes_[i].payload);
      const tlab::Instant deadline = nodes_[i].deadline;
      release(i);
      sink(std::move(payload), deadline);
    }
    return batch.size();
  }

  std::optional<tlab::Instant> next_deadline() const {
    if (live_ == 0) return std::nullopt;
    const std::int64_t t = buckets_[kOverdue].empty() ? cursor_ + 1 : cursor_;
    return start_ + tlab::Duration::nanoseconds(tick_ns_) * t;
  }
  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  bool contains(tlab::TimerHandle h) const {
    return h.index < nodes_.size() && nodes_[h.index].live &&
           nodes_[h.index].generation == h.generation;
  }
  tlab::Duration tick() const { return tlab::Duration::nanoseconds(tick_ns_); }

  // example::Wheel::check_invariants: every bucket entry is live and knows its
  // place; a wheel entry is due after the cursor and in the bucket of its tick; an
  // overdue one was due by the cursor; the entry count matches live_.
  void check_invariants() const {
    std::size_t seen = 0;
    for (std::uint32_t b = 0; b <= kSlots; ++b) {
      for (std::uint32_t k = 0; k < buckets_[b].size(); ++k) {
        const std::uint32_t i = buckets_[b][k];
        const Node& n = nodes_[i];
        const bool placed = n.live && n.bucket == b && n.pos == k;
        const bool timely =
            b == kOverdue ? n.due <= cursor_ : n.due > cursor_ && (n.due & kMask) == b;
        if (!placed || !timely) {
          throw std::logic_error("example::Wheel: entry " + std::to_string(i) + " in bucket " +
                                 std::to_string(b) + " due=" + std::to_string(n.due) +
                                 " cursor=" + std::to_string(cursor_));
        }
        ++seen;
      }
    }
    if (seen != live_) {
      throw std::logic_error("example::Wheel: " + std::to_string(seen) + " entries in buckets, " +
                             std::to_string(live_) + " live");
    }
  }

 private:
  struct Node {
    tlab::Instant deadline;
    std::int64_t due = 0;  // tick index: the first tick at or after the deadline
    T payload{};
    std::uint32_t generation = 0;
    std::uint32_t bucket = 0, pos = 0;
    bool live = false;
  };

  // due_tick: the smallest k with start + k * tick >= deadline (0 if already due).
  std::int64_t due_tick(tlab::Instant deadline) const {
    if (deadline <= start_) return 0;
    const std::int64_t d = (deadline - start_).ns();
    return d / tick_ns_ + (d % tick_ns_ != 0 ? 1 : 0);
  }

  void place(std::uint32_t i) {
    Node& n = nodes_[i];
    n.bucket = n.due <= cursor_ ? kOverdue : static_cast<std::uint32_t>(n.due & kMask);
    n.pos = static_cast<std::uint32_t>(buckets_[n.bucket].size());
    buckets_[n.bucket].push_back(i);
  }

  void unplace(std::uint32_t i) {
    std::vector<std::uint32_t>& bucket = buckets_[nodes_[i].bucket];
    const std::uint32_t moved = bucket.back();
    bucket[nodes_[i].pos] = moved;
    nodes_[moved].pos = nodes_[i].pos;
    bucket.pop_back();
  }

  void release(std::uint32_t i) {
    Node& n = nodes_[i];
    n.live = false;
    n.payload = T{};
    ++n.generation;
    free_.push_back(i);
    --live_;
  }

  // drain: moves the entries of bucket b due by tick t into batch.
  void drain(std::uint32_t b, std::int64_t t, std::vector<std::uint32_t>& batch) {
    std::vector<std::uint32_t>& bucket = buckets_[b];
    for (std::size_t k = 0; k < bucket.size();) {
      const std::uint32_t i = bucket[k];
      if (nodes_[i].due <= t) {
        unplace(i);  // the last entry moves into position k: look at k again
        batch.push_back(i);
      } else {
        ++k;
      }
    }
  }

  tlab::Instant start_;
  std::int64_t tick_ns_;
  tlab::Instant last_now_;
  std::int64_t cursor_ = 0;  // the last tick visited; tick 0 is start_ itself
  std::vector<std::vector<std::uint32_t>> buckets_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;  // LIFO: the index just freed is reused first
  std::size_t live_ = 0;
};

static_assert(tlab::TimerQueue<Wheel<std::uint64_t>>);

}  // namespace example
