// TimerService (timer_service.h) with its real timer thread: wake-ups, shutdown,
// exceptions and cross-thread schedule/cancel. Bounded by operation counts and
// hand-shakes, never by how fast a thread runs:
//   - what the shipped code must do (run an earlier task, come back from shutdown,
//     run every admitted task) gets kHangGuard, 30 s, a hang guard far above any
//     load; the far heads it must not wait for are an hour out (kFar), so a lost
//     wake-up can never pass for a slow one;
//   - a mutant's check waits kMutantWait, 1 s, for what that mutant never does
//     before its far head (an hour out; 2 s for kTimerSleepNotWait, whose sleeping
//     thread nothing can wake, so its check costs 2 s): that wait sets what a caught
//     mutant costs, never whether it is caught, since load only delays the thread;
//   - "the thread now waits for the far head" is a hand-shake, not a nap: the
//     services run on StressPlatform, whose fault point kTimerAfterComputeWait
//     counts every wait the thread decides (waits_decided()), and the window of
//     kTimerNotifyWithoutLock is held open by a gate (testing::GatedPlatform).
//
// Each check is a function run once on the shipped code (it must pass) and once per
// mutant it exists for (it must fail). The mutants whose bug is a hang (a thread
// nobody wakes) are rescued afterwards (wake(), or the 2 s head of
// kTimerSleepNotWait). Fault plans widen the windows on the shipped code, which
// must pass whatever they do.
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
#include "support/sync_test_util.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"

