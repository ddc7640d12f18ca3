// TimerService (timer_service.h) with its real timer thread: wake-ups, shutdown,
// exceptions and cross-thread schedule/cancel. Bounded by operation counts; the
// only time bounds are generous watchdogs (an earlier task due in 50 ms must run
// within 1 s while the head is 10 s away), never tight timing assertions.
//
// Each check is a function run once on the shipped code (it must pass) and once per
// mutant it exists for (it must fail). The mutants whose bug is a hang (a thread
// nobody wakes) are bounded by the watchdog, and each check rescues the thread
// afterwards (wake(), or a far head of only 2 s for kTimerSleepNotWait, whose
// sleeping thread nothing can wake), so a failing check costs at most ~2 s.
// Races that need a window are made reliable with StressPlatform fault plans.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/mutant_platform.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"

namespace tlab {
namespace {

using namespace std::chrono_literals;
using testing::MutantPlatform;

constexpr auto kWatchdog = 1s;  // 20x the 50 ms the checks expect

Duration ms(std::int64_t n) { return Duration::milliseconds(n); }

template <class F>
bool ready_within(F& future, std::chrono::milliseconds limit) {
  return future.wait_for(limit) == std::future_status::ready;
}

// Installs fault plans (and no runtime mutant) for one test; resets on exit.
// Construct it before any service, so no instrumented thread runs meanwhile.
class FaultScope {
 public:
  explicit FaultScope(std::initializer_list<std::pair<FaultPoint, stress::FaultPlan>> plans) {
    std::array<stress::FaultPlan, kFaultPointCount> all{};
    for (const auto& [point, plan] : plans) all[static_cast<std::size_t>(point)] = plan;
    stress::configure(std::nullopt, all);
  }
  ~FaultScope() { stress::reset(); }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
};

stress::FaultPlan delay_always(std::chrono::microseconds d) {
  const auto ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(d).count());
  return {stress::FaultAction::kDelay, 1.0, ns, ns};
}

// ---- The checks -------------------------------------------------------------

// An earlier task scheduled while the thread waits for a far head runs promptly
// (seed 001: "submitting a task due sooner"). Fails if the wake-up is lost.
template <class S>
bool earlier_task_runs_promptly(Duration far) {
  std::promise<void> ran;
  auto fut = ran.get_future();
  S svc;
  svc.schedule(S::Task::make([] {}), far);
  std::this_thread::sleep_for(30ms);  // let the thread start waiting for `far`
  svc.schedule(S::Task::make([&ran] { ran.set_value(); }), ms(50));
  const bool ok = ready_within(fut, kWatchdog);
  svc.shutdown_now();  // joins; mutants' threads are woken here or at `far`
  return ok;
}

// shutdown() wakes a thread sleeping on a far head (Problem 2) or on an empty queue
// (Problem 1) promptly, joins it and returns the far task unrun.
template <class S>
bool shutdown_wakes_sleeping_thread(std::optional<Duration> far) {
  using TaskPtr = typename S::TaskPtr;
  std::promise<std::vector<TaskPtr>> done;
  auto fut = done.get_future();
  S svc;
  if (far) svc.schedule(S::Task::make([] {}), *far);
  std::this_thread::sleep_for(30ms);  // let the thread block
  std::thread closer([&] { done.set_value(svc.shutdown()); });
  const bool prompt = ready_within(fut, kWatchdog);
  if (!prompt) svc.wake();  // rescue a thread nobody woke (a sleeper wakes at `far`)
  closer.join();
  const auto rest = fut.get();
  return prompt && rest.size() == (far ? 1u : 0u);
}

// A throwing task is counted and the thread lives on to run a later task.
template <class S>
bool thread_survives_throwing_task() {
  std::promise<void> ran;
  auto fut = ran.get_future();
  S svc;
  svc.schedule(S::Task::make([] { throw std::runtime_error("boom"); }), Duration::zero());
  svc.schedule(S::Task::make([&ran] { ran.set_value(); }), ms(20));
  const bool ok = ready_within(fut, kWatchdog);
  svc.shutdown_now();
  return ok && svc.stats().exceptions == 1 && svc.last_error() == "boom";
}

// Several threads schedule tasks due within 2 ms and cancel half of them at once
// (alternating service.cancel and task->cancel). Returns the number of violations
// of "cancel() == true  <=>  the task never runs; otherwise it runs exactly once".
template <class S>
std::size_t cancel_violations() {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  constexpr int kTotal = kThreads * kPerThread;
  std::unique_ptr<std::atomic<int>[]> runs(new std::atomic<int>[kTotal]);
  std::unique_ptr<bool[]> cancelled(new bool[kTotal]());
  for (int i = 0; i < kTotal; ++i) runs[i].store(0);
  std::atomic<int> total_runs{0};
  S svc;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 1);
      stress::seed_thread(static_cast<std::uint64_t>(t) + 1);
      for (int i = 0; i < kPerThread; ++i) {
        const int idx = t * kPerThread + i;
        auto task = S::Task::make([&runs, &total_runs, idx] {
          runs[idx].fetch_add(1);
          total_runs.fetch_add(1);
        });
        svc.schedule(task, Duration::microseconds(static_cast<std::int64_t>(rng() % 2000)));
        if (i % 2 == 0) cancelled[idx] = (i % 4 == 0) ? svc.cancel(task) : task->cancel();
      }
    });
  }
  for (auto& th : threads) th.join();
  int expected = 0;
  for (int i = 0; i < kTotal; ++i) expected += cancelled[i] ? 0 : 1;
  // Wait (bounded) until every uncancelled task has run; the last is due in 2 ms.
  for (int spins = 0; spins < 5000 && total_runs.load() < expected; ++spins) {
    std::this_thread::sleep_for(1ms);
  }
  svc.shutdown();
  svc.check_invariants();
  std::size_t violations = 0;
  for (int i = 0; i < kTotal; ++i) {
    const int r = runs[i].load();
    if (cancelled[i] ? r != 0 : r != 1) ++violations;
  }
  if (svc.stats().tasks_run != static_cast<std::uint64_t>(total_runs.load())) ++violations;
  return violations;
}

