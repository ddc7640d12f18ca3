// tlab/executor/striped_counter.h: StripedCounter, a monotonic counter that many
// threads increment without contending on one cache line.
//
// Seed 003's "StripedAtomicU64 on each wheel (e.g. 32 cache-line aligned stripes)":
// any thread that cancels or reschedules a timer adds one garbage unit to the wheel
// holding the stale entry; the owning worker reads the sum to decide whether to
// scrub. 32 stripes: with more stripes than threads the chance that two cancellers
// share a stripe is small, and a sum() of 32 lines (2 KiB) is cheap next to a scrub.
//
//   add     O(1): one relaxed fetch_add on this thread's stripe
//   sum     O(kStripes) relaxed loads; not a snapshot (concurrent adds may or may
//           not be counted), which is all a cleanup heuristic needs
//
// Ground rules: any thread may add(); any thread may sum(). The counter only grows;
// a reader that wants "outstanding" keeps its own consumed count (the executor's
// worker does).
// Memory ordering: relaxed throughout. The value orders nothing; it is a hint.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>

#include "tlab/base/annotations.h"

namespace tlab {

template <class P, std::size_t kStripes = 32>
class StripedCounter {
  static_assert((kStripes & (kStripes - 1)) == 0, "kStripes must be a power of two");

 public:
  // tlab::StripedCounter::add: adds n to the calling thread's stripe.
  void add(std::uint64_t n = 1) noexcept {
    // relaxed: a statistic; pairs with nothing (sum() is a heuristic read).
    stripes_[stripe_index()].value.fetch_add(n, std::memory_order::relaxed);
  }

  // tlab::StripedCounter::sum: the total of all stripes.
  std::uint64_t sum() const noexcept {
    std::uint64_t s = 0;
    for (const auto& st : stripes_) {
      s += st.value.load(std::memory_order::relaxed);  // relaxed: see add()
    }
    return s;
  }

 private:
  struct alignas(kCacheLine) Stripe {
    typename P::template Atomic<std::uint64_t> value{0};
  };

  // A thread keeps one stripe for its lifetime: hashed from its id once.
  static std::size_t stripe_index() noexcept {
    thread_local const std::size_t index =
        std::hash<std::thread::id>{}(std::this_thread::get_id()) & (kStripes - 1);
    return index;
  }

  std::array<Stripe, kStripes> stripes_;
};

}  // namespace tlab
