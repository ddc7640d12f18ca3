// Tests for PerWorkerWheelQueue (queue/per_worker_wheel.h): rounding up to the tick,
// lazy cancel with exact stale counters, lazy compaction, the round-robin scrub,
// slot generation reuse, payloads released at cancel, and the mutants it ships with.
#include "tlab/queue/per_worker_wheel.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/mutant_platform.h"

namespace tlab {
namespace {

constexpr Duration kTick = Duration::milliseconds(1);

Instant at_tick(double ticks) {
  return Instant::from_ns(static_cast<std::int64_t>(ticks * static_cast<double>(kTick.ns())));
}

template <class P = StdPlatform>
using Wheel = PerWorkerWheelQueue<std::string, P>;

QueueConfig config(std::uint32_t slots = 16) {
  QueueConfig c;
  c.tick = kTick;
  c.wheel_slots = slots;
  return c;
}

template <class Q>
std::vector<std::string> expire(Q& q, Instant now) {
  std::vector<std::string> out;
  q.expire(now, [&](std::string&& s, Instant) { out.push_back(std::move(s)); });
  q.check_invariants();
  return out;
}

// A deadline between ticks is rounded up: it does not fire at the tick before.
TEST(PerWorkerWheel, DeadlineRoundsUpToTheNextTick) {
  Wheel<> q(config());
  q.insert(at_tick(2.5), "a");
  EXPECT_TRUE(expire(q, at_tick(2)).empty());
  EXPECT_EQ(expire(q, at_tick(3)), std::vector<std::string>{"a"});
  EXPECT_EQ(q.next_deadline(), std::nullopt);
}

// Within one revolution, next_deadline() is the due instant (>= the deadline), at which
// expire fires it.
TEST(PerWorkerWheel, NextDeadlineIsTheDueInstant) {
  Wheel<> q(config());
  q.insert(at_tick(7.2), "x");
  q.insert(at_tick(4.1), "y");
  EXPECT_EQ(q.next_deadline(), at_tick(5));
  EXPECT_EQ(expire(q, *q.next_deadline()), std::vector<std::string>{"y"});
}

// cancel() leaves the entry in its bucket but counts it stale; size() counts live only.
TEST(PerWorkerWheel, LazyCancelCountsStaleWithoutUnlinking) {
  Wheel<> q(config());
  const TimerHandle a = q.insert(at_tick(3), "a");
  q.insert(at_tick(3), "b");
  q.insert(at_tick(3 + 16), "c");  // same bucket, next revolution
  EXPECT_TRUE(q.cancel(a));
  EXPECT_FALSE(q.cancel(a));
  EXPECT_FALSE(q.contains(a));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.garbage(), 1u);
  EXPECT_EQ(q.stale_in_bucket_of_tick(3), 1u);
  EXPECT_EQ(q.stored_entries(), 3u);
  q.check_invariants();
  EXPECT_EQ(expire(q, at_tick(3)), std::vector<std::string>{"b"});
  EXPECT_EQ(q.garbage(), 0u);  // the due stale entry was dropped by the drain
  EXPECT_EQ(q.stored_entries(), 1u);
}

// Draining a bucket over the stale threshold also drops its not-yet-due stale entries.
TEST(PerWorkerWheel, DrainCompactsABucketOverTheThreshold) {
  Wheel<> q(config());
  q.insert(at_tick(5), "now");
  std::vector<TimerHandle> far;
  for (int i = 0; i < 16; ++i) far.push_back(q.insert(at_tick(5 + 16), "far"));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(q.cancel(far[i]));  // 10 >= 8 and 10*4 >= 17
  EXPECT_EQ(expire(q, at_tick(5)), std::vector<std::string>{"now"});
  EXPECT_EQ(q.counters().compactions, 1u);
  EXPECT_EQ(q.garbage(), 0u);
  EXPECT_EQ(q.stored_entries(), 6u);
  EXPECT_EQ(expire(q, at_tick(21)).size(), 6u);
}

// Below the threshold the drain keeps not-yet-due stale entries (cheap path).
TEST(PerWorkerWheel, DrainBelowTheThresholdKeepsFarStaleEntries) {
  Wheel<> q(config());
  q.insert(at_tick(5), "now");
  std::vector<TimerHandle> far;
  for (int i = 0; i < 16; ++i) far.push_back(q.insert(at_tick(5 + 16), "far"));
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(q.cancel(far[i]));
  expire(q, at_tick(5));
  EXPECT_EQ(q.counters().compactions, 0u);
  EXPECT_EQ(q.garbage(), 7u);
  EXPECT_EQ(q.stale_in_bucket_of_tick(5), 7u);
}

// scrub(k) visits k buckets round-robin and rebuilds only the ones over the threshold.
TEST(PerWorkerWheel, ScrubVisitsBucketsRoundRobin) {
  Wheel<> q(config());
  std::vector<TimerHandle> hs;
  for (int i = 0; i < 12; ++i) hs.push_back(q.insert(at_tick(3 + 16 * 4), "x"));
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(q.cancel(hs[i]));
  EXPECT_EQ(q.scrub(2), 0u);  // buckets 0, 1
  EXPECT_EQ(q.garbage(), 9u);
  EXPECT_EQ(q.scrub(2), 9u);  // buckets 2, 3
  EXPECT_EQ(q.counters().scrub_rebuilds, 1u);
  EXPECT_EQ(q.garbage(), 0u);
  EXPECT_EQ(q.size(), 3u);
  q.check_invariants();
  EXPECT_EQ(expire(q, at_tick(3 + 16 * 4)).size(), 3u);
}

// scrub_if() removes live entries the owner declares garbage; they never fire.
TEST(PerWorkerWheel, ScrubIfRemovesOwnerDeclaredGarbage) {
  Wheel<> q(config());
  q.insert(at_tick(1), "keep");
  q.insert(at_tick(1), "drop");
  EXPECT_EQ(q.scrub_if(16, [](const std::string& s) { return s == "drop"; }), 1u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(expire(q, at_tick(1)), std::vector<std::string>{"keep"});
}

// A freed slot is reused with a new generation: the old handle and its stale entry
// stay dead while the new entry fires.
TEST(PerWorkerWheel, SlotReuseBumpsTheGeneration) {
  Wheel<> q(config());
  const TimerHandle a = q.insert(at_tick(2), "a");
  ASSERT_TRUE(q.cancel(a));
  const TimerHandle b = q.insert(at_tick(2), "b");
  EXPECT_EQ(b.index, a.index);
  EXPECT_NE(b.generation, a.generation);
  EXPECT_FALSE(q.contains(a));
  EXPECT_FALSE(q.cancel(a));
  EXPECT_TRUE(q.contains(b));
  q.check_invariants();
  EXPECT_EQ(expire(q, at_tick(2)), std::vector<std::string>{"b"});
}

// reschedule() keeps the handle, tombstones the old entry and fires once, at the new time.
TEST(PerWorkerWheel, RescheduleMovesTheEntry) {
  Wheel<> q(config());
  const TimerHandle h = q.insert(at_tick(2), "r");
  EXPECT_TRUE(q.reschedule(h, at_tick(6)));
  EXPECT_TRUE(q.contains(h));
  EXPECT_EQ(q.garbage(), 1u);
  q.check_invariants();
  EXPECT_TRUE(expire(q, at_tick(5)).empty());
  EXPECT_EQ(expire(q, at_tick(6)), std::vector<std::string>{"r"});
  EXPECT_FALSE(q.reschedule(h, at_tick(9)));
}

// A gap longer than a revolution fires everything due, in nondecreasing due order;
// an entry inserted already overdue fires on the next expire.
TEST(PerWorkerWheel, LongGapFiresInDueOrder) {
  Wheel<> q(config(4));
  q.insert(at_tick(9), "9");
  q.insert(at_tick(2), "2");
  q.insert(at_tick(5), "5");
  q.insert(at_tick(30), "30");
  EXPECT_EQ(expire(q, at_tick(20)), (std::vector<std::string>{"2", "5", "9"}));
  q.insert(at_tick(1), "late");
  EXPECT_EQ(expire(q, at_tick(20)), std::vector<std::string>{"late"});
}

// take_all() empties the wheel, handing out live entries only.
TEST(PerWorkerWheel, TakeAllHandsOutLiveEntries) {
  Wheel<> q(config());
  q.insert(at_tick(1), "a");
  const TimerHandle b = q.insert(at_tick(100), "b");
  q.insert(at_tick(100), "c");
  ASSERT_TRUE(q.cancel(b));
  std::vector<std::string> out;
  EXPECT_EQ(q.take_all([&](std::string&& s, Instant) { out.push_back(std::move(s)); }), 2u);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.garbage(), 0u);
  q.check_invariants();
}

// Time going backwards fails loudly.
TEST(PerWorkerWheelDeathTest, TimeGoingBackwardsAborts) {
  Wheel<> q(config());
  expire(q, at_tick(5));
  EXPECT_DEATH(expire(q, at_tick(4)), "time going backwards");
}

// The live-bucket bitmap wraps: after the cursor passes the top bucket, the next live
// bucket is found at the bottom, and a bucket whose live entry is a revolution out
// gives an early (lower) bound that one expire() at it moves on.
TEST(PerWorkerWheel, NextDeadlineBitmapWrapsAndBoundsRounds) {
  Wheel<> q(config(16));
  EXPECT_TRUE(expire(q, at_tick(13)).empty());
  const TimerHandle near = q.insert(at_tick(14), "near");
  q.insert(at_tick(18), "wrapped");  // bucket 2, after the wrap
  EXPECT_EQ(q.next_deadline(), at_tick(14));
  EXPECT_TRUE(q.cancel(near));  // bucket 14 now holds only garbage: skipped
  q.check_invariants();
  EXPECT_EQ(q.next_deadline(), at_tick(18));
  EXPECT_EQ(expire(q, *q.next_deadline()), std::vector<std::string>{"wrapped"});
  q.insert(at_tick(35), "round");  // bucket 3, one revolution past tick 19
  q.insert(at_tick(20), "soon");   // bucket 4
  EXPECT_EQ(q.next_deadline(), at_tick(19)) << "bucket 3's next visit: a lower bound";
  EXPECT_TRUE(expire(q, at_tick(19)).empty());
  EXPECT_EQ(q.next_deadline(), at_tick(20));
  EXPECT_EQ(expire(q, at_tick(20)), std::vector<std::string>{"soon"});
  EXPECT_EQ(q.next_deadline(), at_tick(35));
}

// A cancel keeps the bucket's live bit while another live entry shares the bucket, and
// clears it with the last one; a reschedule away counts the same.
TEST(PerWorkerWheel, NextDeadlineBitmapFollowsCancelAndReschedule) {
  Wheel<> q(config(16));
  const TimerHandle a = q.insert(at_tick(3), "a");
  const TimerHandle b = q.insert(at_tick(3), "b");
  const TimerHandle c = q.insert(at_tick(5), "c");
  EXPECT_TRUE(q.cancel(a));
  q.check_invariants();
  EXPECT_EQ(q.next_deadline(), at_tick(3)) << "b is still live in bucket 3";
  EXPECT_TRUE(q.reschedule(b, at_tick(9)));
  q.check_invariants();
  EXPECT_EQ(q.next_deadline(), at_tick(5));
  EXPECT_TRUE(q.cancel(c));
  EXPECT_EQ(q.next_deadline(), at_tick(9));
  EXPECT_EQ(expire(q, at_tick(9)), std::vector<std::string>{"b"});
  EXPECT_EQ(q.next_deadline(), std::nullopt);
  EXPECT_EQ(q.garbage(), 0u);
}

// Entries inserted already due (the overdue bucket) bound next_deadline() by their
// own due tick; once cancelled or fired they no longer count, and take_all clears all.
TEST(PerWorkerWheel, NextDeadlineCoversTheOverdueBucket) {
  Wheel<> q(config(16));
  EXPECT_TRUE(expire(q, at_tick(10)).empty());
  q.insert(at_tick(12), "later");
  const TimerHandle past = q.insert(at_tick(4), "past");
  q.insert(at_tick(7), "past2");
  q.check_invariants();
  EXPECT_EQ(q.next_deadline(), at_tick(4));
  EXPECT_TRUE(q.cancel(past));
  EXPECT_LE(*q.next_deadline(), at_tick(7));
  EXPECT_EQ(expire(q, at_tick(10)), std::vector<std::string>{"past2"});
  EXPECT_EQ(q.next_deadline(), at_tick(12));
  q.insert(at_tick(1), "past3");
  EXPECT_EQ(q.next_deadline(), at_tick(1));
  EXPECT_EQ(q.take_all([](std::string&&, Instant) {}), 2u);
  q.check_invariants();
  EXPECT_EQ(q.next_deadline(), std::nullopt);
}

// The check: after cancelling one of two entries that share the earliest bucket,
// next_deadline() is still no later than the survivor's due instant.
template <class P>
bool bound_survives_a_shared_bucket_cancel() {
  Wheel<P> q(config(16));
  const TimerHandle a = q.insert(at_tick(3), "a");
  q.insert(at_tick(3), "b");
  q.insert(at_tick(6), "c");
  q.cancel(a);
  return q.next_deadline() <= at_tick(3);
}

// The check passes on the real wheel; wheel_bitmap_clear_on_cancel reports tick 6 (the
// owner would oversleep b) and fails check_invariants().
TEST(PerWorkerWheel, BitmapMutantSkipsALiveBucket) {
  using Mutated = testing::MutantPlatform<StdPlatform, Mutant::kWheelBitmapClearOnCancel>;
  EXPECT_TRUE(bound_survives_a_shared_bucket_cancel<StdPlatform>());
  EXPECT_FALSE(bound_survives_a_shared_bucket_cancel<Mutated>());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Wheel<Mutated> q(config(16));
        const TimerHandle a = q.insert(at_tick(3), "a");
        q.insert(at_tick(3), "b");
        q.cancel(a);
        q.check_invariants();
      },
      "live bit=0");
}

