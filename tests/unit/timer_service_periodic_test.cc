// Contract tests for TimerService's periodic tasks (timer_service.h): fixed delay
// never catches up, fixed rate catches up on its grid, cancel and shutdown end the
// series, and a series that saturates at Instant::max() ends instead of running
// forever. Driver mode, ManualClock, every queue strategy (timer_service_fixture.h).
#include "timer_service_fixture.h"

namespace tlab::test_service {
namespace {

TYPED_TEST_SUITE(TimerServiceTest, Queues);

// Fixed delay never catches up: after a long stall it runs once, then period
// after that run.
TYPED_TEST(TimerServiceTest, FixedDelayDoesNotCatchUp) {
  auto t = this->logging("d");
  this->svc_.schedule_fixed_delay(t, ms(10), ms(10));
  EXPECT_EQ(this->run_at(10), 1u);
  EXPECT_EQ(this->run_at(20), 1u);
  EXPECT_EQ(this->run_at(55), 1u);  // stalled 25 ms: one run, not three
  EXPECT_EQ(t->scheduled_time(), at_ms(30));
  EXPECT_EQ(this->run_at(64), 0u);
  EXPECT_EQ(this->run_at(65), 1u);  // 55 + 10
  EXPECT_EQ(t->state(), TaskState::kScheduled);
}

// The check that fixed rate catches up: after falling behind to `now` = 55 ms, a
// 10 ms fixed-rate task first due at 10 ms runs back to back for each missed
// deadline (10..50) and then stays on its grid. Returns the deadlines it ran for.
template <class S>
std::vector<Instant> fixed_rate_deadlines_after_stall() {
  using T = typename S::Task;
  ManualClock clock;
  S svc(clock, kDriverMode);
  std::vector<Instant> seen;
  std::shared_ptr<T> task;
  task = T::make([&] { seen.push_back(task->scheduled_time()); });
  svc.schedule_at_fixed_rate(task, ms(10), ms(10));
  clock.set(at_ms(55));
  svc.run_once();
  clock.set(at_ms(60));
  svc.run_once();
  svc.check_invariants();
  task.reset();  // break the task -> callback -> task cycle
  return seen;
}

const std::vector<Instant> kFixedRateGrid = {at_ms(10), at_ms(20), at_ms(30),
                                             at_ms(40), at_ms(50), at_ms(60)};

// Fixed rate catches up: every missed deadline runs once, in order, then the
// schedule stays on its original grid.
TYPED_TEST(TimerServiceTest, FixedRateCatchesUpBackToBack) {
  EXPECT_EQ(fixed_rate_deadlines_after_stall<typename TestFixture::Service>(), kFixedRateGrid);
}

// Fixed-rate catch-up interleaves with other tasks by deadline, like Java's queue.
TYPED_TEST(TimerServiceTest, FixedRateCatchUpInterleavesByDeadline) {
  this->svc_.schedule_at_fixed_rate(this->logging("r"), ms(10), ms(10));
  this->svc_.schedule(this->logging("x"), ms(25));
  this->run_at(35);
  EXPECT_THAT(this->log_, ::testing::ElementsAre("r", "r", "x", "r"));
}

// Cancelling a periodic task that has run returns true (future runs prevented)
// and it never runs again; so does cancelling it from its own callback.
TYPED_TEST(TimerServiceTest, CancelPeriodicPreventsFutureRuns) {
  auto p = this->logging("p");
  this->svc_.schedule_fixed_delay(p, ms(10), ms(10));
  this->run_at(10);
  this->run_at(20);
  EXPECT_TRUE(this->svc_.cancel(p));
  EXPECT_EQ(this->svc_.pending(), 0u);
  EXPECT_EQ(this->run_at(100), 0u);
  EXPECT_EQ(this->log_.size(), 2u);

  int runs = 0;
  bool self_cancel = false;
  TaskPtr q;
  q = Task::make([&] {
    if (++runs == 3) self_cancel = this->svc_.cancel(q);
  });
  this->svc_.schedule_at_fixed_rate(q, ms(0), ms(5));
  this->run_at(200);  // catch-up would run it 21 times; the third run cancels it
  EXPECT_EQ(runs, 3);
  EXPECT_TRUE(self_cancel);
  EXPECT_EQ(this->svc_.pending(), 0u);
  q.reset();
}

// A periodic task due at shutdown() runs one last time and ends kExecuted, not
// returned; one due after it is returned.
TYPED_TEST(TimerServiceTest, ShutdownGivesDuePeriodicTaskALastRun) {
  auto p = this->logging("p");
  this->svc_.schedule_at_fixed_rate(p, ms(10), ms(100));
  this->clock_.set(at_ms(10));
  EXPECT_TRUE(this->svc_.shutdown().empty());
  EXPECT_EQ(this->log_, std::vector<std::string>{"p"});
  EXPECT_EQ(p->state(), TaskState::kExecuted);
}

// A periodic task whose next deadline saturates at Instant::max() has had its last
// run there: run_due(Instant::max()) returns (it used to re-run the task forever on
// heap and sorted list) and the task ends kExecuted. On a wheel a deadline past
// TickGrid::kLastTick never fires (tick_grid.h), so the saturated run stays parked,
// pending, and run_due returns as well.
TYPED_TEST(TimerServiceTest, SaturatedPeriodicSeriesEnds) {
  for (const bool fixed_rate : {true, false}) {
    auto p = this->logging("p");
    const Duration period = Duration::max() - ms(1);
    if (fixed_rate) {
      this->svc_.schedule_at_fixed_rate(p, ms(10), period);
    } else {
      this->svc_.schedule_fixed_delay(p, ms(10), period);
    }
    const bool exact = this->exact();
    EXPECT_EQ(this->svc_.run_due(Instant::max()), exact ? 2u : 1u) << "fixed_rate=" << fixed_rate;
    EXPECT_EQ(p->state(), exact ? TaskState::kExecuted : TaskState::kScheduled);
    EXPECT_EQ(this->svc_.pending(), exact ? 0u : 1u);
    this->svc_.check_invariants();
    if (!exact) {
      EXPECT_TRUE(this->svc_.cancel(p));
    }
  }
}

// ---- The checks fail on the mutants they exist for -------------------------

// kTimerFixedRateAsDelay: fixed rate drifts from the run time, so the stalled
// task runs once instead of catching up: the catch-up check fails.
TEST(TimerServiceMutants, FixedRateAsDelayIsCaught) {
  const auto seen =
      fixed_rate_deadlines_after_stall<MutantService<Mutant::kTimerFixedRateAsDelay>>();
  EXPECT_NE(seen, kFixedRateGrid);
  EXPECT_EQ(seen.size(), 1u);  // 10 only; next was 55 + 10 = 65
}

}  // namespace
}  // namespace tlab::test_service
