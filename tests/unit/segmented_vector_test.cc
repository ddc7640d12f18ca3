// Tests of SegmentedVector (core/include/tlab/queue/segmented_vector.h): it agrees
// with std::vector under a long random mix of push, pop, truncate and writes; every
// index has its own cell; elements past block 0 never move; memory follows the size
// (block 0 doubles to the block size, then at most one spare block); and it copies,
// moves and destroys what it holds exactly once.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "tlab/queue/segmented_vector.h"

namespace tlab {
namespace {

using Small = SegmentedVector<std::uint64_t, 2, 5>;  // block 0: 4, 8, 16, 32; then 32 each

// Block 0 doubles from kFirst to kMax; later blocks are kMax each.
TEST(SegmentedVectorTest, BlockZeroDoublesToTheBlockSize) {
  Small v;
  std::vector<std::size_t> caps;
  for (std::uint64_t i = 0; i < 100; ++i) {
    v.push_back(i);
    if (caps.empty() || caps.back() != v.block0_capacity()) caps.push_back(v.block0_capacity());
  }
  EXPECT_EQ(caps, (std::vector<std::size_t>{4, 8, 16, 32}));
  EXPECT_EQ(v.allocated_blocks(), 4u);  // 32 + 32 + 32 + 4 of the fourth
}

// Every index up to several blocks is its own cell, and a cell past block 0 keeps
// its address while the sequence grows around it.
TEST(SegmentedVectorTest, EveryIndexIsItsOwnCellAndLaterBlocksNeverMove) {
  Small v;
  std::vector<const std::uint64_t*> where;
  for (std::uint64_t i = 0; i < 300; ++i) {
    v.push_back(i * 7);
    where.push_back(&v[i]);
  }
  for (std::uint64_t i = 0; i < 300; ++i) {
    EXPECT_EQ(v[i], i * 7) << i;
    if (i >= Small::kMax) {
      EXPECT_EQ(&v[i], where[i]) << i;
    }
  }
}

// A random mix of operations against std::vector; after each step the contents
// agree and the blocks held are those the size needs plus at most one spare.
TEST(SegmentedVectorTest, AgreesWithStdVectorAndGivesBlocksBack) {
  std::mt19937_64 rng(7);
  Small v;
  std::vector<std::uint64_t> ref;
  for (int step = 0; step < 20000; ++step) {
    const auto op = rng() % 10;
    if (op < 5) {
      const std::uint64_t x = rng();
      v.push_back(x);
      ref.push_back(x);
    } else if (op < 7 && !ref.empty()) {
      v.pop_back();
      ref.pop_back();
    } else if (op < 8) {
      const std::size_t n = ref.empty() ? 0 : rng() % (ref.size() + 1);
      v.truncate(n);
      ref.resize(std::min(n, ref.size()));
    } else if (!ref.empty()) {
      const std::size_t i = rng() % ref.size();
      v[i] = ref[i] = rng();
    }
    ASSERT_EQ(v.size(), ref.size()) << step;
    if (step % 97 == 0) {
      for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(v[i], ref[i]) << step << " " << i;
    }
    // Blocks the size needs (block 0 counts once allocated), plus at most one spare.
    const std::size_t need = ref.empty() ? 0 : ((ref.size() - 1) / Small::kMax) + 1;
    ASSERT_LE(v.allocated_blocks(), std::max<std::size_t>(need, 1) + 1) << "size " << ref.size();
    ASSERT_GE(v.allocated_blocks(), need) << "size " << ref.size();
  }
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_LE(v.allocated_blocks(), 2u);
}

// Elements are constructed and destroyed exactly once, through copy, move and
// destruction (a shared_ptr's use count tells).
TEST(SegmentedVectorTest, CopiesMovesAndDestroysEachElementOnce) {
  auto token = std::make_shared<int>(1);
  {
    SegmentedVector<std::shared_ptr<int>, 1, 3> a;
    for (int i = 0; i < 50; ++i) a.push_back(token);
    EXPECT_EQ(token.use_count(), 51);
    SegmentedVector<std::shared_ptr<int>, 1, 3> b(a);
    EXPECT_EQ(token.use_count(), 101);
    SegmentedVector<std::shared_ptr<int>, 1, 3> c(std::move(a));
    EXPECT_EQ(token.use_count(), 101);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    b.truncate(10);
    EXPECT_EQ(token.use_count(), 61);
    c = b;
    EXPECT_EQ(token.use_count(), 21);
    b.pop_back();
    EXPECT_EQ(token.use_count(), 20);
  }
  EXPECT_EQ(token.use_count(), 1);
}

// Move-only elements work (the wheels' payloads may be move-only).
TEST(SegmentedVectorTest, HoldsMoveOnlyElements) {
  SegmentedVector<std::unique_ptr<int>> v;
  for (int i = 0; i < 100; ++i) v.push_back(std::make_unique<int>(i));
  SegmentedVector<std::unique_ptr<int>> w(std::move(v));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(*w[static_cast<std::size_t>(i)], i);
  static_assert(!std::is_copy_constructible_v<SegmentedVector<std::unique_ptr<int>>>);
}

}  // namespace
}  // namespace tlab
