// Tests of BinaryHeapQueue's 32-bit tie-break sequence (core/include/tlab/queue/
// binary_heap.h): equal deadlines fire in insertion order across the counter's
// wrap, because insert() renumbers the pending entries by rank first, and the
// renumbering keeps the heap valid.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tlab/queue/binary_heap.h"

namespace tlab {
namespace {

const Instant kStart = Instant::from_ns(1'000'000'000);

QueueConfig config() {
  QueueConfig cfg;
  cfg.start = kStart;
  return cfg;
}

std::vector<std::uint64_t> fire_all(BinaryHeapQueue<std::uint64_t>& q) {
  std::vector<std::uint64_t> order;
  q.expire(Instant::max(), [&](std::uint64_t&& v, Instant) { order.push_back(v); });
  return order;
}

// Ties inserted on both sides of the wrap fire FIFO; the counter restarted at the
// number of pending entries.
TEST(BinaryHeapSequenceTest, TiesStayFifoAcrossTheWrap) {
  BinaryHeapQueue<std::uint64_t> q(config());
  const Instant tie = kStart + Duration::milliseconds(5);
  std::uint64_t next = 0;
  for (int i = 0; i < 20; ++i) {
    q.insert(tie, next++);
    q.insert(kStart + Duration::milliseconds(1 + (i % 9)), 1000 + static_cast<std::uint64_t>(i));
  }
  q.set_next_sequence(0xFFFF'FFFFu - 5);
  for (int i = 0; i < 20; ++i) q.insert(tie, next++);  // wraps (renumbers) after 5
  q.check_invariants();
  EXPECT_LT(q.next_sequence(), 100u);
  std::vector<std::uint64_t> ties;
  for (std::uint64_t v : fire_all(q)) {
    if (v < 1000) ties.push_back(v);
  }
  ASSERT_EQ(ties.size(), 40u);
  for (std::uint64_t i = 0; i < 40; ++i) EXPECT_EQ(ties[i], i);
}

// renumber_sequences() on a heap with cancellations and mixed deadlines keeps the
// heap valid and the firing order what it was.
TEST(BinaryHeapSequenceTest, RenumberingKeepsTheFiringOrder) {
  auto build = [](BinaryHeapQueue<std::uint64_t>& q) {
    std::vector<TimerHandle> hs;
    for (std::uint64_t i = 0; i < 500; ++i) {
      hs.push_back(q.insert(kStart + Duration::milliseconds(static_cast<std::int64_t>(i % 13)),
                            std::uint64_t{i}));
    }
    for (std::size_t i = 0; i < hs.size(); i += 3) q.cancel(hs[i]);
  };
  BinaryHeapQueue<std::uint64_t> a(config()), b(config());
  build(a);
  build(b);
  b.renumber_sequences();
  b.check_invariants();
  EXPECT_EQ(b.next_sequence(), b.size());
  EXPECT_EQ(fire_all(a), fire_all(b));
}

// set_next_sequence refuses a value that would put new entries before pending ones.
TEST(BinaryHeapSequenceTest, SetNextSequenceRefusesGoingBack) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  BinaryHeapQueue<std::uint64_t> q(config());
  q.insert(kStart + Duration::milliseconds(1), 1);
  q.insert(kStart + Duration::milliseconds(1), 2);
  EXPECT_DEATH(q.set_next_sequence(1), "not above pending seq");
}

}  // namespace
}  // namespace tlab
