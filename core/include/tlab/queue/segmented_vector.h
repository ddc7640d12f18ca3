// tlab/queue/segmented_vector.h: SegmentedVector, a random-access sequence stored
// in fixed-size blocks, so that growing never copies more than one block.
//
// Why: std::vector doubles. A queue of 10M entries in a vector holds up to twice
// the memory it uses (16.8M slots for 10M binary-heap elements: 10.8 bytes of slack
// per pending timer) and copies every element at each doubling; a wheel's 512
// bucket vectors each carry their own doubling slack (about 0.7x of the entries on
// average, measured: per_worker_wheel at 73.7 bytes per timer where its entries
// need 44). Here, past the first block, growth adds one block and copies nothing,
// so the unused storage is less than two blocks, and shrinking gives blocks back.
//
// Layout (as queue/slab.h's chunks): block 0 grows like a vector, from kFirst
// elements doubling up to kMax (moving its elements each time), so a small
// sequence costs what a vector costs; every later block holds kMax elements and
// never moves. Index i is element i & (kMax - 1) of block i >> kMaxBits: a shift, a
// mask and one load of the block pointer, no branch (a tiered layout with a
// bit_width per access cost the 4-ary heap about 30% of its insert+cancel).
//
//   operator[]   O(1)
//   push_back    O(1) amortised: block 0 doubles up to kMax elements (at most
//                2 * kMax moves in all); then one allocation per kMax elements
//   pop_back     O(1); frees a block once two blocks past the end are empty
//   truncate(n)  O(removed elements + freed blocks)
//   clear        O(size + blocks); keeps block 0
// Memory: sizeof(T) * size, plus < 2 blocks of kMax unused past block 0 (the last
// block's tail and one spare, kept so that push/pop at a block boundary does not
// allocate every time), plus block 0's doubling slack while it is the only
// block, plus 8 bytes per block in the block table (a std::vector).
//
// Ground rules: single owner, no synchronisation. References to elements at index
// >= kMax stay valid until the element is removed; those in block 0 move while it
// grows, as a vector's do.
#pragma once

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
  static_assert(kFirstBits <= kMaxBits && kMaxBits < 32);

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
      : blocks_(std::move(o.blocks_)),
        size_(std::exchange(o.size_, 0)),
        cap0_(std::exchange(o.cap0_, 0)) {
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
      cap0_ = std::exchange(o.cap0_, 0);
    }
    return *this;
  }
  ~SegmentedVector() { release(); }

  void swap(SegmentedVector& o) noexcept {
    blocks_.swap(o.blocks_);
    std::swap(size_, o.size_);
    std::swap(cap0_, o.cap0_);
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  T& operator[](std::size_t i) noexcept { return blocks_[i >> kMaxBits][i & (kMax - 1)]; }
  const T& operator[](std::size_t i) const noexcept {
    return blocks_[i >> kMaxBits][i & (kMax - 1)];
  }
  T& back() noexcept { return (*this)[size_ - 1]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    const std::size_t block = size_ >> kMaxBits;
    if (block == 0) {
      if (size_ == cap0_) grow_block0();
    } else if (block == blocks_.size()) {
      blocks_.reserve(blocks_.size() + 1);  // may throw before anything is allocated
      blocks_.push_back(std::allocator<T>{}.allocate(kMax));
    }
    T* p = ::new (static_cast<void*>(&(*this)[size_])) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }

  void pop_back() noexcept {
    TLAB_DCHECK(size_ > 0, "SegmentedVector::pop_back on an empty sequence");
    --size_;
    std::destroy_at(&(*this)[size_]);
    if ((size_ & (kMax - 1)) == 0) trim();  // only a block boundary can free one
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

  // allocated_blocks / block0_capacity: storage held; for tests.
  std::size_t allocated_blocks() const noexcept { return blocks_.size(); }
  std::size_t block0_capacity() const noexcept { return cap0_; }

 private:
  // Block 0 is full below kMax: move it into one twice as large (at most kMax).
  void grow_block0() {
    const std::size_t cap = cap0_ == 0 ? kFirst : (cap0_ * 2 < kMax ? cap0_ * 2 : kMax);
    T* fresh = std::allocator<T>{}.allocate(cap);
    if (blocks_.empty()) {
      try {
        blocks_.push_back(fresh);
      } catch (...) {
        std::allocator<T>{}.deallocate(fresh, cap);
        throw;
      }
      cap0_ = cap;
      return;
    }
    T* old = blocks_[0];
    for (std::size_t i = 0; i < size_; ++i) {
      ::new (static_cast<void*>(fresh + i)) T(std::move_if_noexcept(old[i]));
      std::destroy_at(old + i);
    }
    std::allocator<T>{}.deallocate(old, cap0_);
    blocks_[0] = fresh;
    cap0_ = cap;
  }

  // Frees every block past the first unused one after block 0 (one spare stays).
  void trim() noexcept {
    const std::size_t used = size_ == 0 ? 1 : ((size_ - 1) >> kMaxBits) + 1;
    while (blocks_.size() > used + 1) {
      std::allocator<T>{}.deallocate(blocks_.back(), kMax);
      blocks_.pop_back();
    }
  }

  void release() noexcept {
    truncate(0);
    while (blocks_.size() > 1) {
      std::allocator<T>{}.deallocate(blocks_.back(), kMax);
      blocks_.pop_back();
    }
    if (!blocks_.empty()) {
      std::allocator<T>{}.deallocate(blocks_[0], cap0_);
      blocks_.clear();
    }
    cap0_ = 0;
  }

  std::vector<T*> blocks_;
  std::size_t size_ = 0;
  std::size_t cap0_ = 0;  // block 0's capacity (0: not allocated yet)
};

}  // namespace tlab
