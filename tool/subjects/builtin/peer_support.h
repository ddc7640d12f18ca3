// tlab/tool/subjects/builtin/peer_support.h: what the four peer subjects
// (peers.h) share to meet the subject ABI's ground rules (tlab/subject.h): opaque
// handles that never touch another timer, and a fence that keeps C++ exceptions
// from crossing the ABI.
//
// HandleTable<Timer> keeps one slot per arming the library needs an object for
// (a uv_timer_t, an event*, a steady_timer, a HeapTimer task), in a deque so that
// a slot never moves (libuv handles must not). A handle is (generation << 32) |
// index. A slot is reused only after its timer resolved (fired or prevented),
// oldest resolved first, and only once kQuarantine later slots have resolved too,
// so a stale handle keeps its true answer for a while (a canceller racing a fire
// on a self-driven subject asks right after the fire freed the slot):
//
//   | slot state | cancel() with a handle of this generation answers        |
//   |------------|----------------------------------------------------------|
//   | armed      | whatever the library says (each peer's cancel)           |
//   | fired      | TOO_LATE (it fired)                                      |
//   | cancelled  | TOO_LATE (an earlier cancel stopped it: only the call    |
//   |            | that stopped a timer answers PREVENTED, tlab/subject.h)  |
//   | reused     | UNKNOWN: the generation no longer matches; nothing is    |
//   |            | touched (ABA after 2^32 reuses of one slot)              |
//
// Cost: acquire, find and resolve are O(1) (a deque push/pop, an index); memory is
// the high-water mark of timers armed at once, plus kQuarantine slots.
//
// Ground rules: not thread-safe; the owner's lock (or its single thread) guards a
// table. Slot::timer is touched only by the peer that owns the table.
#pragma once

#include <cstdint>
#include <deque>
#include <new>
#include <utility>

#include "tlab/subject.h"
#include "tlab/subject_guard.h"

namespace tlab::tool::builtin {

enum class SlotState : std::uint8_t { kArmed, kFired, kCancelled };

template <class Timer>
class HandleTable {
 public:
  // Resolved slots kept out of reuse: 64, so a handle stays answerable across 64
  // later resolutions, for at most 64 idle slots per table.
  static constexpr std::size_t kQuarantine = 64;

  struct Slot {
    template <class... Args>
    explicit Slot(Args&&... args) : timer(std::forward<Args>(args)...) {}
    Timer timer;
    std::uint64_t cookie = 0;
    std::uint32_t gen = 0;
    SlotState state = SlotState::kCancelled;
  };

  // HandleTable::acquire: an armed slot for a new timer with `cookie`: the oldest
  // resolved slot, or a new one built from `args` (then `*fresh` is set, so the
  // caller can initialise the library object once).
  template <class... Args>
  std::uint32_t acquire(std::uint64_t cookie, bool* fresh, Args&&... args) {
    std::uint32_t i;
    *fresh = free_.size() <= kQuarantine;
    if (*fresh) {
      i = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back(std::forward<Args>(args)...);
    } else {
      i = free_.front();
      free_.pop_front();
      ++slots_[i].gen;
    }
    Slot& s = slots_[i];
    s.cookie = cookie;
    s.state = SlotState::kArmed;
    return i;
  }
  // HandleTable::release_unused: undoes acquire(i) when the library refused the
  // arming (nothing was armed; the slot goes back to the free list).
  void release_unused(std::uint32_t i) { resolve(i, SlotState::kCancelled); }

  std::uint64_t handle(std::uint32_t i) const { return (std::uint64_t{slots_[i].gen} << 32) | i; }
  // HandleTable::find_armed: the armed slot `h` names; nullptr when there is none,
  // with `*settled` set to cancel()'s answer for it (table above): TOO_LATE
  // while the generation matches, UNKNOWN once the slot was reused or for a
  // handle never issued.
  Slot* find_armed(std::uint64_t h, std::uint32_t* index, std::int32_t* settled) {
    const std::uint64_t i = h & 0xffff'ffffu;
    if (i >= slots_.size() || slots_[i].gen != static_cast<std::uint32_t>(h >> 32)) {
      *settled = TLAB_CANCEL_UNKNOWN;
      return nullptr;
    }
    Slot& s = slots_[i];
    if (s.state != SlotState::kArmed) {
      *settled = TLAB_CANCEL_TOO_LATE;
      return nullptr;
    }
    *index = static_cast<std::uint32_t>(i);
    return &s;
  }
  Slot& at(std::uint32_t i) { return slots_[i]; }
  // HandleTable::resolve: the armed slot `i` fired or was prevented.
  void resolve(std::uint32_t i, SlotState to) {
    slots_[i].state = to;
    free_.push_back(i);
  }
  std::size_t size() const { return slots_.size(); }

