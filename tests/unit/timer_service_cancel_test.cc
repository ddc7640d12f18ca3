// Contract tests for TimerService cancel (timer_service.h, timer_task.h):
// service.cancel, task->cancel() and its tombstones, purge, what a cancel frees,
// and cancels that lose (after the run, from inside, on another service). The
// mutant tests at the end show the cancel checks fail on the seeded bugs.
// Driver mode (no thread), ManualClock, run_due()-driven, so every outcome is
// exact; the typed suite runs every queue strategy (queue/strategy.h) through the
// same cases (fixture: timer_service_fixture.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/mutant_platform.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"
#include "tlab/timer_source.h"
#include "timer_service_fixture.h"

namespace tlab::test_service {
namespace {

TYPED_TEST_SUITE(TimerServiceTest, Queues);

// service.cancel prevents the run and frees the queue entry at once; a second
// cancel returns false.
TYPED_TEST(TimerServiceTest, ServiceCancelPreventsRunAndRemovesEntry) {
  auto t = this->logging("t");
  this->svc_.schedule(t, ms(10));
  EXPECT_TRUE(this->svc_.cancel(t));
  EXPECT_EQ(t->state(), TaskState::kCancelled);
  EXPECT_EQ(this->svc_.pending(), 0u);
  this->svc_.check_invariants();
  EXPECT_FALSE(this->svc_.cancel(t));
  EXPECT_FALSE(t->cancel());
  EXPECT_EQ(this->run_at(20), 0u);
  EXPECT_TRUE(this->log_.empty());
  const auto st = this->svc_.stats();
  EXPECT_EQ(st.cancelled, 1u);
  EXPECT_EQ(st.skipped_cancelled, 0u);
  EXPECT_EQ(this->svc_.purge(), 0u);
}

// task->cancel() works without the service, leaves a tombstone that purge()
// removes and counts; a second purge finds nothing.
TYPED_TEST(TimerServiceTest, TaskCancelLeavesTombstonesForPurge) {
  std::vector<TaskPtr> tasks;
  for (int i = 0; i < 5; ++i) {
    tasks.push_back(this->logging("t" + std::to_string(i)));
    this->svc_.schedule(tasks.back(), ms(10 + i));
  }
  EXPECT_TRUE(tasks[0]->cancel());
  EXPECT_TRUE(tasks[2]->cancel());
  EXPECT_TRUE(tasks[4]->cancel());
  EXPECT_EQ(this->svc_.pending(), 5u);  // lazy: entries still queued
  EXPECT_EQ(this->svc_.stats().tombstones, 3u);
  EXPECT_EQ(this->svc_.purge(), 3u);
  this->svc_.check_invariants();
  EXPECT_EQ(this->svc_.pending(), 2u);
  EXPECT_EQ(this->svc_.stats().tombstones, 0u);
  EXPECT_EQ(this->svc_.purge(), 0u);
  EXPECT_EQ(this->run_at(20), 2u);
  EXPECT_THAT(this->log_, ::testing::ElementsAre("t1", "t3"));
  EXPECT_EQ(this->svc_.stats().purged, 3u);
}

// The check: kRetainTasks one-shot tasks, far from due, capture one shared token;
// half are cancelled with service.cancel(), half with task->cancel() then purge().
// Once the caller drops its own TaskPtrs, returns how many captures are still
// alive (-1 if the cancels themselves misbehaved). Counts only: no clock moves.
constexpr int kRetainTasks = 64;
template <class S>
long captures_alive_after_cancel() {
  ManualClock clock;
  S svc(clock, kDriverMode);
  const auto token = std::make_shared<int>(0);
  std::vector<typename S::TaskPtr> tasks;
  for (int i = 0; i < kRetainTasks; ++i) {
    tasks.push_back(S::Task::make([token] {}));
    svc.schedule(tasks.back(), ms(1000 + i));
  }
  bool cancelled = true;
  for (int i = 0; i < kRetainTasks; i += 2) cancelled &= svc.cancel(tasks[i]);
  for (int i = 1; i < kRetainTasks; i += 2) cancelled &= tasks[i]->cancel();
  const std::size_t purged = svc.purge();
  tasks.clear();
  svc.check_invariants();
  if (!cancelled || purged != kRetainTasks / 2 || svc.pending() != 0) return -1;
  return token.use_count() - 1;
}

// Cancelled tasks, and everything their callbacks captured, are destroyed by
// service.cancel() and by task->cancel() + purge(), not at their deadlines.
TYPED_TEST(TimerServiceTest, CancelReleasesTheTaskAndItsCaptures) {
  EXPECT_EQ(captures_alive_after_cancel<typename TestFixture::Service>(), 0);
}

// A tombstone that comes due is skipped and counted, never run.
TYPED_TEST(TimerServiceTest, TombstoneComingDueIsSkipped) {
  auto t = this->logging("t");
  this->svc_.schedule(t, ms(10));
  EXPECT_TRUE(t->cancel());
  EXPECT_EQ(this->run_at(10), 0u);
  EXPECT_EQ(this->svc_.stats().skipped_cancelled, 1u);
  EXPECT_EQ(this->svc_.pending(), 0u);
}

// service.cancel on a task already cancelled via the task returns false but
// removes its tombstone (counted as purged).
TYPED_TEST(TimerServiceTest, ServiceCancelRemovesATombstone) {
  auto t = this->logging("t");
  this->svc_.schedule(t, ms(10));
  EXPECT_TRUE(t->cancel());
  EXPECT_FALSE(this->svc_.cancel(t));
  EXPECT_EQ(this->svc_.pending(), 0u);
  EXPECT_EQ(this->svc_.stats().purged, 1u);
  EXPECT_EQ(this->svc_.stats().cancelled, 0u);
}

// Cancelling a one-shot task after it ran returns false and leaves it kExecuted;
// cancelling a never-scheduled task returns false and kills it.
TYPED_TEST(TimerServiceTest, CancelAfterRunOrBeforeScheduleReturnsFalse) {
  auto t = this->logging("t");
  this->svc_.schedule(t, ms(1));
  this->run_at(1);
  EXPECT_FALSE(this->svc_.cancel(t));
  EXPECT_FALSE(t->cancel());
  EXPECT_EQ(t->state(), TaskState::kExecuted);
  auto v = this->logging("v");
  EXPECT_FALSE(this->svc_.cancel(v));
  EXPECT_EQ(v->state(), TaskState::kCancelled);
}

// A one-shot task cancelling itself from its callback gets false: it is running.
TYPED_TEST(TimerServiceTest, OneShotSelfCancelReturnsFalse) {
  bool result = true;
  TaskPtr t;
  t = Task::make([&] { result = this->svc_.cancel(t); });
  this->svc_.schedule(t, ms(1));
  this->run_at(1);
  EXPECT_FALSE(result);
  EXPECT_EQ(t->state(), TaskState::kExecuted);
  t.reset();
}

// A task can cancel another task due in the same pass: the other one, already
// taken off the queue, does not run.
TYPED_TEST(TimerServiceTest, CancelOfTakenButUnrunTaskPreventsIt) {
  auto victim = this->logging("victim");
  bool result = false;
  this->svc_.schedule(Task::make([&] { result = this->svc_.cancel(victim); }), ms(5));
  this->svc_.schedule(victim, ms(6));
  EXPECT_EQ(this->run_at(10), 1u);
  EXPECT_TRUE(result);
  EXPECT_TRUE(this->log_.empty());
  EXPECT_EQ(this->svc_.stats().skipped_cancelled, 1u);
}

// Cancelling a task that belongs to another service is refused.
TYPED_TEST(TimerServiceTest, CancelOfForeignTaskThrows) {
  typename TestFixture::Service other(this->clock_, kDriverMode);
  auto t = this->logging("t");
  other.schedule(t, ms(5));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { this->svc_.cancel(t); }),
              HasSubstr("another TimerService"));
  EXPECT_EQ(t->state(), TaskState::kScheduled);
}

