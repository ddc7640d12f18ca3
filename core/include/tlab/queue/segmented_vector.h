// tlab/queue/segmented_vector.h: SegmentedVector, a random-access sequence whose
// elements live in blocks that never move.
//
// Why: std::vector doubles. A queue of 10M entries in a vector holds up to twice
// the memory it uses (16.8M slots for 10M binary-heap elements: 10.8 bytes of slack
// per pending timer) and copies every element at each doubling; a wheel's 512
// bucket vectors each carry their own doubling slack (about 0.7x of the entries on
// average, measured: per_worker_wheel at 73.7 bytes per timer where its entries
// need 44). Here growth adds one block and copies nothing, so the unused storage
// is less than one block, and shrinking gives blocks back.
//
// Layout: blocks grow from kFirst elements, doubling, up to kMax elements, then stay
// at kMax:
//
//   block     0        1          2            ...   kMaxBits-kFirstBits   then every block
//   indices   [0, F)   [F, 2F)    [2F, 4F)     ...   [kMax/2, kMax)        kMax elements
//
// (F = kFirst = 2^kFirstBits.) So a small sequence costs about what a vector
// costs, and a large one wastes less than kMax elements. Index i maps to its block
// and offset with one shift test and a bit_width: for i >= kMax, block =
// kMaxBits - kFirstBits + (i >> kMaxBits) and offset = i mod kMax; below kMax the
// tiered blocks above.
//
//   operator[]   O(1): a branch, a bit_width, a load of the block pointer
//   push_back    O(1); allocates a block when the last one is full
//   pop_back     O(1); frees a block once two blocks past the end are empty
//   truncate(n)  O(removed elements + freed blocks)
//   clear        O(size + blocks)
// Memory: sizeof(T) * size, plus < 2 blocks unused (the current block's tail and
// one spare, kept so that push/pop at a block boundary does not allocate every
// time), plus 8 bytes per block in the block table (a std::vector).
//
// Ground rules: single owner, no synchronisation. References stay valid until the
// element is removed (blocks never move), unlike std::vector's.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "tlab/base/check.h"

namespace tlab {

template <class T, unsigned kFirstBits = 3, unsigned kMaxBits = 12>
class SegmentedVector {
  static_assert(kFirstBits >= 1 && kFirstBits <= kMaxBits && kMaxBits < 32);

 public:
  static constexpr std::size_t kFirst = std::size_t{1} << kFirstBits;
  static constexpr std::size_t kMax = std::size_t{1} << kMaxBits;

  SegmentedVector() = default;
  SegmentedVector(const SegmentedVector& o)
    requires std::is_copy_constructible_v<T>
  {
    for (std::size_t i = 0; i < o.size_; ++i) push_back(o[i]);
  }
  SegmentedVector(SegmentedVector&& o) noexcept
      : blocks_(std::move(o.blocks_)), size_(std::exchange(o.size_, 0)) {
    o.blocks_.clear();
  }
  SegmentedVector& operator=(const SegmentedVector& o)
    requires std::is_copy_constructible_v<T>
  {
    if (this != &o) {
      SegmentedVector copy(o);
      swap(copy);
    }
    return *this;
  }
  SegmentedVector& operator=(SegmentedVector&& o) noexcept {
    if (this != &o) {
      release();
      blocks_ = std::move(o.blocks_);
      o.blocks_.clear();
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~SegmentedVector() { release(); }

  void swap(SegmentedVector& o) noexcept {
    blocks_.swap(o.blocks_);
    std::swap(size_, o.size_);
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  T& operator[](std::size_t i) noexcept {
    const Where w = where(i);
    return blocks_[w.block][w.offset];
  }
  const T& operator[](std::size_t i) const noexcept {
    const Where w = where(i);
    return blocks_[w.block][w.offset];
  }
  T& back() noexcept { return (*this)[size_ - 1]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    const Where w = where(size_);
    if (w.block == blocks_.size()) {
      blocks_.reserve(blocks_.size() + 1);  // may throw before anything is allocated
      blocks_.push_back(std::allocator<T>{}.allocate(block_size(w.block)));
    }
    T* p = ::new (static_cast<void*>(blocks_[w.block] + w.offset)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }

  void pop_back() noexcept {
    TLAB_DCHECK(size_ > 0, "SegmentedVector::pop_back on an empty sequence");
    --size_;
    std::destroy_at(&(*this)[size_]);
    trim();
  }

  // truncate: removes the elements at n and after (n >= size: no-op).
  void truncate(std::size_t n) noexcept {
    while (size_ > n) {
      --size_;
      std::destroy_at(&(*this)[size_]);
    }
    trim();
  }
  void clear() noexcept { truncate(0); }

  // allocated_blocks: blocks held (used + at most one spare); for tests.
  std::size_t allocated_blocks() const noexcept { return blocks_.size(); }

  static constexpr std::size_t block_size(std::size_t block) noexcept {
    if (block == 0) return kFirst;
    return block <= kMaxBits - kFirstBits ? kFirst << (block - 1) : kMax;
  }

 private:
  struct Where {
    std::size_t block;
    std::size_t offset;
  };
  static Where where(std::size_t i) noexcept {
    if ((i >> kMaxBits) != 0) return {kMaxBits - kFirstBits + (i >> kMaxBits), i & (kMax - 1)};
    if (i < kFirst) return {0, i};
    const unsigned top = static_cast<unsigned>(std::bit_width(i)) - 1;  // kFirstBits..kMaxBits-1
    return {top - kFirstBits + 1, i ^ (std::size_t{1} << top)};
  }

  // Blocks needed for size_ elements.
  std::size_t used_blocks() const noexcept { return size_ == 0 ? 0 : where(size_ - 1).block + 1; }

  // Frees every block past the first unused one (one spare stays).
  void trim() noexcept {
    const std::size_t keep = used_blocks() + 1;
    while (blocks_.size() > keep) {
      std::allocator<T>{}.deallocate(blocks_.back(), block_size(blocks_.size() - 1));
      blocks_.pop_back();
    }
  }

  void release() noexcept {
    truncate(0);
    while (!blocks_.empty()) {
      std::allocator<T>{}.deallocate(blocks_.back(), block_size(blocks_.size() - 1));
      blocks_.pop_back();
    }
  }

  std::vector<T*> blocks_;
  std::size_t size_ = 0;
};

}  // namespace tlab
