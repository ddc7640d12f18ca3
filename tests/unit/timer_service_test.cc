// Contract tests for TimerService (timer_service.h) and TimerTask (timer_task.h):
// one-shot tasks (deadline, order, bad arguments, scheduling once), the TimerSource
// face, stats and run_due's guards. Cancel and purge are in
// timer_service_cancel_test.cc, shutdown and throwing tasks in
// timer_service_shutdown_test.cc, periodic tasks in timer_service_periodic_test.cc,
// the threaded mutants in timer_service_thread_test.cc.
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

// Stats count schedules and the worst lateness; a task scheduled from a callback
// that is already due runs in the same pass.
TYPED_TEST(TimerServiceTest, StatsAndTasksScheduledFromCallbacks) {
  this->svc_.schedule(Task::make([&] { this->svc_.schedule(this->logging("child"), ms(0)); }),
                      ms(10));
  this->svc_.schedule(this->logging("x"), ms(30));
  EXPECT_EQ(this->run_at(42), 3u);
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

}  // namespace
}  // namespace tlab::test_service
