// Contract tests for TimerService (timer_service.h) and TimerTask (timer_task.h):
// one-shot tasks, cancel, purge and shutdown (periodic tasks are in
// timer_service_periodic_test.cc). Driver mode (no thread), ManualClock,
// run_due()-driven, so every outcome is exact.
// The typed suite runs every queue strategy (queue/strategy.h) through the same
// cases; the mutant tests at the end show the checks fail on the seeded bugs that
// do not need a thread (the threaded ones are in timer_service_thread_test.cc).
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

// The service is a TimerSource, so Waiter and the sync primitives can run on it.
static_assert(TimerSource<HeapService>);
static_assert(TimerSource<TimerServiceOn<HashedWheelQueue, StdPlatform>>);

// A one-shot task runs at its deadline, not a tick before, and then is kExecuted.
TYPED_TEST(TimerServiceTest, OneShotRunsAtDeadlineNotBefore) {
  auto t = this->logging("a");
  this->svc_.schedule(t, ms(10));
  EXPECT_EQ(t->state(), TaskState::kScheduled);
  EXPECT_EQ(this->run_at(9), 0u);
  EXPECT_TRUE(this->log_.empty());
  EXPECT_EQ(this->run_at(10), 1u);
  EXPECT_EQ(this->log_, std::vector<std::string>{"a"});
  EXPECT_EQ(t->state(), TaskState::kExecuted);
  EXPECT_EQ(t->scheduled_time(), at_ms(10));
  EXPECT_EQ(this->run_at(100), 0u);
  EXPECT_EQ(this->svc_.pending(), 0u);
}

// A zero delay is due at once; an instant in the past (even before the service
// started) is due on the next pass.
TYPED_TEST(TimerServiceTest, ZeroDelayAndPastInstantAreDueNow) {
  this->svc_.schedule(this->logging("zero"), Duration::zero());
  this->svc_.schedule_at(this->logging("past"), at_ms(-5));
  EXPECT_EQ(this->run_at(0), 2u);
  EXPECT_THAT(this->log_, ::testing::ElementsAre("past", "zero"));
}

// Tasks due in one pass run in deadline order, whatever the insertion order; on
// exact strategies equal deadlines run in insertion order.
TYPED_TEST(TimerServiceTest, OnePassRunsInDeadlineOrder) {
  this->svc_.schedule(this->logging("c"), ms(30));
  this->svc_.schedule(this->logging("a"), ms(10));
  this->svc_.schedule(this->logging("b"), ms(20));
  if (this->exact()) {
    this->svc_.schedule(this->logging("b2"), ms(20));
    this->svc_.schedule(this->logging("b3"), ms(20));
  }
  this->run_at(50);
  if (this->exact()) {
    EXPECT_THAT(this->log_, ::testing::ElementsAre("a", "b", "b2", "b3", "c"));
  } else {
    EXPECT_THAT(this->log_, ::testing::ElementsAre("a", "b", "c"));
  }
}

// Every bad argument is refused with std::invalid_argument naming the problem, and
// refusing changes nothing.
TYPED_TEST(TimerServiceTest, BadArgumentsThrowInvalidArgument) {
  auto& s = this->svc_;
  const TaskPtr null;
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.schedule(null, ms(1)); }),
              HasSubstr("null task"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.schedule_at(null, at_ms(1)); }),
              HasSubstr("null task"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.cancel(null); }), HasSubstr("null task"));
  auto t = this->logging("t");
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.schedule(t, ms(-1)); }),
              HasSubstr("negative delay"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.schedule_fixed_delay(t, ms(-1), ms(5)); }),
              HasSubstr("negative delay"));
  EXPECT_THAT(
      message_of<std::invalid_argument>([&] { s.schedule_at_fixed_rate(t, ms(-1), ms(5)); }),
      HasSubstr("negative delay"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.schedule_fixed_delay(t, ms(1), ms(0)); }),
              HasSubstr("period must be positive"));
  EXPECT_THAT(
      message_of<std::invalid_argument>([&] { s.schedule_at_fixed_rate(t, ms(1), ms(-3)); }),
      HasSubstr("period must be positive"));
  EXPECT_THAT(message_of<std::invalid_argument>([] { Task::make(nullptr); }),
              HasSubstr("empty callback"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { s.schedule_at(at_ms(1), nullptr); }),
              HasSubstr("empty callback"));
  // None of the refused calls touched the task or the queue.
  EXPECT_EQ(t->state(), TaskState::kVirgin);
  EXPECT_EQ(s.pending(), 0u);
  s.schedule(t, ms(1));
  EXPECT_EQ(this->run_at(1), 1u);
}

