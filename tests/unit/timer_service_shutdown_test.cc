// Contract tests for how a TimerService ends and survives (timer_service.h):
// shutdown(), shutdown_now(), shutdown from inside a task, the destructor, and a
// throwing task. The mutant test at the end shows the exception check fails on
// the seeded bug that needs no thread.
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

// ---- The checks fail on the mutants they exist for -------------------------

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

// The production service passes the exception check.
TEST(TimerServiceChecks, ExceptionCheckPassesOnTheShippedCode) {
  EXPECT_TRUE(service_survives_throwing_task<HeapService>());
}

// kTimerExceptionKillsThread: the task's exception escapes the runner (in driver
// mode: out of run_due), so the check fails.
TEST(TimerServiceMutants, ExceptionKillsThreadIsCaught) {
  EXPECT_FALSE(service_survives_throwing_task<MutantService<Mutant::kTimerExceptionKillsThread>>());
}

}  // namespace
}  // namespace tlab::test_service
