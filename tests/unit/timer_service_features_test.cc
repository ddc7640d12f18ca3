// Contract tests for the TimerService features peers' users rely on (issue 15):
// the missed-tick policies (missed_tick.h: Burst, Delay, Skip), re-timing a task
// (reschedule), the max_pending cap (RejectedError) and the timer thread's name.
// Driver mode and ManualClock unless a real thread is the point; the seeded
// mutants of each feature are shown failing the same checks.
#include <pthread.h>

#include <functional>
#include <future>

#include "timer_service_fixture.h"

namespace tlab::test_service {
namespace {

TYPED_TEST_SUITE(TimerServiceTest, Queues);

// The deadlines a 10 ms periodic task first due at 10 ms runs for when the clock
// stalls to 55 ms and then moves to 60 and 70 ms, under policy `m`.
template <class S>
std::vector<Instant> deadlines_after_stall(MissedTick m) {
  using T = typename S::Task;
  ManualClock clock;
  S svc(clock, kDriverMode);
  std::vector<Instant> seen;
  std::shared_ptr<T> task;
  task = T::make([&] { seen.push_back(task->scheduled_time()); });
  svc.schedule_periodic(task, ms(10), ms(10), m);
  for (const std::int64_t t : {55, 60, 70}) {
    clock.set(at_ms(t));
    svc.run_once();
    svc.check_invariants();
  }
  task.reset();  // break the task -> callback -> task cycle
  return seen;
}

// Skip drops the missed ticks and stays on the grid: one run at the stall, then
// the first grid point after it (60), then 70.
TYPED_TEST(TimerServiceTest, SkipDropsMissedTicksAndKeepsTheGrid) {
  EXPECT_EQ(deadlines_after_stall<typename TestFixture::Service>(MissedTick::kSkip),
            (std::vector<Instant>{at_ms(10), at_ms(60), at_ms(70)}));
}

// Burst is schedule_at_fixed_rate: every missed tick runs back to back.
TYPED_TEST(TimerServiceTest, BurstRunsEveryMissedTick) {
  EXPECT_EQ(deadlines_after_stall<typename TestFixture::Service>(MissedTick::kBurst),
            (std::vector<Instant>{at_ms(10), at_ms(20), at_ms(30), at_ms(40), at_ms(50),
                                  at_ms(60), at_ms(70)}));
}

// Delay is schedule_fixed_delay: the grid moves to the late run (55 + 10 = 65).
TYPED_TEST(TimerServiceTest, DelayMovesTheGridToTheLateRun) {
  EXPECT_EQ(deadlines_after_stall<typename TestFixture::Service>(MissedTick::kDelay),
            (std::vector<Instant>{at_ms(10), at_ms(65)}));
}

// A late Skip run exactly on a grid point still moves to the next point.
TEST(MissedTickTest, SkipDeadlineIsStrictlyAfterNow) {
  EXPECT_EQ(skip_deadline(at_ms(10), ms(10), at_ms(10)), at_ms(20));
  EXPECT_EQ(skip_deadline(at_ms(10), ms(10), at_ms(50)), at_ms(60));
  EXPECT_EQ(skip_deadline(at_ms(10), ms(10), at_ms(51)), at_ms(60));
  EXPECT_EQ(skip_deadline(Instant::min(), Duration::nanoseconds(3), Instant::max() - ms(1)),
            Instant::max());  // saturates instead of wrapping
}

// The mutant: a Skip task that catches up like Burst is caught.
TEST(TimerServiceFeatureMutantTest, SkipAsBurstIsCaught) {
  EXPECT_NE(deadlines_after_stall<MutantService<Mutant::kTimerSkipAsBurst>>(MissedTick::kSkip),
            (std::vector<Instant>{at_ms(10), at_ms(60), at_ms(70)}));
}

// reschedule moves a one-shot: it runs at the new time, not the old one, and
// leaves exactly one queued entry.
TYPED_TEST(TimerServiceTest, RescheduleMovesTheOneShot) {
  auto t = this->logging("x");
  this->svc_.schedule(t, ms(10));
  EXPECT_TRUE(this->svc_.reschedule(t, ms(30)));
  EXPECT_EQ(this->svc_.pending(), 1u);
  EXPECT_EQ(this->run_at(29), 0u);
  EXPECT_EQ(this->run_at(30), 1u);
  EXPECT_EQ(this->run_at(100), 0u);  // no second entry left behind
  EXPECT_EQ(this->log_, std::vector<std::string>{"x"});
  EXPECT_FALSE(this->svc_.reschedule(t, ms(5)));  // executed
  EXPECT_EQ(this->svc_.stats().rescheduled, 1u);
}

// reschedule restarts a periodic task's grid at the new time, keeping its period.
TYPED_TEST(TimerServiceTest, ReschedulePeriodicRestartsTheGrid) {
  auto t = this->logging("p");
  this->svc_.schedule_periodic(t, ms(10), ms(10), MissedTick::kSkip);
  EXPECT_EQ(this->run_at(10), 1u);
  EXPECT_TRUE(this->svc_.reschedule(t, ms(25)));  // from 10: next run at 35
  EXPECT_EQ(this->run_at(34), 0u);
  EXPECT_EQ(this->run_at(35), 1u);
  EXPECT_EQ(this->run_at(45), 1u);
  EXPECT_EQ(this->svc_.pending(), 1u);
}

// reschedule refuses what it cannot move: a cancelled task, a task never scheduled
// here, and it does not resurrect either.
TYPED_TEST(TimerServiceTest, RescheduleRefusesCancelledAndForeignTasks) {
  auto t = this->logging("c");
  this->svc_.schedule(t, ms(10));
  EXPECT_TRUE(this->svc_.cancel(t));
  EXPECT_FALSE(this->svc_.reschedule(t, ms(1)));
  EXPECT_FALSE(this->svc_.reschedule(this->logging("never"), ms(1)));
  this->run_at(50);
  EXPECT_TRUE(this->log_.empty());
  EXPECT_THROW(this->svc_.reschedule(nullptr, ms(1)), std::invalid_argument);
  EXPECT_THROW(this->svc_.reschedule(this->logging("n"), ms(-1)), std::invalid_argument);
}

// The mutant: reschedule that leaves the entry at the old deadline runs it early.
TEST(TimerServiceFeatureMutantTest, RescheduleNoMoveIsCaught) {
  ManualClock clock;
  MutantService<Mutant::kTimerRescheduleNoMove> svc(clock, kDriverMode);
  int runs = 0;
  auto t = decltype(svc)::Task::make([&] { ++runs; });
  svc.schedule(t, ms(10));
  ASSERT_TRUE(svc.reschedule(t, ms(30)));
  clock.set(at_ms(10));
  svc.run_once();
  EXPECT_EQ(runs, 1);  // the contract says 0: it ran 20 ms early
}

// Next pass: a task that re-arms itself at delay 0 from its own callback runs
// once per run_due() pass, so every pass returns; a held task cancelled before
// the pass ends is dropped unrun; and a shutdown from inside the pass runs or
// returns what was held, as it does the due tasks.
TYPED_TEST(TimerServiceTest, ASelfRearmingChainRunsOncePerPass) {
  using T = Task;
  int runs = 0;
  std::vector<std::shared_ptr<T>> chain;  // every link, kept alive
  std::function<void()> link = [&] {
    ++runs;
    chain.push_back(T::make(link));
    this->svc_.schedule(chain.back(), ms(0));
  };
  chain.push_back(T::make(link));
  this->svc_.schedule(chain.back(), ms(5));
  for (int pass = 1; pass <= 4; ++pass) {
    EXPECT_EQ(this->run_at(5), 1u) << "pass " << pass;
    EXPECT_EQ(runs, pass);
    this->svc_.check_invariants();
  }
  // A task armed in a pass, taken as due and held, then cancelled by a later
  // callback of the same pass, never runs.
  bool victim_ran = false;
  auto victim = T::make([&] { victim_ran = true; });
  this->svc_.schedule(T::make([&] { this->svc_.schedule(victim, ms(0)); }), ms(0));
  this->svc_.schedule(T::make([&] { EXPECT_TRUE(this->svc_.cancel(victim)); }), ms(0));
  const auto skipped = this->svc_.stats().skipped_cancelled;
  this->run_at(5);
  this->svc_.check_invariants();
  this->run_at(5);
  EXPECT_FALSE(victim_ran);
  EXPECT_EQ(victim->state(), TaskState::kCancelled);
  EXPECT_EQ(this->svc_.stats().skipped_cancelled, skipped + 1);  // dropped as the pass ended
  chain.clear();  // break the cycles (each link's callback holds `chain`)
  link = nullptr;
}

// The mutant: run_due runs what its callbacks arm in the same pass, so a chain
// capped at 50 links runs all of them in one pass (uncapped, it would never return).
TEST(TimerServiceFeatureMutantTest, RunDueSamePassIsCaught) {
  ManualClock clock;
  MutantService<Mutant::kTimerRunDueSamePass> svc(clock, kDriverMode);
  using T = decltype(svc)::Task;
  int runs = 0;
  std::vector<std::shared_ptr<T>> chain;
  std::function<void()> link = [&] {
    if (++runs == 50) return;
    chain.push_back(T::make(link));
    svc.schedule(chain.back(), ms(0));
  };
  chain.push_back(T::make(link));
  svc.schedule(chain.back(), ms(0));
  EXPECT_EQ(svc.run_once(), 50u);  // the contract says 1
  chain.clear();
}

// The mutant: a pass that takes only what is due strictly before now leaves a task
// due exactly at the pass's now for the next pass (late by the driver's tick).
TEST(TimerServiceFeatureMutantTest, TakeDueStrictIsCaught) {
  ManualClock clock;
  MutantService<Mutant::kTimerTakeDueStrict> svc(clock, kDriverMode);
  int runs = 0;
  svc.schedule(decltype(svc)::Task::make([&] { ++runs; }), ms(10));
  clock.set(at_ms(10));
  svc.run_once();
  EXPECT_EQ(runs, 0);  // the contract says 1: due at now runs now
  clock.set(at_ms(11));
  svc.run_once();
  EXPECT_EQ(runs, 1);
}

// max_pending: the cap'th task is admitted, the next is rejected with
// RejectedError, counted, and left virgin; a cancel makes room again.
TEST(TimerServiceCapTest, RejectsPastTheCapAndRecovers) {
  ManualClock clock;
  HeapService svc(clock, {.start_thread = false, .max_pending = 2});
  auto a = Task::make([] {});
  auto b = Task::make([] {});
  auto c = Task::make([] {});
  svc.schedule(a, ms(10));
  svc.schedule(b, ms(10));
  EXPECT_THAT(message_of<RejectedError>([&] { svc.schedule(c, ms(10)); }),
              HasSubstr("max_pending is 2"));
  EXPECT_EQ(c->state(), TaskState::kVirgin);
  EXPECT_EQ(svc.stats().rejected, 1u);
  EXPECT_THROW(svc.schedule_at(at_ms(5), [] {}), RejectedError);  // the TimerSource path too
  EXPECT_TRUE(svc.cancel(a));
  svc.schedule(c, ms(10));  // room again
  EXPECT_EQ(svc.pending(), 2u);
}

// A periodic task is one pending task: its next run is never rejected, and a
// tombstone (task->cancel()) counts until it is purged.
TEST(TimerServiceCapTest, PeriodicRunsAndTombstonesCount) {
  ManualClock clock;
  HeapService svc(clock, {.start_thread = false, .max_pending = 1});
  int runs = 0;
  auto p = Task::make([&] { ++runs; });
  svc.schedule_periodic(p, ms(10), ms(10), MissedTick::kBurst);
  clock.set(at_ms(40));
  svc.run_once();
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(svc.stats().rejected, 0u);
  EXPECT_TRUE(p->cancel());  // a tombstone now
  EXPECT_THROW(svc.schedule(Task::make([] {}), ms(1)), RejectedError);
  EXPECT_EQ(svc.purge(), 1u);
  svc.schedule(Task::make([] {}), ms(1));
}

// The mutant: a cap admitted with > instead of >= lets one task too many in.
TEST(TimerServiceFeatureMutantTest, CapOffByOneIsCaught) {
  ManualClock clock;
  MutantService<Mutant::kTimerCapOffByOne> svc(clock, {.start_thread = false, .max_pending = 2});
  using T = decltype(svc)::Task;
  svc.schedule(T::make([] {}), ms(10));
  svc.schedule(T::make([] {}), ms(10));
  EXPECT_NO_THROW(svc.schedule(T::make([] {}), ms(10)));  // the contract says RejectedError
  EXPECT_EQ(svc.pending(), 3u);
}

// The timer thread carries TimerServiceOptions::thread_name, cut to Linux's 15 bytes.
TEST(TimerServiceThreadNameTest, TheTimerThreadIsNamed) {
  TimerServiceOn<BinaryHeapQueue, StdPlatform> svc(
      TimerServiceOptions{.thread_name = "tlab-timer-thread-long"});
  std::promise<std::string> name;
  svc.schedule_at(svc.now(), [&] {
    char buf[32] = {};
    pthread_getname_np(pthread_self(), buf, sizeof buf);
    name.set_value(buf);
  });
  EXPECT_EQ(name.get_future().get(), "tlab-timer-thre");
}

}  // namespace
}  // namespace tlab::test_service