// A task is scheduled at most once: scheduled, executed and cancelled tasks are
// refused with std::logic_error, on this service and on any other.
TYPED_TEST(TimerServiceTest, TaskIsScheduledAtMostOnce) {
  auto& s = this->svc_;
  auto t = this->logging("t");
  s.schedule(t, ms(10));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule(t, ms(5)); }),
              HasSubstr("already scheduled on this TimerService"));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule_at_fixed_rate(t, ms(5), ms(5)); }),
              HasSubstr("scheduled at most once"));
  typename TestFixture::Service other(this->clock_, kDriverMode);
  EXPECT_THAT(message_of<std::logic_error>([&] { other.schedule(t, ms(5)); }),
              HasSubstr("on another TimerService"));
  this->run_at(10);
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule(t, ms(5)); }),
              HasSubstr("scheduled at most once"));
  auto c = this->logging("c");
  EXPECT_FALSE(c->cancel());  // a virgin task can be cancelled, and is then dead
  EXPECT_EQ(c->state(), TaskState::kCancelled);
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule(c, ms(5)); }), HasSubstr("cancelled"));
  EXPECT_EQ(this->log_, std::vector<std::string>{"t"});
}

// After shutdown every way of scheduling throws std::logic_error, and start() too.
TYPED_TEST(TimerServiceTest, ScheduleAfterShutdownThrowsLogicError) {
  auto& s = this->svc_;
  s.shutdown();
  EXPECT_TRUE(s.is_shutdown());
  auto t = this->logging("t");
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule(t, ms(1)); }), HasSubstr("shut down"));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule_at(t, at_ms(1)); }),
              HasSubstr("shut down"));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule_fixed_delay(t, ms(1), ms(1)); }),
              HasSubstr("shut down"));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule_at_fixed_rate(t, ms(1), ms(1)); }),
              HasSubstr("shut down"));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.schedule_at(at_ms(1), [] {}); }),
              HasSubstr("shut down"));
  EXPECT_THAT(message_of<std::logic_error>([&] { s.start(); }), HasSubstr("shut down"));
  EXPECT_EQ(t->state(), TaskState::kVirgin);  // refused before the task was claimed
  EXPECT_EQ(this->run_at(5), 0u);
}

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

// shutdown() runs what is due at the call, returns the not-yet-due tasks in
// deadline order as kCancelled, and is idempotent.
TYPED_TEST(TimerServiceTest, ShutdownRunsDueAndReturnsTheRest) {
  auto a = this->logging("a");
  auto b = this->logging("b");
  auto p = this->logging("p");
  auto dead = this->logging("dead");
  this->svc_.schedule(a, ms(10));
  this->svc_.schedule(b, ms(30));
  this->svc_.schedule_fixed_delay(p, ms(20), ms(10));
  this->svc_.schedule(dead, ms(25));
  dead->cancel();
  this->clock_.set(at_ms(15));
  const auto rest = this->svc_.shutdown();
  EXPECT_EQ(this->log_, std::vector<std::string>{"a"});
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0], p);
  EXPECT_EQ(rest[1], b);
  EXPECT_EQ(p->state(), TaskState::kCancelled);
  EXPECT_EQ(b->state(), TaskState::kCancelled);
  EXPECT_FALSE(b->cancel());
  EXPECT_EQ(this->svc_.pending(), 0u);
  this->svc_.check_invariants();
  const auto st = this->svc_.stats();
  EXPECT_EQ(st.retired, 2u);
  EXPECT_EQ(st.purged, 1u);  // the tombstone of `dead`
  EXPECT_TRUE(this->svc_.shutdown().empty());
  EXPECT_TRUE(this->svc_.shutdown_now().empty());
  EXPECT_EQ(this->run_at(100), 0u);
}

// shutdown_now() runs nothing, due or not, and returns every pending task.
TYPED_TEST(TimerServiceTest, ShutdownNowReturnsEverythingUnrun) {
  auto a = this->logging("a");
  auto b = this->logging("b");
  this->svc_.schedule(b, ms(30));
  this->svc_.schedule(a, ms(10));
  this->clock_.set(at_ms(15));
  const auto rest = this->svc_.shutdown_now();
  EXPECT_TRUE(this->log_.empty());
  EXPECT_EQ(rest, (std::vector<TaskPtr>{a, b}));
  EXPECT_EQ(a->state(), TaskState::kCancelled);
}

// A task may shut the service down from its callback: it gets the not-yet-due
// tasks back, and tasks due in the same pass still run.
TYPED_TEST(TimerServiceTest, ShutdownFromInsideATask) {
  std::vector<TaskPtr> got;
  this->svc_.schedule(Task::make([&] { got = this->svc_.shutdown(); }), ms(5));
  this->svc_.schedule(this->logging("same-pass"), ms(6));
  auto later = this->logging("later");
  this->svc_.schedule(later, ms(50));
  EXPECT_EQ(this->run_at(10), 2u);
  EXPECT_EQ(this->log_, std::vector<std::string>{"same-pass"});
  EXPECT_EQ(got, std::vector<TaskPtr>{later});
}

// A throwing task is counted, its message kept, and the service runs on; a
// non-std exception is recorded too.
TYPED_TEST(TimerServiceTest, ThrowingTaskIsCountedAndServiceLivesOn) {
  this->svc_.schedule(Task::make([] { throw std::runtime_error("boom"); }), ms(1));
  this->svc_.schedule(this->logging("after"), ms(2));
  std::size_t ran = 0;
  EXPECT_NO_THROW(ran = this->run_at(5));
  EXPECT_EQ(ran, 2u);
  EXPECT_EQ(this->log_, std::vector<std::string>{"after"});
  EXPECT_EQ(this->svc_.last_error(), "boom");
  this->svc_.schedule(Task::make([] { throw 42; }), ms(1));
  EXPECT_NO_THROW(this->run_at(6));
  EXPECT_THAT(this->svc_.last_error(), HasSubstr("unknown exception"));
  const auto st = this->svc_.stats();
  EXPECT_EQ(st.exceptions, 2u);
  EXPECT_EQ(st.tasks_run, 3u);
}