// Threads schedule, re-time (reschedule) and cancel tasks on a capped service while
// the timer thread runs them: every task runs at most once, a task whose cancel
// returned true never runs, every other admitted task runs exactly once, and
// pending never passes the cap. Returns the number of violations. With `far`, every
// delay is 10 s: the cap is reached for sure and only the cap is checked.
template <class S>
std::size_t reschedule_and_cap_violations(bool far = false) {
  constexpr int kThreads = 3;
  constexpr int kPerThread = 200;
  constexpr std::size_t kCap = 64;
  constexpr int kTotal = kThreads * kPerThread;
  std::unique_ptr<std::atomic<int>[]> runs(new std::atomic<int>[kTotal]);
  std::unique_ptr<int[]> fate(new int[kTotal]());  // 0 admitted, 1 cancelled, 2 rejected
  for (int i = 0; i < kTotal; ++i) runs[i].store(0);
  std::atomic<std::size_t> over_cap{0};
  S svc(TimerServiceOptions{.max_pending = kCap});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 7);
      for (int i = 0; i < kPerThread; ++i) {
        const int idx = t * kPerThread + i;
        auto task = S::Task::make([&runs, idx] { runs[idx].fetch_add(1); });
        const auto delay = [&] {
          return far ? Duration::seconds(10)
                     : Duration::microseconds(static_cast<std::int64_t>(rng() % 500));
        };
        try {
          svc.schedule(task, delay());
        } catch (const RejectedError&) {
          fate[idx] = 2;
          continue;
        }
        for (unsigned k = rng() % 3; k > 0; --k) {
          svc.reschedule(task, delay());
        }
        if (i % 3 == 0 && svc.cancel(task)) fate[idx] = 1;
        if (svc.stats().pending > kCap) over_cap.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  if (far) return over_cap.load();
  int expected = 0;
  for (int i = 0; i < kTotal; ++i) expected += fate[i] == 0 ? 1 : 0;
  for (int spins = 0; spins < 5000; ++spins) {  // bounded: the last is due in < 1.5 ms
    int done = 0;
    for (int i = 0; i < kTotal; ++i) done += runs[i].load();
    if (done >= expected) break;
    std::this_thread::sleep_for(1ms);
  }
  svc.shutdown();
  svc.check_invariants();
  std::size_t violations = over_cap.load();
  for (int i = 0; i < kTotal; ++i) {
    if (runs[i].load() != (fate[i] == 0 ? 1 : 0)) ++violations;
  }
  return violations;
}

// ---- On the shipped code, every strategy --------------------------------------

template <class Q>
class TimerServiceThreadTest : public ::testing::Test {};
using Queues = QueueTypes<TimerTaskPtr<StdPlatform>, StdPlatform, ::testing::Types>;
TYPED_TEST_SUITE(TimerServiceThreadTest, Queues);

