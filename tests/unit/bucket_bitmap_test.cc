// Tests for BucketBitmap (queue/bucket_bitmap.h): bit updates and the circular
// next_set() search across word boundaries and past the last bucket.
#include "tlab/queue/bucket_bitmap.h"

#include <gtest/gtest.h>

namespace tlab {
namespace {

// set/clear/assign/test touch exactly the named bit, also in later words.
TEST(BucketBitmap, BitsAreIndependent) {
  BucketBitmap m(200);
  m.set(3);
  m.set(130);
  EXPECT_TRUE(m.test(3));
  EXPECT_TRUE(m.test(130));
  EXPECT_FALSE(m.test(2));
  EXPECT_FALSE(m.test(131));
  m.assign(3, false);
  m.assign(64, true);
  EXPECT_FALSE(m.test(3));
  EXPECT_TRUE(m.test(64));
  m.clear(130);
  EXPECT_FALSE(m.test(130));
  m.reset();
  EXPECT_FALSE(m.test(64));
  EXPECT_EQ(m.next_set(0), std::nullopt);
}

// next_set finds the first set bit at or after `from`, crossing words, and wraps to
// bits below `from` (in the same word too) only when none is at or after it.
TEST(BucketBitmap, NextSetSearchesForwardThenWraps) {
  BucketBitmap m(512);
  m.set(5);
  m.set(70);
  m.set(500);
  EXPECT_EQ(m.next_set(0), 5u);
  EXPECT_EQ(m.next_set(5), 5u);
  EXPECT_EQ(m.next_set(6), 70u);
  EXPECT_EQ(m.next_set(71), 500u);
  EXPECT_EQ(m.next_set(501), 5u) << "wraps past the last bucket";
  m.clear(5);
  m.clear(500);
  EXPECT_EQ(m.next_set(71), 70u) << "wraps into the low bits of the starting word";
}

// A ring smaller than one word (16 buckets) wraps inside its single word.
TEST(BucketBitmap, SmallRingWrapsWithinOneWord) {
  BucketBitmap m(16);
  m.set(2);
  EXPECT_EQ(m.next_set(14), 2u);
  EXPECT_EQ(m.next_set(2), 2u);
}

}  // namespace
}  // namespace tlab