// ---- The checks fail on the mutants they exist for -------------------------

// The check that a cancelled task stays unrun: cancel returns true AND the task
// never runs.
template <class S>
bool cancelled_task_stays_unrun() {
  ManualClock clock;
  S svc(clock, kDriverMode);
  bool ran = false;
  auto t = S::Task::make([&] { ran = true; });
  svc.schedule(t, ms(10));
  const bool cancelled = svc.cancel(t);
  clock.set(at_ms(20));
  svc.run_once();
  return cancelled && !ran;
}

// The production service passes the cancel check.
TEST(TimerServiceChecks, CancelCheckPassesOnTheShippedCode) {
  EXPECT_TRUE(cancelled_task_stays_unrun<HeapService>());
}

// kTimerCancelNoRemove: cancel says true, the task runs anyway.
TEST(TimerServiceMutants, CancelNoRemoveIsCaught) {
  EXPECT_FALSE(cancelled_task_stays_unrun<MutantService<Mutant::kTimerCancelNoRemove>>());
}

// kWheelRetainCancelledPayload: per_worker_wheel keeps every cancelled task (and its
// captures) in its bucket until the deadline: all of them are still alive.
TEST(TimerServiceMutants, WheelRetainCancelledPayloadIsCaught) {
  using S = TimerServiceOn<PerWorkerWheelQueue,
                           testing::MutantPlatform<P, Mutant::kWheelRetainCancelledPayload>>;
  EXPECT_EQ(captures_alive_after_cancel<S>(), kRetainTasks);
}

}  // namespace
}  // namespace tlab::test_service
