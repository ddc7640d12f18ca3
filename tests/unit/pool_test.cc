// Tests for tlab/sync/pool.h (labels unit, tsan): leases return their object,
// checkout waits and times out, a returned object skips a checkout that already
// timed out, and under contention no object is lent twice and every object is back
// at the end. Mutant kill: kSemaphoreLostPermit (the pool's semaphore leaks a
// permit, so an object can never be checked out again), by the pinned race (a
// fault-point gate) in every run; the contention run catches it only when a return
// happens to meet an expired checkout (pool_test.slow, label slow).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/manual_timer_source.h"
#include "support/mutant_platform.h"
#include "support/sync_test_util.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/sync/pool.h"

namespace tlab {
namespace {

using testing::ManualTimerSource;
using testing::MutantPlatform;
using testing::spin_until;
using IntPool = Pool<int, StdPlatform>;

constexpr Duration kTen = Duration::milliseconds(10);

// A lease hands out an object and gives it back when destroyed.
TEST(Pool, LeaseReturnsObjectOnDestruction) {
  ManualTimerSource src;
  IntPool pool({10, 20});
  EXPECT_EQ(pool.size(), 2u);
  {
    auto a = pool.checkout_for(src, kTen);
    ASSERT_TRUE(a.has_value());
    EXPECT_TRUE(**a == 10 || **a == 20);
    EXPECT_EQ(pool.available(), 1u);
  }
  EXPECT_EQ(pool.available(), 2u);
  EXPECT_EQ(src.scheduled(), 0u) << "a free object needs no timer";
}

// Moving a lease moves the duty to return; reset() returns early and only once.
TEST(Pool, LeaseMoveAndReset) {
  IntPool pool({1});
  auto a = pool.try_checkout();
  ASSERT_TRUE(a.has_value());
  IntPool::Lease b = std::move(*a);
  EXPECT_EQ(a->get(), nullptr);
  EXPECT_EQ(*b, 1);
  EXPECT_EQ(pool.available(), 0u);
  b.reset();
  b.reset();
  EXPECT_EQ(pool.available(), 1u);
  EXPECT_EQ(pool.semaphore().available(), 1u);
}

// An empty pool: try_checkout fails, checkout_for(0) times out, a negative delay throws.
TEST(Pool, EmptyPoolTimesOut) {
  ManualTimerSource src;
  src.set_fire_inline_when_due(true);
  IntPool pool({7});
  auto held = pool.try_checkout();
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(pool.try_checkout().has_value());
  EXPECT_FALSE(pool.checkout_for(src, Duration::zero()).has_value());
  EXPECT_THROW(pool.checkout_for(src, Duration::nanoseconds(-1)), std::invalid_argument);
}

// A checkout parked on another thread gets the object the moment a lease ends.
TEST(Pool, ParkedCheckoutGetsReturnedObject) {
  ManualTimerSource src;
  IntPool pool({42});
  auto held = pool.try_checkout();
  ASSERT_TRUE(held.has_value());
  std::atomic<int> got{-1};
  std::thread t([&] {
    auto l = pool.checkout_for(src, Duration::max());
    got = l ? **l : 0;
  });
  ASSERT_TRUE(spin_until([&] { return pool.semaphore().waiting() == 1; }));
  held->reset();
  t.join();
  EXPECT_EQ(got, 42);
  EXPECT_EQ(pool.available(), 1u);
  EXPECT_EQ(src.pending(), 0u);
}

// The platform of the pinned race: the timer's win is held at kWaiterAfterResolve.
using Gated = testing::GatedPlatform<StdPlatform, FaultPoint::kWaiterAfterResolve>;

// The pinned race (testing::releaser_meets_expired_waiter) on a pool whose one
// object is lent: the lease's return meets a checkout whose timer has already won.
// The return must lose that resolve and leave the object to the next checkout.
// Returns whether try_checkout() gets it afterwards, as it must.
template <class P>
bool return_meets_expired_checkout() {
  Pool<int, P> pool({42});
  auto held = pool.try_checkout();
  EXPECT_TRUE(held.has_value());
  testing::releaser_meets_expired_waiter<P>(
      [&](ManualTimerSource& src, Waiter<P>& w) {
        return pool.checkout_for(src, kTen, w).has_value();
      },
      [&] { return pool.semaphore().waiting(); }, [&] { held->reset(); });
  return pool.try_checkout().has_value();
}

// A returned object skips the checkout that already timed out and stays checkable.
TEST(PoolRace, ReturnSkipsExpiredCheckout) { EXPECT_TRUE(return_meets_expired_checkout<Gated>()); }

// Mutant kSemaphoreLostPermit: the permit handed to the expired checkout vanishes,
// so the returned object can never be checked out again. Every run.
TEST(PoolRaceMutant, LostPermitStrandsAnObject) {
  using Bug = MutantPlatform<Gated, Mutant::kSemaphoreLostPermit>;
  EXPECT_FALSE(return_meets_expired_checkout<Bug>());
}

struct PoolRun {
  std::uint64_t leases = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t double_lends = 0;    // an object found already in use
  std::size_t checkable_at_end = 0;  // objects try_checkout() can still get
};

// `workers` threads check out of a pool of `size` ints (each int is its index)
// with short virtual timeouts (testing::run_contention).
template <class P>
PoolRun contend(int size, int workers, int ops) {
  ManualTimerSource src;
  std::vector<int> ids;
  for (int i = 0; i < size; ++i) ids.push_back(i);
  Pool<int, P> pool(std::move(ids));
  std::vector<std::atomic<int>> in_use(static_cast<std::size_t>(size));
  std::atomic<std::uint64_t> leases{0}, timeouts{0}, double_lends{0};
  testing::run_contention<P>(src, workers, ops, [&](const testing::Contender<P>& c) {
    auto lease = pool.checkout_for(src, c.timeout, c.waiter);
    if (!lease) {
      timeouts.fetch_add(1);
      return;
    }
    auto& flag = in_use[static_cast<std::size_t>(**lease)];
    if (flag.fetch_add(1) != 0) double_lends.fetch_add(1);
    c.hold();
    flag.fetch_sub(1);
    leases.fetch_add(1);
  });
  PoolRun out{leases.load(), timeouts.load(), double_lends.load(), 0};
  std::vector<typename Pool<int, P>::Lease> all;
  while (auto l = pool.try_checkout()) all.push_back(std::move(*l));
  out.checkable_at_end = all.size();
  return out;
}

// Four threads share two objects with timeouts: no object is ever lent twice,
// both outcomes happen (certain: Contender::hold), and both objects can be checked
// out at the end.
TEST(PoolRace, NoDoubleLendAndAllObjectsReturn) {
  const auto r = contend<StressPlatform>(2, 4, 300);
  EXPECT_EQ(r.double_lends, 0u);
  EXPECT_EQ(r.checkable_at_end, 2u);
  EXPECT_GT(r.leases, 0u);
  EXPECT_GT(r.timeouts, 0u);
}

// Mutant kSemaphoreLostPermit under contention: a permit leaks, so at the end an
// object sits in the pool that no checkout can reach. Up to 5 runs. Whether a
// return meets an expired checkout is left to the scheduler, so this runs as
// pool_test.slow (label slow); CI's catch is the pinned race above.
TEST(PoolRaceMutantOnRealTime, ContentionStrandsAnObject) {
  using Bug = MutantPlatform<StressPlatform, Mutant::kSemaphoreLostPermit>;
  bool caught = false;
  for (int run = 0; run < 5 && !caught; ++run)
    caught = contend<Bug>(2, 4, 300).checkable_at_end < 2;
  EXPECT_TRUE(caught);
}

}  // namespace
}  // namespace tlab