 private:
  std::deque<Slot> slots_;
  std::deque<std::uint32_t> free_;
};

// guarded: the ABI's exception fence (tlab/subject_guard.h).
template <class F>
tlab_status guarded(F&& f) noexcept {
  return subject_guarded(std::forward<F>(f));
}

// FacilityCalls: a peer's facility calls; poll is NULL for a self-driven one,
// pending where the library gives no count.
struct FacilityCalls {
  decltype(tlab_subject::create) create;
  decltype(tlab_subject::destroy) destroy;
  decltype(tlab_subject::schedule) schedule;
  decltype(tlab_subject::cancel) cancel;
  decltype(tlab_subject::poll) poll;
  decltype(tlab_subject::pending) pending;
};

// facility: a peer's descriptor: a facility on CLOCK_MONOTONIC (every peer reads
// the clock itself) that accepts any delay (max_delay_ns 0) and has no
// timed-wait calls; `resolution_ns` is the granularity of its deadlines
// (subject.h), 0 where they are as fine as the tick.
constexpr tlab_subject facility(const char* name, const char* summary, std::uint32_t drive,
                                std::uint64_t promises, FacilityCalls c,
                                std::int64_t resolution_ns = 0) {
  return tlab_subject{TLAB_SUBJECT_ABI_VERSION,
                      sizeof(tlab_subject),
                      name,
                      summary,
                      TLAB_KIND_FACILITY,
                      drive,
                      TLAB_CLOCK_MONOTONIC,
                      0,
                      promises,
                      0,
                      c.create,
                      c.destroy,
                      c.schedule,
                      c.cancel,
                      c.poll,
                      c.pending,
                      nullptr,
                      nullptr,
                      resolution_ns,
                      0,
                      0,
                      nullptr};
}

// with_periodic: descriptor `d` with periodic timers of `kinds` armed by `fn`.
constexpr tlab_subject with_periodic(tlab_subject d, std::uint32_t kinds,
                                     decltype(tlab_subject::schedule_periodic) fn) {
  d.periodic = kinds;
  d.schedule_periodic = fn;
  return d;
}

// SelfDriven: a self-driven facility's descriptor (facility(), TLAB_DRIVE_SELF) and
// its driven twin (subjects/bench_hook.h): the same name, summary, schedule, cancel
// and destroy; the twin's create leaves the subject's own threads unstarted and its
// poll runs one pass on the caller, and it is not THREAD_SAFE (one thread creates,
// calls and destroys it).
struct SelfDriven {
  tlab_subject self;
  tlab_subject driven;
};
constexpr SelfDriven self_driven(const char* name, const char* summary, std::uint64_t promises,
                                 FacilityCalls c, decltype(tlab_subject::create) driven_create,
                                 decltype(tlab_subject::poll) driven_poll) {
  FacilityCalls d = c;
  d.create = driven_create;
  d.poll = driven_poll;
  return {facility(name, summary, TLAB_DRIVE_SELF, promises, c),
          facility(name, summary, TLAB_DRIVE_LOOP, promises & ~TLAB_PROMISE_THREAD_SAFE, d)};
}

// saturating_add: now + delay, clamped to INT64_MAX ("never") and INT64_MIN.
inline std::int64_t saturating_add(std::int64_t now, std::int64_t delay) {
  std::int64_t out;
  if (__builtin_add_overflow(now, delay, &out)) return delay > 0 ? INT64_MAX : INT64_MIN;
  return out;
}

}  // namespace tlab::tool::builtin
