// tlab/platform/fault_point.h: the catalogue of named race windows.
//
// A FaultPoint marks a place in core/ where a race can happen: between a
// canceller's read of the token and its CAS, between the timer thread computing
// its wait and blocking, between a worker swapping out its wheel and pushing it to
// the merge queue. Core code calls `Platform::fault(FaultPoint::kX)` there.
//   StdPlatform     no-op, constexpr, compiled out.
//   StressPlatform  delays, yields or spins per the scenario's fault plan.
//   RelacyPlatform  nothing: Relacy already preempts at every atomic operation.
//
// To add one: append an enumerator (before kCount) and a row to kFaultPointInfo in
// the same order; the static_assert keeps the two in step.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tlab {

enum class FaultPoint : std::uint8_t {
  kTokenBeforeResolveCas,    // resolver has read/holds its token, CAS not yet done
  kTokenAfterArm,            // armer published the new word, token not yet recorded
  kWaiterBeforeSuspend,      // before_suspend ran, waiter not yet parked
  kWaiterAfterResolve,       // resolver won, waiter not yet unparked
  kTimerAfterComputeWait,    // timer thread computed its wait, not yet blocked
  kTimerBeforeNotify,        // scheduler inserted an earlier head, not yet notified
  kTimerBeforeRunTask,       // task popped as due, not yet run
  kQueueBeforeExpire,        // expiry pass about to start
  kExecutorBeforeMergePush,  // worker swapped out its wheel, not yet on the merge queue
  kExecutorCancelBetween,    // canceller bumped generation, state not yet Cancelled
  kExecutorBeforeFire,       // worker matched generation, not yet marked Fired
  kWaitGroupBeforeCas,       // done()/timeout read the split counter, CAS not yet done
  kMutexBeforeEnqueue,       // lock_for failed its try, waiter not yet on the list
  kMutexUnlockBeforeResolve, // unlock dequeued a waiter, token not yet resolved
  kSemaphoreBeforeResolve,   // release dequeued a waiter, token not yet resolved
  kCoroBeforeResume,         // a coroutine wake-up won, coroutine not yet scheduled
  kWaitListBeforePush,       // a timed acquire found nothing free, not yet on the list
  kSemaphoreBeforeCount,     // release found no waiter, permit not yet counted
  kWaitGroupBeforePark,      // wait_for found the group incomplete, not yet parked
  kCoroBeforeRegister,       // an awaiter found the Event unset, not yet registered
  kCount
};

inline constexpr std::size_t kFaultPointCount = static_cast<std::size_t>(FaultPoint::kCount);

struct FaultPointInfo {
  FaultPoint id;
  std::string_view name;  // scenario spelling: "<component>.<window>"
  std::string_view description;
};

inline constexpr std::array<FaultPointInfo, kFaultPointCount> kFaultPointInfo{{
    {FaultPoint::kTokenBeforeResolveCas, "token.before_resolve_cas",
     "a resolver holds its token but has not yet CASed the word"},
    {FaultPoint::kTokenAfterArm, "token.after_arm",
     "the word is armed but the token is not yet recorded by the waiter"},
    {FaultPoint::kWaiterBeforeSuspend, "waiter.before_suspend",
     "before_suspend has published the token; the waiter is not yet parked"},
    {FaultPoint::kWaiterAfterResolve, "waiter.after_resolve",
     "a resolver has won; the waiter is not yet unparked"},
    {FaultPoint::kTimerAfterComputeWait, "timer.after_compute_wait",
     "the timer thread computed how long to wait but is not yet blocked"},
    {FaultPoint::kTimerBeforeNotify, "timer.before_notify",
     "schedule() inserted a new head but has not yet notified the timer thread"},
    {FaultPoint::kTimerBeforeRunTask, "timer.before_run_task",
     "a due task was taken from the queue but has not yet run"},
    {FaultPoint::kQueueBeforeExpire, "queue.before_expire",
     "an expiry pass is about to start"},
    {FaultPoint::kExecutorBeforeMergePush, "executor.before_merge_push",
     "a stopping worker swapped out its wheel; entries not yet on the merge queue"},
    {FaultPoint::kExecutorCancelBetween, "executor.cancel_between",
     "a canceller bumped the generation but has not yet set state Cancelled"},
    {FaultPoint::kExecutorBeforeFire, "executor.before_fire",
     "a worker matched the generation but has not yet marked the timer Fired"},
    {FaultPoint::kWaitGroupBeforeCas, "wait_group.before_cas",
     "done() or the timeout read the split counter; CAS not yet done"},
    {FaultPoint::kMutexBeforeEnqueue, "mutex.before_enqueue",
     "lock_for failed to take the lock; the waiter is not yet on the list"},
    {FaultPoint::kMutexUnlockBeforeResolve, "mutex.unlock_before_resolve",
     "unlock dequeued a waiter but has not yet resolved its token"},
    {FaultPoint::kSemaphoreBeforeResolve, "semaphore.before_resolve",
     "release dequeued a waiter but has not yet resolved its token"},
    {FaultPoint::kCoroBeforeResume, "coro.before_resume",
     "a coroutine wake-up won its race; the coroutine is not yet scheduled"},
    {FaultPoint::kWaitListBeforePush, "wait_list.before_push",
     "a timed acquire (mutex, semaphore, pool) found nothing free; the waiter is not yet "
     "on the list (the list lock closes this window in correct code)"},
    {FaultPoint::kSemaphoreBeforeCount, "semaphore.before_count",
     "release found no waiter; the permit is not yet counted (the list lock closes this "
     "window in correct code)"},
    {FaultPoint::kWaitGroupBeforePark, "wait_group.before_park",
     "wait_for found the group incomplete; the waiter is not yet parked (the group's lock "
     "closes this window in correct code)"},
    {FaultPoint::kCoroBeforeRegister, "coro.before_register",
     "a coroutine found the Event unset; it is not yet registered (the Event's lock closes "
     "this window in correct code)"},
}};

constexpr bool fault_table_in_order() {
  for (std::size_t i = 0; i < kFaultPointCount; ++i) {
    if (static_cast<std::size_t>(kFaultPointInfo[i].id) != i) return false;
  }
  return true;
}
static_assert(fault_table_in_order(), "kFaultPointInfo rows must follow the FaultPoint enum order");

constexpr std::string_view name_of(FaultPoint p) {
  return kFaultPointInfo[static_cast<std::size_t>(p)].name;
}

constexpr std::optional<FaultPoint> fault_point_from_name(std::string_view name) {
  for (const auto& row : kFaultPointInfo) {
    if (row.name == name) return row.id;
  }
  return std::nullopt;
}

}  // namespace tlab