// An earlier task wakes the thread waiting for a 10 s head.
TYPED_TEST(TimerServiceThreadTest, EarlierTaskWakesTheThread) {
  EXPECT_TRUE(
      (earlier_task_runs_promptly<TimerService<TypeParam, StdPlatform>>(Duration::seconds(10))));
}

// shutdown() wakes a thread sleeping on a far head, and one blocked on an empty queue.
TYPED_TEST(TimerServiceThreadTest, ShutdownWakesASleepingThread) {
  using S = TimerService<TypeParam, StdPlatform>;
  EXPECT_TRUE(shutdown_wakes_sleeping_thread<S>(Duration::seconds(10)));
  EXPECT_TRUE(shutdown_wakes_sleeping_thread<S>(std::nullopt));
}

// A throwing task does not kill the thread.
TYPED_TEST(TimerServiceThreadTest, ThrowingTaskDoesNotKillTheThread) {
  EXPECT_TRUE((thread_survives_throwing_task<TimerService<TypeParam, StdPlatform>>()));
}

// Concurrent schedule and cancel: each task runs exactly once unless a cancel won.
TYPED_TEST(TimerServiceThreadTest, ConcurrentScheduleAndCancelAreExclusive) {
  EXPECT_EQ((cancel_violations<TimerService<TypeParam, StdPlatform>>()), 0u);
}

// reschedule and max_pending under threads: runs once or never, the cap holds.
TYPED_TEST(TimerServiceThreadTest, RescheduleAndCapUnderThreads) {
  EXPECT_EQ((reschedule_and_cap_violations<TimerService<TypeParam, StdPlatform>>()), 0u);
}

// The cap part of the check, with every task 10 s out so the cap is surely reached:
// it holds on the shipped code and fails on the cap mutant (pending passes the cap).
TEST(TimerServiceThread, CapOffByOneFailsTheThreadedCheck) {
  using S = TimerServiceOn<BinaryHeapQueue, MutantPlatform<StdPlatform, Mutant::kTimerCapOffByOne>>;
  EXPECT_EQ((reschedule_and_cap_violations<TimerServiceOn<BinaryHeapQueue, StdPlatform>>(true)), 0u);
  EXPECT_GT(reschedule_and_cap_violations<S>(true), 0u);
}

// ---- Fault plans on the shipped code: the windows exist but are harmless ----

using StressService = TimerServiceOn<BinaryHeapQueue, StressPlatform>;

// With a long delay between the thread computing its wait and blocking (and before
// every notify), an earlier task still wakes it: the window is inside the lock.
TEST(TimerServiceThread, EarlierTaskWakesDespiteFaultDelays) {
  FaultScope faults({{FaultPoint::kTimerAfterComputeWait, delay_always(150ms)},
                     {FaultPoint::kTimerBeforeNotify, delay_always(10ms)}});
  EXPECT_TRUE(earlier_task_runs_promptly<StressService>(Duration::seconds(10)));
}

