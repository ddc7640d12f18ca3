// tlab/queue/slab_list.h: an intrusive doubly linked list of Slab nodes.
//
// SlabList is two 32-bit slot indices (head, tail); the links live in the nodes
// themselves (`std::uint32_t prev, next`), so a list costs 8 bytes however long it
// is and an entry can be unlinked in O(1) from its slot index alone. The sorted
// list baseline, the hashed wheel's buckets and the hierarchical wheel's slots,
// ready list and overflow list are all SlabLists. This is the classic timing-wheel
// bucket of Varghese & Lauck (1987), scheme 4, with slab indices in place of
// pointers: 4 bytes instead of 8 per link, and nodes may move while the slab's
// first chunk grows.
//
// Cost: push_back / insert_before / remove / pop_front O(1); sort_by O(k log k)
// for a list of k entries (only the wheels' ready list uses it, lazily).
//
// fire_all() is the one place an entry leaves a queue through the sink: the node is
// unlinked and freed BEFORE the sink runs, so a sink that throws leaves the rest
// of the list queued (they fire on the next expire) and never a half-removed entry.
//
// Also here: DueList (below), the wheels' list of already-due entries, sorted
// lazily by due tick; and ExpireScope, the guard that makes a re-entrant sink fail.
//
// Ground rules: single owner; the owning queue's rules apply. A node is on at most
// one list at a time; its links are meaningless while it is on none.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/queue/slab.h"

namespace tlab {

inline constexpr std::uint32_t kNilIndex = TimerHandle::kNoIndex;

struct SlabList {
  std::uint32_t head = kNilIndex;
  std::uint32_t tail = kNilIndex;

  bool empty() const noexcept { return head == kNilIndex; }

  // tlab::SlabList::push_back
  // Requires: i is live and on no list.
  template <class Node>
  void push_back(Slab<Node>& s, std::uint32_t i) noexcept {
    s[i].prev = tail;
    s[i].next = kNilIndex;
    if (tail == kNilIndex) {
      head = i;
    } else {
      s[tail].next = i;
    }
    tail = i;
  }

  // tlab::SlabList::insert_before: links i in front of `pos` (kNilIndex = at the end).
  // Requires: pos is on this list or kNilIndex; i is on no list.
  template <class Node>
  void insert_before(Slab<Node>& s, std::uint32_t pos, std::uint32_t i) noexcept {
    if (pos == kNilIndex) {
      push_back(s, i);
      return;
    }
    const std::uint32_t before = s[pos].prev;
    s[i].prev = before;
    s[i].next = pos;
    s[pos].prev = i;
    if (before == kNilIndex) {
      head = i;
    } else {
      s[before].next = i;
    }
  }

  // tlab::SlabList::remove
  // Requires: i is on this list.
  template <class Node>
  void remove(Slab<Node>& s, std::uint32_t i) noexcept {
    const std::uint32_t p = s[i].prev;
    const std::uint32_t n = s[i].next;
    if (p == kNilIndex) {
      head = n;
    } else {
      s[p].next = n;
    }
    if (n == kNilIndex) {
      tail = p;
    } else {
      s[n].prev = p;
    }
  }

  // tlab::SlabList::pop_front
  // Requires: !empty().
  template <class Node>
  std::uint32_t pop_front(Slab<Node>& s) noexcept {
    const std::uint32_t i = head;
    remove(s, i);
    return i;
  }

  // tlab::SlabList::take: moves every entry out, leaving this list empty.
  SlabList take() noexcept { return std::exchange(*this, SlabList{}); }

