// tlab/queue/bucket_bitmap.h: BucketBitmap, one bit per timing-wheel bucket and the
// circular "next set bit at or after the cursor" search a wheel's next_deadline()
// needs.
//
// A wheel keeps a bit per bucket (occupied, or holding a live entry) so that finding
// the next bucket worth visiting skips 64 empty buckets per word with countr_zero
// instead of looking at each bucket (the occupancy bitmaps of tokio's wheel levels
// and of the Linux timer wheel). Tuned for a few hundred to a few thousand buckets.
//
//   set / clear / assign / test   O(1)
//   reset                         O(buckets / 64)
//   next_set(from)                O(buckets / 64): the first set bit at or after
//                                 `from`, wrapping past the last bucket to bucket 0
//
// Ground rules: single owner, no synchronisation; the owning queue's rules apply.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tlab {

class BucketBitmap {
 public:
  // tlab::BucketBitmap::BucketBitmap: `buckets` bits, all clear.
  explicit BucketBitmap(std::uint32_t buckets = 0) : words_((buckets + 63) / 64, 0) {}

  void set(std::uint32_t b) noexcept { words_[b >> 6] |= bit(b); }
  void clear(std::uint32_t b) noexcept { words_[b >> 6] &= ~bit(b); }
  void assign(std::uint32_t b, bool on) noexcept { on ? set(b) : clear(b); }
  bool test(std::uint32_t b) const noexcept { return (words_[b >> 6] & bit(b)) != 0; }
  void reset() noexcept { std::fill(words_.begin(), words_.end(), std::uint64_t{0}); }

  // tlab::BucketBitmap::next_set: the first set bit at or after `from`, else the
  // first set bit below it (the search wraps once); nullopt if no bit is set.
  // Requires: from < the constructor's `buckets`.
  std::optional<std::uint32_t> next_set(std::uint32_t from) const noexcept {
    const std::size_t words = words_.size();
    std::size_t w = from >> 6;
    std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (from & 63));
    for (std::size_t k = 0; k <= words; ++k) {  // the first word twice: its low bits last
      if (bits != 0) return static_cast<std::uint32_t>((w << 6) + std::countr_zero(bits));
      w = (w + 1) % words;
      bits = words_[w];
    }
    return std::nullopt;
  }

 private:
  static constexpr std::uint64_t bit(std::uint32_t b) noexcept {
    return std::uint64_t{1} << (b & 63);
  }

  std::vector<std::uint64_t> words_;
};

}  // namespace tlab