// The check: a cancelled entry never reaches the sink. Returns whether it held.
template <class P>
bool cancelled_entries_stay_silent() {
  Wheel<P> q(config());
  std::vector<TimerHandle> hs;
  for (int i = 0; i < 8; ++i) hs.push_back(q.insert(at_tick(1 + i), "v" + std::to_string(i)));
  bool all_cancelled = true;
  for (int i = 0; i < 8; i += 2) all_cancelled &= q.cancel(hs[i]);
  std::size_t fired = 0;
  q.expire(at_tick(20), [&](std::string&&, Instant) { ++fired; });
  return all_cancelled && fired == 4;
}

// The check passes on the real wheel and fails on both mutants.
TEST(PerWorkerWheel, MutantsFireCancelledEntries) {
  EXPECT_TRUE(cancelled_entries_stay_silent<StdPlatform>());
  EXPECT_FALSE((cancelled_entries_stay_silent<
                testing::MutantPlatform<StdPlatform, Mutant::kWheelNoGenerationCheck>>()));
  EXPECT_FALSE((cancelled_entries_stay_silent<
                testing::MutantPlatform<StdPlatform, Mutant::kQueueCancelLeaksEntry>>()));
}

// The check: cancelled and rescheduled-away entries far from their buckets hold no
// payload. Eight entries share one shared_ptr 100+ ticks out (not drained); four are
// cancelled and one is rescheduled. Returns whether exactly the four pending entries
// still own a reference, while all nine entries (tombstones included) stay stored:
// cancel is still lazy.
template <class P>
bool cancelled_payloads_are_released() {
  PerWorkerWheelQueue<std::shared_ptr<int>, P> q(config(16));
  const auto captured = std::make_shared<int>(0);
  std::vector<TimerHandle> hs;
  for (int i = 0; i < 8; ++i) hs.push_back(q.insert(at_tick(100 + i), captured));
  bool all_cancelled = true;
  for (int i = 0; i < 8; i += 2) all_cancelled &= q.cancel(hs[i]);
  TimerHandle moved = hs[1];
  const bool rescheduled = q.reschedule(moved, at_tick(200));
  q.check_invariants();
  return all_cancelled && rescheduled && q.stored_entries() == 9 && q.garbage() == 5 &&
         q.size() == 4 && q.held_payloads() == q.size() && captured.use_count() == 1 + 4;
}