  // tlab::SlabList::sort_by: stable sort by key(node) (ascending).
  template <class Node, class Key>
  void sort_by(Slab<Node>& s, Key key,
               std::vector<std::pair<std::int64_t, std::uint32_t>>& scratch) {
    scratch.clear();
    for (std::uint32_t i = head; i != kNilIndex; i = s[i].next) scratch.emplace_back(key(s[i]), i);
    std::stable_sort(scratch.begin(), scratch.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    *this = SlabList{};
    for (const auto& e : scratch) push_back(s, e.second);
  }

  // tlab::SlabList::count: O(length); for check_invariants().
  template <class Node>
  std::size_t count(const Slab<Node>& s) const noexcept {
    std::size_t n = 0;
    for (std::uint32_t i = head; i != kNilIndex; i = s[i].next) ++n;
    return n;
  }

  // tlab::SlabList::check_links: prev/next agree, every member is live. Returns length.
  template <class Node>
  std::size_t check_links(const Slab<Node>& s, const char* what) const {
    std::size_t n = 0;
    std::uint32_t prev = kNilIndex;
    for (std::uint32_t i = head; i != kNilIndex; i = s[i].next) {
      TLAB_CHECK(s.live(i), what, ": dead slot on a list i=", i);
      TLAB_CHECK(s[i].prev == prev, what, ": broken back link i=", i, " prev=", s[i].prev,
                 " expected=", prev);
      TLAB_CHECK(n <= s.live_count(), what, ": list longer than the slab (cycle?)");
      prev = i;
      ++n;
    }
    TLAB_CHECK(tail == prev, what, ": tail=", tail, " last=", prev);
    return n;
  }
};

// tlab::ExpireScope marks the span of an expire() call, so that a sink that calls
// back into its queue (insert/cancel/reschedule) fails a TLAB_CHECK loudly instead
// of corrupting a traversal in progress.
struct ExpireScope {
  explicit ExpireScope(bool& f) noexcept : flag(f) { flag = true; }
  ~ExpireScope() { flag = false; }
  ExpireScope(const ExpireScope&) = delete;
  ExpireScope& operator=(const ExpireScope&) = delete;
  bool& flag;
};

// tlab::fire_all: unlinks, frees and delivers every entry of `list`, front to back.
// Returns the number delivered. Nodes must have `payload` and `deadline` fields.
// Ensures: if the sink throws, the entries after the throwing one stay on `list`.
template <class Node, class Sink>
std::size_t fire_all(Slab<Node>& s, SlabList& list, Sink& sink) {
  std::size_t n = 0;
  while (!list.empty()) {
    const std::uint32_t i = list.pop_front(s);
    auto payload = std::move(s[i].payload);
    const Instant deadline = s[i].deadline;
    s.free(i);
    ++n;
    sink(std::move(payload), deadline);
  }
  return n;
}

}  // namespace tlab

namespace tlab {

// tlab::DueList: the wheels' list of entries already due, delivered in
// nondecreasing due-tick order. Entries usually arrive in order (a wheel moves
// them over one tick at a time), so push() only tracks whether an out-of-order
// push happened, and fire() sorts (stably, keeping arrival order within a tick)
// only then. Unlinking an entry never breaks the order.
//
// Cost: push/remove O(1); min_due O(1) when sorted, else O(k); fire O(k) plus
// O(k log k) if unsorted.
class DueList {
 public:
  using Scratch = std::vector<std::pair<std::int64_t, std::uint32_t>>;

  bool empty() const noexcept { return list_.empty(); }
  const SlabList& list() const noexcept { return list_; }
  bool sorted() const noexcept { return sorted_; }

  template <class Node>
  void push(Slab<Node>& s, std::uint32_t i, std::int64_t due) noexcept {
    if (list_.empty()) {
      sorted_ = true;
    } else if (due < tail_due_) {
      sorted_ = false;
    }
    tail_due_ = due;
    list_.push_back(s, i);
  }

  template <class Node>
  void remove(Slab<Node>& s, std::uint32_t i) noexcept {
    list_.remove(s, i);
  }

  // tlab::DueList::min_due: the smallest key(node). Requires: !empty().
  template <class Node, class Key>
  std::int64_t min_due(const Slab<Node>& s, Key key) const noexcept {
    if (sorted_) return key(s[list_.head]);
    std::int64_t m = std::numeric_limits<std::int64_t>::max();
    for (std::uint32_t i = list_.head; i != kNilIndex; i = s[i].next) m = std::min(m, key(s[i]));
    return m;
  }

  // tlab::DueList::fire: delivers every entry in (key, arrival) order; see fire_all.
  template <class Node, class Key, class Sink>
  std::size_t fire(Slab<Node>& s, Key key, Sink& sink, Scratch& scratch) {
    if (!sorted_) {
      list_.sort_by(s, key, scratch);
      sorted_ = true;
    }
    return fire_all(s, list_, sink);
  }

  // tlab::DueList::check: links, and the order when the sorted flag claims it.
  template <class Node, class Key>
  std::size_t check(const Slab<Node>& s, Key key, const char* what) const {
    const std::size_t n = list_.check_links(s, what);
    if (sorted_) {
      for (std::uint32_t i = list_.head; i != kNilIndex && s[i].next != kNilIndex; i = s[i].next) {
        TLAB_CHECK(key(s[i]) <= key(s[s[i].next]), what, ": due list out of order at slot ", i,
                   " due=", key(s[i]), " next due=", key(s[s[i].next]));
      }
    }
    return n;
  }

 private:
  SlabList list_;
  std::int64_t tail_due_ = std::numeric_limits<std::int64_t>::min();
  bool sorted_ = true;
};

}  // namespace tlab