// The TimerSource face: schedule_at(deadline, cb) returns an id that cancel(id)
// uses; now() is the clock's.
TYPED_TEST(TimerServiceTest, TimerSourceApi) {
  auto& s = this->svc_;
  int fired = 0;
  auto keep = s.schedule_at(at_ms(10), [&] { ++fired; });
  auto drop = s.schedule_at(at_ms(10), [&] { fired += 100; });
  EXPECT_TRUE(s.cancel(drop));
  EXPECT_FALSE(s.cancel(drop));
  this->clock_.set(at_ms(7));
  EXPECT_EQ(s.now(), at_ms(7));
  this->run_at(10);
  EXPECT_EQ(fired, 1);
  EXPECT_FALSE(s.cancel(keep));  // it has run
}

// Stats count schedules and the worst lateness; a task scheduled from a callback,
// due at once, waits for the next pass (run_due's next-pass rule), even at the
// same now.
TYPED_TEST(TimerServiceTest, StatsAndTasksScheduledFromCallbacks) {
  this->svc_.schedule(Task::make([&] { this->svc_.schedule(this->logging("child"), ms(0)); }),
                      ms(10));
  this->svc_.schedule(this->logging("x"), ms(30));
  EXPECT_EQ(this->run_at(42), 2u);
  EXPECT_THAT(this->log_, ::testing::ElementsAre("x"));
  EXPECT_EQ(this->svc_.pending(), 1u);  // the child, held and queued again
  this->svc_.check_invariants();
  EXPECT_EQ(this->run_at(42), 1u);
  EXPECT_THAT(this->log_, ::testing::ElementsAre("x", "child"));  // child's deadline is 42
  const auto st = this->svc_.stats();
  EXPECT_EQ(st.scheduled, 3u);
  EXPECT_EQ(st.tasks_run, 3u);
  EXPECT_EQ(st.late_max, ms(32));
}

// run_due cannot be re-entered from a task (the error surfaces as the task's
// exception), and refuses to run beside a started thread.
TYPED_TEST(TimerServiceTest, RunDueRefusesReentryAndAThread) {
  this->svc_.schedule(Task::make([&] { this->svc_.run_once(); }), ms(1));
  this->run_at(1);
  EXPECT_THAT(this->svc_.last_error(), HasSubstr("already active"));
  typename TestFixture::Service threaded(this->clock_);
  EXPECT_THAT(message_of<std::logic_error>([&] { threaded.run_once(); }),
              HasSubstr("timer thread is running"));
  EXPECT_THAT(message_of<std::logic_error>([&] { threaded.start(); }), HasSubstr("already"));
}

// Destroying the service shuts it down: pending tasks end kCancelled, unrun.
TYPED_TEST(TimerServiceTest, DestructorShutsDown) {
  auto t = this->logging("t");
  {
    typename TestFixture::Service s(this->clock_, kDriverMode);
    s.schedule(t, ms(5));
  }
  EXPECT_EQ(t->state(), TaskState::kCancelled);
  EXPECT_TRUE(this->log_.empty());
}

// Driving time backwards is a caller bug and aborts loudly, naming both instants.
TEST(TimerServiceDeathTest, TimeGoingBackwardsAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ManualClock clock;
        HeapService s(clock, kDriverMode);
        s.run_due(at_ms(10));
        s.run_due(at_ms(5));
      },
      "time going backwards");
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

// The check that a throwing task leaves the service running later tasks, with no
// exception escaping the runner.
template <class S>
bool service_survives_throwing_task() {
  ManualClock clock;
  S svc(clock, kDriverMode);
  bool later_ran = false;
  svc.schedule(S::Task::make([] { throw std::runtime_error("boom"); }), ms(1));
  svc.schedule(S::Task::make([&] { later_ran = true; }), ms(2));
  clock.set(at_ms(5));
  try {
    svc.run_once();
    svc.run_once();
  } catch (...) {
    return false;
  }
  return later_ran && svc.stats().exceptions == 1;
}

// The production service passes both checks.
TEST(TimerServiceChecks, PassOnTheShippedCode) {
  EXPECT_TRUE(cancelled_task_stays_unrun<HeapService>());
  EXPECT_TRUE(service_survives_throwing_task<HeapService>());
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

// kTimerExceptionKillsThread: the task's exception escapes the runner (in driver
// mode: out of run_due), so the check fails.
TEST(TimerServiceMutants, ExceptionKillsThreadIsCaught) {
  EXPECT_FALSE(service_survives_throwing_task<MutantService<Mutant::kTimerExceptionKillsThread>>());
}

}  // namespace
}  // namespace tlab::test_service
