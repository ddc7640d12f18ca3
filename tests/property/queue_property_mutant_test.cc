// tests/property/queue_property_mutant_test.cc: the queue state machine
// (queue_property_machine.h) finds a counterexample on each strategy-specific
// seeded bug, one strategy compiled with one mutant per test. The mutant every
// strategy can carry (queue_cancel_leaks_entry) is queue_property_leak_mutant_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "queue_property_machine.h"

namespace tlab::queue_property {
namespace {

// heap_unstable_ties: the model's FIFO order on equal deadlines is violated.
TEST(QueuePropertyMutantTest, FindsHeapUnstableTies) {
  expect_counterexample<BinaryHeapQueue<Counted, MP<Mutant::kHeapUnstableTies>>>(
      Mutant::kHeapUnstableTies);
}

// hashed_wheel_ignore_rounds: an entry a revolution or more away fires early.
TEST(QueuePropertyMutantTest, FindsHashedWheelIgnoreRounds) {
  expect_counterexample<HashedWheelQueue<Counted, MP<Mutant::kHashedWheelIgnoreRounds>>>(
      Mutant::kHashedWheelIgnoreRounds);
}

// hier_wheel_no_cascade: a coarse slot fires at its start, before its entries' ticks.
TEST(QueuePropertyMutantTest, FindsHierWheelNoCascade) {
  expect_counterexample<HierarchicalWheelQueue<Counted, MP<Mutant::kHierWheelNoCascade>>>(
      Mutant::kHierWheelNoCascade);
}

// wheel_no_generation_check: the per-worker wheel fires a lazily cancelled entry.
TEST(QueuePropertyMutantTest, FindsWheelNoGenerationCheck) {
  expect_counterexample<PerWorkerWheelQueue<Counted, MP<Mutant::kWheelNoGenerationCheck>>>(
      Mutant::kWheelNoGenerationCheck);
}

// wheel_bitmap_clear_on_cancel: a cancel empties a bucket's live bit while a live entry
// remains. check_after()'s check_invariants() aborts on the first such command (the
// bit is checked before next_deadline() is compared with the model), so the machine
// runs in a death-test child and the abort's message is the counterexample.
TEST(QueuePropertyMutantTest, FindsWheelBitmapClearOnCancel) {
  constexpr Mutant m = Mutant::kWheelBitmapClearOnCancel;
  ::testing::Test::RecordProperty("mutant", std::string(name_of(m)));
  using Q = PerWorkerWheelQueue<Counted, MP<m>>;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(check_queue<Q>("per_worker_wheel with mutant " + std::string(name_of(m))),
               "live bit=0");
}

// wheel_retain_cancelled_payload: a cancelled entry keeps its payload in its bucket
// until the wheel drains it, so more payloads are alive than entries are pending
// (check_after()'s retention bound) right after the Cancel.
TEST(QueuePropertyMutantTest, FindsWheelRetainCancelledPayload) {
  expect_counterexample<PerWorkerWheelQueue<Counted, MP<Mutant::kWheelRetainCancelledPayload>>>(
      Mutant::kWheelRetainCancelledPayload);
}

}  // namespace
}  // namespace tlab::queue_property
