// tlab/queue/slab.h: generation-checked node storage shared by the queue strategies.
//
// Every strategy keeps its entries in a Slab<Node>: a vector of nodes plus an
// intrusive free list. A node's slot index never changes while it lives, so the
// index can sit in heap arrays, wheel buckets and linked lists; the slot's
// generation is bumped every time the slot is freed, so a TimerHandle
// {index, generation} taken before the free no longer matches after it. That is
// how cancel() on a fired, cancelled or reused handle is refused in O(1) without a
// hash map (the same trick as tokio's slab keys with a generation, and seed 003's
// handle generation).
//
// Cost: alloc O(1) amortised (vector growth), free O(1), lookup O(1).
// Memory: sizeof(Node) + 8 bytes per slot (generation + free-list link/live flag).
// Generations are 32-bit and wrap after 2^32 frees of the SAME slot; a handle
// would have to be held across all of them to be confused (documented ABA bound,
// the same argument as RFC 0014's token).
//
// Ground rules: single owner, no synchronisation; the owning queue's rules apply.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

template <class Node>
class Slab {
 public:
  // tlab::Slab::alloc: returns the index of a fresh slot holding `node`.
  template <class... Args>
  std::uint32_t alloc(Args&&... args) {
    std::uint32_t i;
    if (free_head_ != kNone) {
      i = free_head_;
      free_head_ = meta_[i].next_free;
      nodes_[i] = Node(std::forward<Args>(args)...);
    } else {
      TLAB_CHECK(nodes_.size() < kLive, "Slab: more than 2^32-1 entries");
      i = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back(std::forward<Args>(args)...);
      meta_.push_back(Meta{});
    }
    meta_[i].next_free = kLive;
    ++live_;
    return i;
  }

  // tlab::Slab::free: releases slot i and bumps its generation.
  // Requires: i is live.
  void free(std::uint32_t i) {
    TLAB_DCHECK(i < meta_.size() && meta_[i].live(), "Slab::free of dead slot i=", i);
    ++meta_[i].generation;
    meta_[i].next_free = free_head_;
    free_head_ = i;
    nodes_[i] = Node{};  // drop the payload now, not at reuse
    --live_;
  }

  TimerHandle handle(std::uint32_t i) const { return TimerHandle{i, meta_[i].generation}; }

  // True iff h names a live slot whose generation still matches.
  bool valid(TimerHandle h) const noexcept {
    return h.index < meta_.size() && meta_[h.index].live() && meta_[h.index].generation == h.generation;
  }

  bool live(std::uint32_t i) const noexcept { return i < meta_.size() && meta_[i].live(); }
  std::uint32_t generation(std::uint32_t i) const noexcept { return meta_[i].generation; }

  Node& operator[](std::uint32_t i) noexcept { return nodes_[i]; }
  const Node& operator[](std::uint32_t i) const noexcept { return nodes_[i]; }

  std::size_t live_count() const noexcept { return live_; }
  std::size_t capacity() const noexcept { return nodes_.size(); }
  void reserve(std::size_t n) {
    nodes_.reserve(n);
    meta_.reserve(n);
  }

 private:
  static constexpr std::uint32_t kNone = TimerHandle::kNoIndex;
  // A live slot has next_free == kLive; a free one links to the next free slot
  // (or kNone). 8 bytes per slot, no separate live flag.
  static constexpr std::uint32_t kLive = kNone - 1;
  struct Meta {
    std::uint32_t generation = 0;
    std::uint32_t next_free = kNone;
    bool live() const noexcept { return next_free == kLive; }
  };
  std::vector<Node> nodes_;
  std::vector<Meta> meta_;
  std::uint32_t free_head_ = kNone;
  std::size_t live_ = 0;
};

}  // namespace tlab
