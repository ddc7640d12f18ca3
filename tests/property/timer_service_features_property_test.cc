// tests/property/timer_service_features_property_test.cc: TimerService's issue-15
// features against exact models, on the virtual clock (driver mode, run_due):
//   | property                                   | mutant it catches          |
//   |--------------------------------------------|----------------------------|
//   | Skip: one run per pass, on the grid, next  | timer_skip_as_burst        |
//   | deadline strictly after now                |                            |
//   | max_pending: pending never exceeds the cap;| timer_cap_off_by_one       |
//   | schedule is rejected iff pending == cap    |                            |
//   | reschedule: a task runs once, exactly when | timer_reschedule_no_move   |
//   | its latest deadline is reached             |                            |
// Random operation sequences, bounded by counts (no wall time). The *Mutant* suite
// is what the kill matrix's property layer runs (CMakeLists.txt).
#include <map>

#include "time_arithmetic_support.h"
#include "tlab/missed_tick.h"

namespace tlab::time_arith {
namespace {

using Ms = std::int64_t;
Instant at(Ms t) { return Instant::from_ns(0) + Duration::milliseconds(t); }

template <class P>
using Heap = TimerService<BinaryHeapQueue<TimerTaskPtr<P>, P>, P>;
template <class P>
using Wheel = TimerService<HierarchicalWheelQueue<TimerTaskPtr<P>, P>, P>;

TimerServiceOptions driver(std::size_t cap = 0) {
  TimerServiceOptions o;
  o.start_thread = false;
  o.max_pending = cap;
  return o;
}

// A Skip task with a random period, driven through random time jumps: every pass
// runs it at most once, every run's deadline is on the grid first + k * period,
// increasing, and after a pass its next deadline is strictly after now.
template <class S>
void skip_stays_on_grid() {
  using T = typename S::Task;
  const Ms period = *rc::gen::inRange<Ms>(1, 50);
  const Ms first = *rc::gen::inRange<Ms>(0, 50);
  ManualClock clock(at(0));
  S svc(clock, driver());
  std::vector<Instant> runs;
  std::shared_ptr<T> task;
  task = T::make([&] { runs.push_back(task->scheduled_time()); });
  svc.schedule_periodic(task, Duration::milliseconds(first), Duration::milliseconds(period),
                        MissedTick::kSkip);
  Ms now = 0;
  const auto jumps = *rc::gen::container<std::vector<Ms>>(rc::gen::inRange<Ms>(0, 400));
  for (const Ms j : jumps) {
    now += j;
    clock.set(at(now));
    const std::size_t before = runs.size();
    svc.run_once();
    RC_ASSERT(runs.size() - before <= 1u);
    if (runs.size() > before) {
      const Ms d = (runs.back() - at(0)).ns() / 1'000'000;
      RC_ASSERT((d - first) % period == 0);
      RC_ASSERT(d <= now);
      // Parenthesised: RC_ASSERT decomposes its expression with overloaded
      // operators, and an overloaded || evaluates both sides, so without the
      // parentheses runs[before - 1] was read with before == 0 (ASan found it).
      RC_ASSERT((before == 0 || runs[before - 1] < runs.back()));
    }
  }
  task.reset();
}

// Random schedule / cancel / task->cancel / purge / advance against a cap: the
// service's pending() never exceeds it, and a schedule is rejected exactly when
// pending() is at the cap.
template <class S>
void cap_is_exact() {
  using T = typename S::Task;
  const std::size_t cap = *rc::gen::inRange<std::size_t>(1, 6);
  ManualClock clock(at(0));
  S svc(clock, driver(cap));
  std::vector<std::shared_ptr<T>> tasks;
  Ms now = 0;
  const int steps = *rc::gen::inRange(1, 80);
  for (int i = 0; i < steps; ++i) {
    const int op = *rc::gen::inRange(0, 6);
    if (op <= 2) {
      const std::size_t pending = svc.pending();
      auto t = T::make([] {});
      bool rejected = false;
      try {
        svc.schedule(t, Duration::milliseconds(*rc::gen::inRange<Ms>(0, 30)));
        tasks.push_back(t);
      } catch (const RejectedError&) {
        rejected = true;
      }
      RC_ASSERT(rejected == (pending >= cap));
    } else if (op == 3 && !tasks.empty()) {
      svc.cancel(tasks[*rc::gen::inRange<std::size_t>(0, tasks.size())]);
    } else if (op == 4 && !tasks.empty()) {
      tasks[*rc::gen::inRange<std::size_t>(0, tasks.size())]->cancel();  // a tombstone
    } else {
      now += *rc::gen::inRange<Ms>(0, 20);
      clock.set(at(now));
      svc.run_once();
      if (*rc::gen::arbitrary<bool>()) svc.purge();
    }
    RC_ASSERT(svc.pending() <= cap);
    svc.check_invariants();
  }
}

// Random schedule / reschedule / advance: each task runs at most once, never
// before its latest deadline, and after each pass exactly the tasks whose latest
// deadline it reached have run; pending() counts the rest.
template <class S>
void reschedule_moves_the_run() {
  using T = typename S::Task;
  ManualClock clock(at(0));
  S svc(clock, driver());
  std::vector<std::shared_ptr<T>> tasks;
  std::vector<Ms> deadline;  // latest deadline per task
  std::vector<int> runs;
  std::vector<Ms> ran_at;
  Ms now = 0;
  const int steps = *rc::gen::inRange(1, 60);
  for (int i = 0; i < steps; ++i) {
    const int op = *rc::gen::inRange(0, 4);
    bool passed = false;  // a pass ran at `now`: all that is due has run
    if (op == 0 || tasks.empty()) {
      const std::size_t k = tasks.size();
      runs.push_back(0);
      ran_at.push_back(-1);
      tasks.push_back(T::make([&runs, &ran_at, &now, k] {
        ++runs[k];
        ran_at[k] = now;
      }));
      const Ms d = *rc::gen::inRange<Ms>(0, 40);
      deadline.push_back(now + d);
      svc.schedule(tasks[k], Duration::milliseconds(d));
    } else if (op == 1) {
      const std::size_t k = *rc::gen::inRange<std::size_t>(0, tasks.size());
      const Ms d = *rc::gen::inRange<Ms>(0, 40);
      const bool moved = svc.reschedule(tasks[k], Duration::milliseconds(d));
      RC_ASSERT(moved == (runs[k] == 0));  // driver mode: nothing is taken between passes
      if (moved) deadline[k] = now + d;
    } else {
      now += *rc::gen::inRange<Ms>(0, 15);
      clock.set(at(now));
      svc.run_once();
      passed = true;
    }
    std::size_t waiting = 0;
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      RC_ASSERT(runs[k] <= 1);
      if (passed) RC_ASSERT(runs[k] == (deadline[k] <= now ? 1 : 0));
      if (runs[k] == 1) RC_ASSERT(ran_at[k] >= deadline[k]);
      waiting += runs[k] == 0 ? 1 : 0;
    }
    RC_ASSERT(svc.pending() == waiting);
  }
}

// ---- Properties on the correct service ---------------------------------------------

TEST(TimerServiceFeaturesProperty, SkipStaysOnGrid) {
  expect_holds("heap skip", [] { skip_stays_on_grid<Heap<ManualStdPlatform>>(); });
  expect_holds("wheel skip", [] { skip_stays_on_grid<Wheel<ManualStdPlatform>>(); });
}

TEST(TimerServiceFeaturesProperty, CapIsExact) {
  expect_holds("heap cap", [] { cap_is_exact<Heap<ManualStdPlatform>>(); });
  expect_holds("wheel cap", [] { cap_is_exact<Wheel<ManualStdPlatform>>(); });
}

TEST(TimerServiceFeaturesProperty, RescheduleMovesTheRun) {
  expect_holds("heap reschedule", [] { reschedule_moves_the_run<Heap<ManualStdPlatform>>(); });
  expect_holds("wheel reschedule", [] { reschedule_moves_the_run<Wheel<ManualStdPlatform>>(); });
}

// ---- Mutants: each feature's seeded bug is caught ----------------------------------

// timer_skip_as_burst: a stall makes the Skip task run every missed tick in one pass.
TEST(TimerServiceFeaturesMutantTest, FindsSkipAsBurst) {
  expect_counterexample(Mutant::kTimerSkipAsBurst, "heap skip",
                        [] { skip_stays_on_grid<Heap<MP<Mutant::kTimerSkipAsBurst>>>(); });
}

// timer_cap_off_by_one: pending reaches cap + 1.
TEST(TimerServiceFeaturesMutantTest, FindsCapOffByOne) {
  expect_counterexample(Mutant::kTimerCapOffByOne, "heap cap",
                        [] { cap_is_exact<Heap<MP<Mutant::kTimerCapOffByOne>>>(); });
}

// timer_reschedule_no_move: a task moved later runs at its old deadline.
TEST(TimerServiceFeaturesMutantTest, FindsRescheduleNoMove) {
  expect_counterexample(Mutant::kTimerRescheduleNoMove, "heap reschedule", [] {
    reschedule_moves_the_run<Heap<MP<Mutant::kTimerRescheduleNoMove>>>();
  });
}

}  // namespace
}  // namespace tlab::time_arith