// Delays before each run widen the cancel-versus-run race; exclusivity still holds.
TEST(TimerServiceThread, CancelIsExclusiveDespiteFaultDelays) {
  FaultScope faults(
      {{FaultPoint::kTimerBeforeRunTask, {stress::FaultAction::kDelay, 0.5, 0, 50'000}},
       {FaultPoint::kTimerAfterComputeWait, {stress::FaultAction::kYield, 1.0, 0, 0}}});
  EXPECT_EQ(cancel_violations<StressService>(), 0u);
}

// A virtual-clock service with a thread runs a task once time is advanced and the
// thread woken.
TEST(TimerServiceThread, VirtualClockThreadRunsAfterAdvanceAndWake) {
  using S = TimerServiceOn<HashedWheelQueue, ManualStdPlatform>;
  std::promise<void> ran;
  auto fut = ran.get_future();
  ManualClock clock;
  S svc(clock);
  svc.schedule(S::Task::make([&ran] { ran.set_value(); }), ms(10));
  clock.advance(ms(10));
  svc.wake();
  EXPECT_TRUE(ready_within(fut, kWatchdog));
  svc.shutdown();
}

// A task may shut its own service down: it gets the far task back, nothing
// deadlocks, and the destructor joins the thread.
TEST(TimerServiceThread, ShutdownFromInsideATask) {
  using S = TimerServiceOn<BinaryHeapQueue, StdPlatform>;
  std::promise<std::vector<S::TaskPtr>> got;
  auto fut = got.get_future();
  {
    S svc;
    auto far = S::Task::make([] {});
    svc.schedule(far, Duration::seconds(10));
    svc.schedule(S::Task::make([&] { got.set_value(svc.shutdown()); }), Duration::zero());
    ASSERT_TRUE(ready_within(fut, kWatchdog));
    EXPECT_EQ(fut.get(), std::vector<S::TaskPtr>{far});
    EXPECT_TRUE(svc.is_shutdown());
  }
}

// Fixed-rate and fixed-delay tasks run repeatedly on the real thread until
// cancelled from outside; cancel stops them.
TEST(TimerServiceThread, PeriodicTasksRunUntilCancelled) {
  using S = TimerServiceOn<BinaryHeapQueue, StdPlatform>;
  std::atomic<int> rate_runs{0};
  std::atomic<int> delay_runs{0};
  S svc;
  auto rate = S::Task::make([&] { rate_runs.fetch_add(1); });
  auto delay = S::Task::make([&] { delay_runs.fetch_add(1); });
  svc.schedule_at_fixed_rate(rate, Duration::zero(), ms(1));
  svc.schedule_fixed_delay(delay, Duration::zero(), ms(1));
  for (int spins = 0; spins < 5000 && (rate_runs.load() < 5 || delay_runs.load() < 5); ++spins) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(svc.cancel(rate));
  EXPECT_TRUE(delay->cancel());
  EXPECT_GE(rate_runs.load(), 5);
  EXPECT_GE(delay_runs.load(), 5);
  svc.shutdown();
  const int after = rate_runs.load() + delay_runs.load();
  EXPECT_EQ(after, static_cast<int>(svc.stats().tasks_run));
}

// ---- Mutants: every timer mutant fails one of the checks ----------------------

template <Mutant M>
using StdMutant = TimerServiceOn<BinaryHeapQueue, MutantPlatform<StdPlatform, M>>;
template <Mutant M>
using StressMutant = TimerServiceOn<BinaryHeapQueue, MutantPlatform<StressPlatform, M>>;

// kTimerNoNotifyOnEarlier: the earlier task waits for the 10 s head.
TEST(TimerServiceThreadMutants, NoNotifyOnEarlierIsCaught) {
  EXPECT_FALSE(earlier_task_runs_promptly<StdMutant<Mutant::kTimerNoNotifyOnEarlier>>(
      Duration::seconds(10)));
}

// kTimerNotifyWithoutLock: with the thread held in its compute-then-wait window,
// both notifies land while it is not waiting and are lost (seed 001's race).
TEST(TimerServiceThreadMutants, NotifyWithoutLockIsCaught) {
  FaultScope faults({{FaultPoint::kTimerAfterComputeWait, delay_always(150ms)},
                     {FaultPoint::kTimerBeforeNotify, delay_always(10ms)}});
  EXPECT_FALSE(earlier_task_runs_promptly<StressMutant<Mutant::kTimerNotifyWithoutLock>>(
      Duration::seconds(10)));
}

// kTimerSleepNotWait ("Attempt 2"): the sleeping thread hears neither the earlier
// task nor shutdown until its 2 s head is due.
TEST(TimerServiceThreadMutants, SleepNotWaitIsCaught) {
  using S = StdMutant<Mutant::kTimerSleepNotWait>;
  EXPECT_FALSE(earlier_task_runs_promptly<S>(Duration::seconds(2)));
  EXPECT_FALSE(shutdown_wakes_sleeping_thread<S>(Duration::seconds(2)));
}

// kTimerShutdownNoWake: shutdown hangs on a thread sleeping on a far head
// (Problem 2) and on an empty queue (Problem 1).
TEST(TimerServiceThreadMutants, ShutdownNoWakeIsCaught) {
  using S = StdMutant<Mutant::kTimerShutdownNoWake>;
  EXPECT_FALSE(shutdown_wakes_sleeping_thread<S>(Duration::seconds(10)));
  EXPECT_FALSE(shutdown_wakes_sleeping_thread<S>(std::nullopt));
}

// kTimerExceptionKillsThread: the thread dies with the first throwing task and
// the later task never runs.
TEST(TimerServiceThreadMutants, ExceptionKillsThreadIsCaught) {
  EXPECT_FALSE(thread_survives_throwing_task<StdMutant<Mutant::kTimerExceptionKillsThread>>());
}

// kTimerCancelNoRemove: cancels report success while the tasks still run.
TEST(TimerServiceThreadMutants, CancelNoRemoveIsCaught) {
  EXPECT_GT(cancel_violations<StdMutant<Mutant::kTimerCancelNoRemove>>(), 0u);
}

}  // namespace
}  // namespace tlab
