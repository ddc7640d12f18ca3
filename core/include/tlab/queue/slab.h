// tlab/queue/slab.h: generation-checked node storage shared by the queue strategies.
//
// Every strategy keeps its entries in a Slab<Node>: numbered slots, each either
// holding a live Node or linking to the next free slot. A node's slot index never
// changes while it lives, so the index can sit in heap arrays, wheel buckets and
// linked lists; the slot's generation is bumped every time the slot is taken and
// every time it is freed, so a TimerHandle {index, generation} taken before the
// free no longer matches after it. That is how cancel() on a fired, cancelled or
// reused handle is refused in O(1) without a hash map (the same trick as tokio's
// slab keys with a generation, and seed 003's handle generation).
//
// Slot states (the generation's parity IS the state; no separate flag):
//
//   state   generation   cell holds              alloc()            free()
//   free    even         next free slot index    -> live, gen + 1   (precondition fails)
//   live    odd          the Node                (not offered)      -> free, gen + 1
//
// A fresh slot starts free with generation 0, so no handle with an even
// generation (such as the default {kNoIndex, 0}) is ever valid.
//
// Storage is paged, tuned for queues that grow to millions of entries without a
// capacity hint: slots live in chunks of kChunkSlots (2048 for the wheels), each chunk one
// allocation holding its cells and then their generations. A full chunk never
// moves and is never copied; growing adds one chunk, so storage exceeds the
// slots in use by less than one chunk, where std::vector's doubling left up to
// half its capacity unused and copied every node at each doubling (75 bytes per
// pending hierarchical-wheel entry at 10M measured by `tlab compare`, 44 now).
// Only chunk 0 grows like a vector (from kFirstSlots, doubling, moving its live
// nodes) until it reaches kChunkSlots, so that a queue holding a handful of timers
// does not pay 100+ KiB; at most 2 * kChunkSlots node moves ever happen.
//
// Cost: alloc O(1) (amortised over chunk 0's doublings; one allocation per chunk
// after), free O(1), lookup O(1): one load of the chunk's pointer, then
// the cell.
// Memory: sizeof(Node) + 4 bytes per slot (the generation; the free-list link
// shares the Node's cell), plus 16 bytes per chunk, plus < 1 chunk of unused
// slots. Generations are 32-bit and advance by 2 per use of a slot, so they wrap
// after 2^31 reuses of the SAME slot; a handle would have to be held across all of
// them to be confused (documented ABA bound, the same argument as RFC 0014's
// token).
//
// Ground rules: single owner, no synchronisation; the owning queue's rules apply.
// operator[] may only name a live slot (a free cell holds a link, not a Node).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

template <class Node>
class Slab {
 public:
  // Slots per chunk: the largest power of two whose chunk (cells + generations)
  // fits in 96 KiB, i.e. 2048 slots for the wheels' 32-byte nodes. Below glibc's
  // 128 KiB mmap threshold, so a chunk is one heap block (no page rounding, no
  // mmap per chunk); big enough that the unused tail of the last chunk is < 0.01
  // bytes per entry at 10M entries and the chunk table (16 bytes a chunk) is 8 KiB
  // at 1M entries.
  static constexpr int kChunkBits = std::clamp(
      static_cast<int>(std::bit_width((96u << 10) / (sizeof(Node) + sizeof(std::uint32_t)))) - 1, 8,
      16);
  static constexpr std::uint32_t kChunkSlots = 1u << kChunkBits;
  // Chunk 0's first size: a small queue allocates ~1 KiB, not a whole chunk.
  static constexpr std::uint32_t kFirstSlots = 16;