namespace tlab {
namespace {

using namespace std::chrono_literals;
using testing::MutantPlatform;
using testing::spin_until;

// What the shipped code must do is awaited this long at most: a hang guard.
constexpr auto kHangGuard = 30s;
// What a mutant never does before its far head is awaited this long.
constexpr auto kMutantWait = 1s;
// A head the thread must never wait for: an hour out, far past kHangGuard.
constexpr Duration kFar = Duration::seconds(3600);

Duration ms(std::int64_t n) { return Duration::milliseconds(n); }

template <class F>
bool ready_within(F& future, std::chrono::milliseconds limit) {
  return future.wait_for(limit) == std::future_status::ready;
}

// eventually(pred): polls pred every millisecond until it holds (true) or
// kHangGuard has passed (false).
template <class Pred>
bool eventually(Pred&& pred) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// The waits the timer threads have decided so far: hits of kTimerAfterComputeWait,
// which a StressPlatform service counts with or without a fault plan.
std::uint64_t waits_decided() { return stress::stats(FaultPoint::kTimerAfterComputeWait).hits; }

// settle: the hand-shake that replaces "sleep and hope the thread is waiting".
// `before` is waits_decided() read before `svc` was made. Waits until the thread
// has decided its first wait (on the empty queue); then, with `far`, schedules a
// do-nothing task that far out and, if the service hears that schedule (every one
// but kTimerNoNotifyOnEarlier's, whose thread then waits on untimed), waits until
// the thread has decided its wait for it.
template <class S>
void settle(S& svc, std::uint64_t before, std::optional<Duration> far, bool far_is_heard = true) {
  EXPECT_TRUE(spin_until([&] { return waits_decided() >= before + 1; })) << "no wait decided";
  if (!far) return;
  svc.schedule(S::Task::make([] {}), *far);
  if (far_is_heard) {
    EXPECT_TRUE(spin_until([&] { return waits_decided() >= before + 2; })) << "far head unheard";
  }
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

// An earlier task scheduled while the thread waits for a far head runs within
// `limit` (seed 001: "submitting a task due sooner"). Fails if the wake-up is lost.
template <class S>
bool earlier_task_runs_promptly(Duration far, std::chrono::milliseconds limit,
                                bool far_is_heard = true) {
  std::promise<void> ran;
  auto fut = ran.get_future();
  const std::uint64_t before = waits_decided();
  S svc;
  settle(svc, before, far, far_is_heard);
  svc.schedule(S::Task::make([&ran] { ran.set_value(); }), ms(50));
  const bool ok = ready_within(fut, limit);
  svc.shutdown_now();  // joins; mutants' threads are woken here or at `far`
  return ok;
}

// shutdown() wakes a thread sleeping on a far head (Problem 2) or on an empty queue
// (Problem 1) within `limit`, joins it and returns the far task unrun.
template <class S>
bool shutdown_wakes_sleeping_thread(std::optional<Duration> far, std::chrono::milliseconds limit) {
  using TaskPtr = typename S::TaskPtr;
  std::promise<std::vector<TaskPtr>> done;
  auto fut = done.get_future();
  const std::uint64_t before = waits_decided();
  S svc;
  settle(svc, before, far);
  std::thread closer([&] { done.set_value(svc.shutdown()); });
  const bool prompt = ready_within(fut, limit);
  if (!prompt) svc.wake();  // rescue a thread nobody woke (a sleeper wakes at `far`)
  closer.join();
  const auto rest = fut.get();
  return prompt && rest.size() == (far ? 1u : 0u);
}

// A throwing task is counted and the thread lives on to run a later task within
// `limit`.
template <class S>
bool thread_survives_throwing_task(std::chrono::milliseconds limit) {
  std::promise<void> ran;
  auto fut = ran.get_future();
  S svc;
  svc.schedule(S::Task::make([] { throw std::runtime_error("boom"); }), Duration::zero());
  svc.schedule(S::Task::make([&ran] { ran.set_value(); }), ms(20));
  const bool ok = ready_within(fut, limit);
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
  // Wait until every uncancelled task has run (the last is due in 2 ms); a task
  // still unrun after kHangGuard is a violation below.
  (void)eventually([&] { return total_runs.load() >= expected; });
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
// delay is kFar: the cap is reached for sure and only the cap is checked.
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
          return far ? kFar : Duration::microseconds(static_cast<std::int64_t>(rng() % 500));
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
  // The last is due in < 1.5 ms; a task still unrun after kHangGuard is a violation.
  (void)eventually([&] {
    int done = 0;
    for (int i = 0; i < kTotal; ++i) done += runs[i].load();
    return done >= expected;
  });
  svc.shutdown();
  svc.check_invariants();
  std::size_t violations = over_cap.load();
  for (int i = 0; i < kTotal; ++i) {
    if (runs[i].load() != (fate[i] == 0 ? 1 : 0)) ++violations;
  }
  return violations;
}

// ---- On the shipped code, every strategy --------------------------------------
// On StressPlatform with no fault plan: the shipped code, with waits_decided().

template <class Q>
class TimerServiceThreadTest : public ::testing::Test {};
using Queues = QueueTypes<TimerTaskPtr<StressPlatform>, StressPlatform, ::testing::Types>;
TYPED_TEST_SUITE(TimerServiceThreadTest, Queues);

// An earlier task wakes the thread waiting for an hour's head.
TYPED_TEST(TimerServiceThreadTest, EarlierTaskWakesTheThread) {
  EXPECT_TRUE(
      (earlier_task_runs_promptly<TimerService<TypeParam, StressPlatform>>(kFar, kHangGuard)));
}

// shutdown() wakes a thread sleeping on a far head, and one blocked on an empty queue.
TYPED_TEST(TimerServiceThreadTest, ShutdownWakesASleepingThread) {
  using S = TimerService<TypeParam, StressPlatform>;
  EXPECT_TRUE(shutdown_wakes_sleeping_thread<S>(kFar, kHangGuard));
  EXPECT_TRUE(shutdown_wakes_sleeping_thread<S>(std::nullopt, kHangGuard));
}

// A throwing task does not kill the thread.
TYPED_TEST(TimerServiceThreadTest, ThrowingTaskDoesNotKillTheThread) {
  EXPECT_TRUE((thread_survives_throwing_task<TimerService<TypeParam, StressPlatform>>(kHangGuard)));
}

// Concurrent schedule and cancel: each task runs exactly once unless a cancel won.
TYPED_TEST(TimerServiceThreadTest, ConcurrentScheduleAndCancelAreExclusive) {
  EXPECT_EQ((cancel_violations<TimerService<TypeParam, StressPlatform>>()), 0u);
}

// reschedule and max_pending under threads: runs once or never, the cap holds.
TYPED_TEST(TimerServiceThreadTest, RescheduleAndCapUnderThreads) {
  EXPECT_EQ((reschedule_and_cap_violations<TimerService<TypeParam, StressPlatform>>()), 0u);
}

// The cap part of the check, with every task an hour out so the cap is surely
// reached: it holds on the shipped code and fails on the cap mutant (pending passes
// the cap).
TEST(TimerServiceThread, CapOffByOneFailsTheThreadedCheck) {
  using S = TimerServiceOn<BinaryHeapQueue, MutantPlatform<StdPlatform, Mutant::kTimerCapOffByOne>>;
  EXPECT_EQ((reschedule_and_cap_violations<TimerServiceOn<BinaryHeapQueue, StdPlatform>>(true)),
            0u);
  EXPECT_GT(reschedule_and_cap_violations<S>(true), 0u);
}

// ---- Fault plans on the shipped code: the windows exist but are harmless ----

using StressService = TimerServiceOn<BinaryHeapQueue, StressPlatform>;

// With a long delay between the thread computing its wait and blocking (and before
// every notify), an earlier task still wakes it: the window is inside the lock.
TEST(TimerServiceThread, EarlierTaskWakesDespiteFaultDelays) {
  FaultScope faults({{FaultPoint::kTimerAfterComputeWait, delay_always(150ms)},
                     {FaultPoint::kTimerBeforeNotify, delay_always(10ms)}});
  EXPECT_TRUE(earlier_task_runs_promptly<StressService>(kFar, kHangGuard));
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
  EXPECT_TRUE(ready_within(fut, kHangGuard));
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
    svc.schedule(far, kFar);
    svc.schedule(S::Task::make([&] { got.set_value(svc.shutdown()); }), Duration::zero());
    ASSERT_TRUE(ready_within(fut, kHangGuard));
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
  EXPECT_TRUE(eventually([&] { return rate_runs.load() >= 5 && delay_runs.load() >= 5; }));
  EXPECT_TRUE(svc.cancel(rate));
  EXPECT_TRUE(delay->cancel());
  svc.shutdown();
  const int after = rate_runs.load() + delay_runs.load();
  EXPECT_EQ(after, static_cast<int>(svc.stats().tasks_run));
}

// ---- Mutants: every timer mutant fails one of the checks ----------------------
// On StressPlatform, so that settle() sees the waits the mutant's thread decides.

template <Mutant M>
using StressMutant = TimerServiceOn<BinaryHeapQueue, MutantPlatform<StressPlatform, M>>;

// kTimerNoNotifyOnEarlier: the earlier task waits for the hour's head. The far
// head's own schedule is not heard either: the thread, waiting on the empty queue,
// waits on.
TEST(TimerServiceThreadMutants, NoNotifyOnEarlierIsCaught) {
  EXPECT_FALSE(earlier_task_runs_promptly<StressMutant<Mutant::kTimerNoNotifyOnEarlier>>(
      kFar, kMutantWait, /*far_is_heard=*/false));
}

// kTimerNotifyWithoutLock (seed 001's race): a schedule made while the thread is
// between deciding its wait (on the empty queue) and waiting, held there by a
// gate, notifies nobody; the thread then waits on for ever and the task never runs.
// The mutant only: on the shipped code that window is inside mu_, where a held
// thread would keep the schedule out (EarlierTaskWakesDespiteFaultDelays widens it
// there instead).
TEST(TimerServiceThreadMutants, NotifyWithoutLockIsCaught) {
  using Gated = testing::GatedPlatform<StressPlatform, FaultPoint::kTimerAfterComputeWait>;
  using S = TimerServiceOn<BinaryHeapQueue, MutantPlatform<Gated, Mutant::kTimerNotifyWithoutLock>>;
  std::promise<void> ran;
  auto fut = ran.get_future();
  Gated::gate().close();
  S svc;
  ASSERT_TRUE(spin_until([] { return Gated::gate().held() == 1; }));
  svc.schedule(S::Task::make([&ran] { ran.set_value(); }), ms(50));
  Gated::gate().open();
  EXPECT_FALSE(ready_within(fut, kMutantWait));
  svc.shutdown_now();
}

// kTimerSleepNotWait ("Attempt 2"): the sleeping thread hears neither the earlier
// task nor shutdown until its 2 s head is due, past kMutantWait.
TEST(TimerServiceThreadMutants, SleepNotWaitIsCaught) {
  using S = StressMutant<Mutant::kTimerSleepNotWait>;
  EXPECT_FALSE(earlier_task_runs_promptly<S>(Duration::seconds(2), kMutantWait));
  EXPECT_FALSE(shutdown_wakes_sleeping_thread<S>(Duration::seconds(2), kMutantWait));
}

// kTimerShutdownNoWake: shutdown hangs on a thread sleeping on a far head
// (Problem 2) and on an empty queue (Problem 1).
TEST(TimerServiceThreadMutants, ShutdownNoWakeIsCaught) {
  using S = StressMutant<Mutant::kTimerShutdownNoWake>;
  EXPECT_FALSE(shutdown_wakes_sleeping_thread<S>(kFar, kMutantWait));
  EXPECT_FALSE(shutdown_wakes_sleeping_thread<S>(std::nullopt, kMutantWait));
}

// kTimerExceptionKillsThread: the thread dies with the first throwing task and
// the later task never runs.
TEST(TimerServiceThreadMutants, ExceptionKillsThreadIsCaught) {
  EXPECT_FALSE(
      thread_survives_throwing_task<StressMutant<Mutant::kTimerExceptionKillsThread>>(kMutantWait));
}

// kTimerCancelNoRemove: cancels report success while the tasks still run.
TEST(TimerServiceThreadMutants, CancelNoRemoveIsCaught) {
  EXPECT_GT(cancel_violations<StressMutant<Mutant::kTimerCancelNoRemove>>(), 0u);
}

}  // namespace
}  // namespace tlab