// cancel() destroys the payload at once (the entry stays, a payload-less tombstone);
// wheel_retain_cancelled_payload keeps it until the bucket drains and fails the check.
TEST(PerWorkerWheel, CancelReleasesThePayloadAtOnce) {
  EXPECT_TRUE(cancelled_payloads_are_released<StdPlatform>());
  EXPECT_FALSE((cancelled_payloads_are_released<
                testing::MutantPlatform<StdPlatform, Mutant::kWheelRetainCancelledPayload>>()));
}

// The check: cancel() destroys the payload before it returns, last, with the queue
// consistent, so the payload's destructor may call back into the queue (here it
// inserts into the same bucket, which may reallocate it, and cancels that entry).
// Returns whether the destructor ran inside cancel() and left a consistent queue.
template <class P>
bool payload_destructor_reenters_cancel() {
  bool in_cancel = false;  // the deleter calls back only while cancel(a) runs
  bool reentered = false;
  PerWorkerWheelQueue<std::shared_ptr<int>, P> q(config(16));
  const TimerHandle a = q.insert(at_tick(5), std::shared_ptr<int>(new int(0), [&](int* p) {
    delete p;
    if (!in_cancel) return;
    const TimerHandle other = q.insert(at_tick(5), nullptr);
    reentered = q.cancel(other);
  }));
  in_cancel = true;
  const bool cancelled = q.cancel(a);
  in_cancel = false;
  q.check_invariants();
  return cancelled && reentered && q.held_payloads() == 0 && q.stored_entries() == 2;
}

// It holds on the real wheel; under wheel_retain_cancelled_payload the destructor
// only runs when the queue is destroyed.
TEST(PerWorkerWheel, PayloadDestructorMayReenterCancel) {
  EXPECT_TRUE(payload_destructor_reenters_cancel<StdPlatform>());
  EXPECT_FALSE((payload_destructor_reenters_cancel<
                testing::MutantPlatform<StdPlatform, Mutant::kWheelRetainCancelledPayload>>()));
}

}  // namespace
}  // namespace tlab