  Slab() = default;
  Slab(const Slab& o) { copy_from(o); }
  Slab(Slab&& o) noexcept { steal(o); }
  Slab& operator=(const Slab& o) {
    if (this != &o) {
      Slab copy(o);
      release();
      steal(copy);
    }
    return *this;
  }
  Slab& operator=(Slab&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~Slab() { release(); }

  // tlab::Slab::alloc: returns the index of a fresh slot holding Node(args...).
  // Ensures: the slot is live with a new (odd) generation. If Node's constructor
  // throws, the slab is unchanged.
  template <class... Args>
  std::uint32_t alloc(Args&&... args) {
    std::uint32_t i;
    if (free_head_ != kNone) {
      i = free_head_;
      Cell& c = cell(i);
      const std::uint32_t next = c.next_free;
      try {
        ::new (static_cast<void*>(&c.node)) Node(std::forward<Args>(args)...);
      } catch (...) {
        c.next_free = next;  // a throwing constructor may have written over the link
        throw;
      }
      free_head_ = next;
    } else {
      TLAB_CHECK(size_ < kMaxSlots, "Slab: more than 2^32-2 entries");
      if (size_ == reserved_) grow(size_ + 1);
      i = size_;
      ::new (static_cast<void*>(&cell(i).node)) Node(std::forward<Args>(args)...);
      ++size_;
    }
    ++gen(i);
    ++live_;
    return i;
  }

  // tlab::Slab::free: destroys slot i's node (dropping its payload now, not at
  // reuse) and bumps its generation.
  // Requires: i is live.
  void free(std::uint32_t i) {
    TLAB_DCHECK(live(i), "Slab::free of dead slot i=", i);
    Cell& c = cell(i);
    c.node.~Node();
    c.next_free = free_head_;
    free_head_ = i;
    ++gen(i);
    --live_;
  }

  // tlab::Slab::handle: the handle naming live slot i in its current generation.
  TimerHandle handle(std::uint32_t i) const { return TimerHandle{i, gen(i)}; }

  // True iff h names a live slot whose generation still matches.
  bool valid(TimerHandle h) const noexcept {
    return h.index < size_ && (h.generation & 1u) != 0 && gen(h.index) == h.generation;
  }

  bool live(std::uint32_t i) const noexcept { return i < size_ && (gen(i) & 1u) != 0; }
  std::uint32_t generation(std::uint32_t i) const noexcept { return gen(i); }

  // Requires: i is live.
  Node& operator[](std::uint32_t i) noexcept {
    TLAB_DCHECK(live(i), "Slab::operator[] on dead slot i=", i);
    return cell(i).node;
  }
  const Node& operator[](std::uint32_t i) const noexcept {
    TLAB_DCHECK(live(i), "Slab::operator[] on dead slot i=", i);
    return cell(i).node;
  }

  std::size_t live_count() const noexcept { return live_; }
  // tlab::Slab::capacity: slots created so far (live or free); slot indices are
  // below it. Storage for reserved() slots is allocated.
  std::size_t capacity() const noexcept { return size_; }
  std::size_t reserved() const noexcept { return reserved_; }
  // tlab::Slab::reserve: allocates storage for n slots now (rounded up to whole
  // chunks beyond the first kChunkSlots), so alloc() allocates nothing until then.
  void reserve(std::size_t n) {
    TLAB_CHECK(n <= kMaxSlots, "Slab::reserve: more than 2^32-2 entries, n=", n);
    if (n > reserved_) grow(static_cast<std::uint32_t>(n));
  }

 private:
  static constexpr std::uint32_t kNone = TimerHandle::kNoIndex;
  static constexpr std::uint32_t kMaxSlots = kNone - 1;
  static constexpr std::uint32_t kChunkMask = kChunkSlots - 1;

  // A slot's storage: the Node while live, the free-list link while free.
  union Cell {
    Cell() noexcept {}
    ~Cell() {}
    Node node;
    std::uint32_t next_free;
  };
  static_assert(alignof(Cell) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "Slab: over-aligned nodes need an aligned allocation");
  // One allocation: `slots` cells, then `slots` generations.
  struct Chunk {
    Cell* cells;
    std::uint32_t* gens;
  };

  Cell& cell(std::uint32_t i) const noexcept {
    return chunks_[i >> kChunkBits].cells[i & kChunkMask];
  }
  std::uint32_t& gen(std::uint32_t i) const noexcept {
    return chunks_[i >> kChunkBits].gens[i & kChunkMask];
  }

  static Chunk allocate_chunk(std::uint32_t slots) {
    void* p =
        ::operator new(static_cast<std::size_t>(slots) * (sizeof(Cell) + sizeof(std::uint32_t)));
    Cell* cells = static_cast<Cell*>(p);
    auto* gens = reinterpret_cast<std::uint32_t*>(cells + slots);
    return Chunk{cells, gens};
  }
  static void deallocate_chunk(Chunk c) noexcept { ::operator delete(static_cast<void*>(c.cells)); }

  // Moves slot i's contents (node or link, by state) from `from` to the empty `to`.
  static void relocate(Cell& from, Cell& to, std::uint32_t g) {
    if ((g & 1u) != 0) {
      ::new (static_cast<void*>(&to.node)) Node(std::move(from.node));
      from.node.~Node();
    } else {
      to.next_free = from.next_free;
    }
  }

  // Makes reserved_ >= want: grows chunk 0 (doubling, at most to kChunkSlots),
  // then appends whole chunks.
  void grow(std::uint32_t want) {
    if (reserved_ < kChunkSlots) {
      std::uint32_t cap = std::max(reserved_ * 2, kFirstSlots);
      cap = std::min(std::max(cap, want), kChunkSlots);
      Chunk c = allocate_chunk(cap);
      if (!chunks_.empty()) {
        Chunk old = chunks_[0];
        // Node's move constructor must not throw half way through the moves.
        static_assert(std::is_nothrow_move_constructible_v<Node>,
                      "Slab: Node must be nothrow move constructible");
        for (std::uint32_t i = 0; i < size_; ++i) {
          relocate(old.cells[i], c.cells[i], old.gens[i]);
          c.gens[i] = old.gens[i];
        }
        chunks_[0] = c;
        deallocate_chunk(old);
      } else {
        try {
          chunks_.push_back(c);
        } catch (...) {
          deallocate_chunk(c);
          throw;
        }
      }
      std::fill(c.gens + size_, c.gens + cap, 0u);
      reserved_ = cap;
    }
    while (reserved_ < want) {
      chunks_.reserve(chunks_.size() + 1);  // so that push_back below cannot throw
      Chunk c = allocate_chunk(kChunkSlots);
      std::fill(c.gens, c.gens + kChunkSlots, 0u);
      chunks_.push_back(c);
      reserved_ = reserved_ > kMaxSlots - kChunkSlots ? kMaxSlots : reserved_ + kChunkSlots;
    }
  }

  void release() noexcept {
    if constexpr (!std::is_trivially_destructible_v<Node>) {
      for (std::uint32_t i = 0; i < size_; ++i) {
        if ((gen(i) & 1u) != 0) cell(i).node.~Node();
      }
    }
    for (const Chunk& c : chunks_) deallocate_chunk(c);
    chunks_.clear();
    size_ = reserved_ = 0;
    live_ = 0;
    free_head_ = kNone;
  }

  void steal(Slab& o) noexcept {
    chunks_ = std::move(o.chunks_);
    size_ = std::exchange(o.size_, 0);
    reserved_ = std::exchange(o.reserved_, 0);
    live_ = std::exchange(o.live_, 0);
    free_head_ = std::exchange(o.free_head_, kNone);
    o.chunks_.clear();
  }

  void copy_from(const Slab& o) {
    if (o.size_ == 0) return;
    grow(o.size_);
    for (std::uint32_t i = 0; i < o.size_; ++i) {
      const std::uint32_t g = o.gen(i);
      if ((g & 1u) != 0) {
        try {
          ::new (static_cast<void*>(&cell(i).node)) Node(o.cell(i).node);
        } catch (...) {
          size_ = i;  // release() destroys the i nodes copied so far
          release();
          throw;
        }
      } else {
        cell(i).next_free = o.cell(i).next_free;
      }
      gen(i) = g;
      size_ = i + 1;
    }
    live_ = o.live_;
    free_head_ = o.free_head_;
  }

  // Chunk c holds slots [c * kChunkSlots, c * kChunkSlots + its size); only chunk 0
  // is ever smaller than kChunkSlots, and only while it is the only chunk.
  std::vector<Chunk> chunks_;
  std::uint32_t size_ = 0;      // slots created: every index < size_ is live or free
  std::uint32_t reserved_ = 0;  // slots with storage
  std::uint32_t free_head_ = kNone;
  std::size_t live_ = 0;
};

}  // namespace tlab
