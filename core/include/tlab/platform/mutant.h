// tlab/platform/mutant.h: the catalogue of deliberate, named bugs.
//
// A Mutant is a real failure class, compiled into the shipped code behind
// `if (Platform::mutated(Mutant::kX))`. In StdPlatform mutated() is
// `constexpr false`, so the branch and the buggy code vanish at compile time
// (static_assert'ed in std_platform.h). In StressPlatform the tlab runner turns
// one on with --mutant; in RelacyPlatform a model turns one on per run.
//
// Mutants exist so that every check can prove it detects something: each one is
// listed in the `catches` of at least one scenario, property test or model, and
// `tlab check` fails if a listed mutant survives.
//
// To add one: append an enumerator (before kCount) and a row to kMutantInfo in the
// same order; the static_assert below keeps the two in step.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tlab {

enum class Mutant : std::uint8_t {
  // --- timeout_token.h (RFC 0014) ---
  kTokenFlagOnly,         // arm() does not bump the generation: ABA, stale resolve wins
  kTokenRelaxedResolve,   // resolve CAS is relaxed: waiter may miss the resolver's writes
  kTokenLoadStoreResolve, // resolve is load-compare-store, not CAS: two winners
  // --- waiter.h ---
  kWaiterResumeOnLostResolve,  // a loser of resolve resumes the waiter anyway
  // --- timer_service.h (seed 001) ---
  kTimerNotifyWithoutLock,     // notify outside the lock: missed notify
  kTimerSleepNotWait,          // "Attempt 2": sleep until head, deaf to earlier tasks
  kTimerNoNotifyOnEarlier,     // no wake when a new task becomes the head
  kTimerExceptionKillsThread,  // a throwing task kills the timer thread
  kTimerShutdownNoWake,        // shutdown does not wake a sleeping thread
  kTimerFixedRateAsDelay,      // fixed-rate computed from run time: drift, no catch-up
  kTimerCancelNoRemove,        // cancel reports success but the task still runs
  // --- queue/ ---
  kHeapUnstableTies,           // equal deadlines fire out of FIFO order
  kHashedWheelIgnoreRounds,    // hashed wheel fires an entry whose rounds are not done
  kHierWheelNoCascade,         // hierarchical wheel fires a coarse slot without cascading
  kWheelNoGenerationCheck,     // per-worker wheel fires a stale (cancelled) entry
  kQueueCancelLeaksEntry,      // cancel reports success but leaves the entry live
  // --- executor.h (seed 003) ---
  kWorkerDropOnShutdown,       // a stopping worker drops its wheel: lost timers
  kExecutorCancelStateOnly,    // cancel sets state without bumping generation
  // --- sync/ ---
  kWaitGroupPlainCounter,      // done() after a timeout drives the counter negative
  kMutexUnlockNoResolve,       // unlock hands the lock over without resolving the token
  kSemaphoreLostPermit,        // a timed-out waiter that was also signalled drops the permit
  // --- coro/ ---
  kCoroTimerLeak,              // with_timeout does not cancel the timer when the awaitable wins
  // --- clock.h ---
  kDelayOverflowWraps,         // now + huge delay wraps into the past and fires at once
  // --- waiter.h (ThreadSanitizer's showcase) ---
  kDataRacePlainFlag,          // parked() reads a plain flag without the lock: a data race
  // --- queue/per_worker_wheel.h (next_deadline bitmap) ---
  kWheelBitmapClearOnCancel,   // cancel clears a bucket's live bit while live entries remain
  // --- queue/per_worker_wheel.h (payload released at cancel) ---
  kWheelRetainCancelledPayload,  // a cancelled entry keeps its payload until its bucket drains
  // --- time arithmetic (issue 10 section 6: overflow in periodic arithmetic) ---
  kTimerFixedDelayWraps,       // fixed-delay next = run taken + period, wrapping add
  kTimerFixedRateWraps,        // fixed-rate catch-up next = deadline + period, wrapping add
  kTimerLatenessWraps,         // lateness = now - deadline, wrapping subtraction
  kTickConversionWraps,        // TickGrid::due_tick: deadline - start, wrapping subtraction
  // --- executor.h (issue 10 section 6: work still running while a worker stops) ---
  kExecutorStopRetiresWheelEarly,  // a stop retires the wheel before running posted tasks
  // --- sharded_timer_service.h (issue 15: tokio's sharded timer, #6682) ---
  kShardedCancelWrongShard,    // cancel(id) goes to the caller's shard, not the timer's
  kShardedNoCrossShardWake,    // a schedule on another shard than 0 never wakes the thread
  kShardedWaitOwnShardOnly,    // the thread sleeps until shard 0's head, not the earliest
  // --- timer_service.h (issue 15: cap, missed-tick policy, re-timing) ---
  kTimerCapOffByOne,           // max_pending admits one task more than the cap
  kTimerSkipAsBurst,           // a Skip task's next run is deadline + period: a late one bursts
  kTimerRescheduleNoMove,      // reschedule() records the new time, the entry stays put
  // --- sync/ and coro/: lost wakeups hidden behind a timeout ---
  kMutexEnqueueAfterRetry,         // lock_for re-tries and enqueues in two list-lock sections
  kSemaphoreCountAfterEmptyCheck,  // release finds no waiter, then adds the permit in a new section
  kPoolSignalOnEmptyOnly,          // a return signals the semaphore only if the free list was empty
  kWaitGroupParkWithoutRecheck,    // wait_for checks incomplete, then parks in a new section
  kCoroEventRegisterAfterCheck,    // an awaiter checks "unset", then registers in a new section
  // --- timer_service.h: callbacks that act ---
  kTimerRunDueSamePass,  // run_due runs a task armed during its pass in that same pass
  kTimerTakeDueStrict,   // a pass takes entries due strictly before now, not at now
  // --- executor/timer_handle.h: callbacks that act ---
  kExecutorFiredAfterRun,  // Fired is stored after the callback: its own re-arm is overwritten
  // --- coro/with_timeout.h: callbacks that act ---
  kCoroDueTimeoutInline,  // an already-due timeout wins at once, without waiting for a pass
  kCount
};

inline constexpr std::size_t kMutantCount = static_cast<std::size_t>(Mutant::kCount);

struct MutantInfo {
  Mutant id;
  std::string_view name;           // CLI spelling, snake_case, stable
  std::string_view component;      // the core/ file the bug lives in
  std::string_view failure_class;  // what a user would see
  // false: the bug is in code that deterministic simulation never runs (run_due's
  // driver mode; a simulated service runs its own thread), so a simulated case
  // cannot catch it and plans it on the engine's own clock instead.
  bool under_sim = true;
};

inline constexpr std::array<MutantInfo, kMutantCount> kMutantInfo{{
    {Mutant::kTokenFlagOnly, "token_flag_only", "timeout_token.h",
     "ABA: a stale token resolves a newer arming (no generation)"},
    {Mutant::kTokenRelaxedResolve, "token_relaxed_resolve", "timeout_token.h",
     "resolve without acquire/release: the woken side misses the resolver's writes"},
    {Mutant::kTokenLoadStoreResolve, "token_load_store_resolve", "timeout_token.h",
     "non-atomic resolve: canceller and expiry both win, double resume"},
    {Mutant::kWaiterResumeOnLostResolve, "waiter_resume_on_lost_resolve", "waiter.h",
     "a resolver that lost the race resumes the waiter anyway: double resume"},
    {Mutant::kTimerNotifyWithoutLock, "timer_notify_without_lock", "timer_service.h",
     "missed notify: an earlier task waits for the old head's deadline"},
    {Mutant::kTimerSleepNotWait, "timer_sleep_not_wait", "timer_service.h",
     "seed 001 Attempt 2: the timer thread sleeps and cannot be woken"},
    {Mutant::kTimerNoNotifyOnEarlier, "timer_no_notify_on_earlier", "timer_service.h",
     "an earlier task never wakes the timer thread: it fires late"},
    {Mutant::kTimerExceptionKillsThread, "timer_exception_kills_thread", "timer_service.h",
     "a throwing task kills the timer thread: later tasks are lost"},
    {Mutant::kTimerShutdownNoWake, "timer_shutdown_no_wake", "timer_service.h",
     "shutdown leaves the timer thread asleep: join hangs until the head is due"},
    {Mutant::kTimerFixedRateAsDelay, "timer_fixed_rate_as_delay", "timer_service.h",
     "fixed-rate task scheduled from its run time: drift, no catch-up"},
    {Mutant::kTimerCancelNoRemove, "timer_cancel_no_remove", "timer_service.h",
     "cancel reports success but the task still runs: fired after cancel"},
    {Mutant::kHeapUnstableTies, "heap_unstable_ties", "queue/binary_heap.h",
     "equal deadlines fire out of insertion order"},
    {Mutant::kHashedWheelIgnoreRounds, "hashed_wheel_ignore_rounds", "queue/hashed_wheel.h",
     "an entry more than one revolution away fires a revolution early"},
    {Mutant::kHierWheelNoCascade, "hier_wheel_no_cascade", "queue/hierarchical_wheel.h",
     "a coarse-level slot fires without cascading: early fire"},
    {Mutant::kWheelNoGenerationCheck, "wheel_no_generation_check", "queue/per_worker_wheel.h",
     "a lazily cancelled entry fires anyway: fired after cancel"},
    {Mutant::kQueueCancelLeaksEntry, "queue_cancel_leaks_entry", "queue/*",
     "cancel reports success but the entry still fires"},
    {Mutant::kWorkerDropOnShutdown, "worker_drop_on_shutdown", "executor.h",
     "a stopping worker drops its timers instead of merging them: lost timers"},
    {Mutant::kExecutorCancelStateOnly, "executor_cancel_state_only", "executor.h",
     "cancel flips state without a generation bump: a re-armed handle's old entry fires"},
    {Mutant::kWaitGroupPlainCounter, "wait_group_plain_counter", "sync/timed_wait_group.h",
     "one plain counter: done() after a timeout drives it below zero"},
    {Mutant::kMutexUnlockNoResolve, "mutex_unlock_no_resolve", "sync/timed_mutex.h",
     "unlock wakes a waiter without winning its token: double resume / lock lost"},
    {Mutant::kSemaphoreLostPermit, "semaphore_lost_permit", "sync/timed_semaphore.h",
     "a permit handed to a waiter that timed out is dropped: permits leak"},
    {Mutant::kCoroTimerLeak, "coro_timer_leak", "coro/with_timeout.h",
     "the losing timer of with_timeout is never cancelled: leaked timers"},
    {Mutant::kDelayOverflowWraps, "delay_overflow_wraps", "clock.h",
     "now + huge delay wraps into the past: the timer fires at once"},
    {Mutant::kDataRacePlainFlag, "data_race_plain_flag", "waiter.h",
     "a plain, non-atomic flag shared between threads: a data race only TSan sees"},
    {Mutant::kWheelBitmapClearOnCancel, "wheel_bitmap_clear_on_cancel", "queue/per_worker_wheel.h",
     "next_deadline skips a bucket that still holds live entries: the owner oversleeps, late fire"},
    {Mutant::kWheelRetainCancelledPayload, "wheel_retain_cancelled_payload",
     "queue/per_worker_wheel.h",
     "a cancelled timer keeps its payload (and all it captured) until its deadline: memory "
     "retention"},
    {Mutant::kTimerFixedDelayWraps, "timer_fixed_delay_wraps", "timer_service.h",
     "fixed-delay next run = run time + huge period wraps into the past: runs back to back"},
    {Mutant::kTimerFixedRateWraps, "timer_fixed_rate_wraps", "timer_service.h",
     "fixed-rate catch-up deadline + huge period wraps into the past: endless catch-up"},
    {Mutant::kTimerLatenessWraps, "timer_lateness_wraps", "timer_service.h",
     "lateness of a deadline far in the past wraps negative: late_max misses it"},
    {Mutant::kTickConversionWraps, "tick_conversion_wraps", "queue/tick_grid.h",
     "a deadline far from the wheel's start wraps to a past tick: the wheel fires it at once"},
    {Mutant::kExecutorStopRetiresWheelEarly, "executor_stop_retires_wheel_early", "executor.h",
     "a stopping worker retires its wheel before running the tasks posted to it: the timers "
     "they schedule land in a stopped worker's wheel, lost unless it restarts (go#44868, "
     "go#45716)"},
    {Mutant::kShardedCancelWrongShard, "sharded_cancel_wrong_shard", "sharded_timer_service.h",
     "cancel looks in the caller's shard: false while the timer is pending (it fires after "
     "cancel), or a stranger with the same handle is cancelled (lost timer)"},
    {Mutant::kShardedNoCrossShardWake, "sharded_no_cross_shard_wake", "sharded_timer_service.h",
     "a new earliest timer on another shard does not wake the timer thread: late, or lost while "
     "shard 0 idles (tokio's sharded timer, reverted in #6682)"},
    {Mutant::kShardedWaitOwnShardOnly, "sharded_wait_own_shard_only", "sharded_timer_service.h",
     "the timer thread sleeps until its own shard's head: a woken thread goes back to sleep past "
     "another shard's earlier timer: late, or lost while shard 0 is empty"},
    {Mutant::kTimerCapOffByOne, "timer_cap_off_by_one", "timer_service.h",
     "max_pending admits one more pending task than the cap (> for >=): the bound users size "
     "memory by is exceeded"},
    {Mutant::kTimerSkipAsBurst, "timer_skip_as_burst", "timer_service.h",
     "a MissedTick::kSkip task catches up like kBurst: after a stall it runs every missed tick "
     "back to back"},
    {Mutant::kTimerRescheduleNoMove, "timer_reschedule_no_move", "timer_service.h",
     "reschedule() returns true but leaves the queue entry at the old deadline: the task runs "
     "early (or late) by the old time"},
    {Mutant::kMutexEnqueueAfterRetry, "mutex_enqueue_after_retry", "sync/wait_list.h",
     "lock_for re-tries the lock under the list lock, drops it, then re-takes it to enqueue: an "
     "unlock in between frees the lock, and the waiter parks until its timeout with the lock "
     "free (lost wakeup reported as a timeout)"},
    {Mutant::kSemaphoreCountAfterEmptyCheck, "semaphore_count_after_empty_check",
     "sync/timed_semaphore.h",
     "release finds the list empty, drops the lock, then adds the permit to the count: a waiter "
     "that enqueued in between sleeps until its timeout with a permit free (lost wakeup)"},
    {Mutant::kPoolSignalOnEmptyOnly, "pool_signal_on_empty_only", "sync/pool.h",
     "a returned object releases a permit only when the free list was empty: a second object "
     "returned while a borrower waits is never announced, the borrower times out with an object "
     "free (lost wakeup)"},
    {Mutant::kWaitGroupParkWithoutRecheck, "wait_group_park_without_recheck",
     "sync/timed_wait_group.h",
     "wait_for sees the group incomplete, drops the lock, then parks without re-checking: a "
     "done() that completes the group in between is missed and the waiter sleeps until its "
     "deadline (lost wakeup)"},
    {Mutant::kCoroEventRegisterAfterCheck, "coro_event_register_after_check", "coro/event.h",
     "an awaiter sees the Event unset, drops its lock, then registers: a set() in between finds "
     "nobody to resume, and the coroutine waits until its timeout (or forever) for a value that "
     "is there (lost wakeup)"},
    {Mutant::kTimerRunDueSamePass, "timer_run_due_same_pass", "timer_service.h",
     "run_due() runs a task armed by a callback of the running pass in that same pass: a "
     "callback that re-arms itself at delay 0 runs again before the pass returns, and a chain "
     "of them starves the driver",
     /*under_sim=*/false},
    {Mutant::kTimerTakeDueStrict, "timer_take_due_strict", "timer_service.h",
     "a pass takes the tasks due strictly before now (< for <=): a task due exactly at the "
     "instant a driver runs a pass waits for the next pass, late by a whole tick (on real "
     "threads the timer thread spins until its clock moves on)",
     /*under_sim=*/false},
    {Mutant::kExecutorFiredAfterRun, "executor_fired_after_run", "executor/timer_handle.h",
     "a fired handle's word is written Fired again after its callback returns, as a handle "
     "that publishes \"done\" after running would: a re-arm the callback made of its own "
     "handle is overwritten, its wheel entry goes stale, and the timer is lost"},
    {Mutant::kCoroDueTimeoutInline, "coro_due_timeout_inline", "coro/with_timeout.h",
     "with_timeout on an Event whose timeout is already due wins at once, without suspending: "
     "a coroutine that re-arms at 0 from its callback runs again in the same loop pass, and a "
     "chain of them never lets the pass return (same pass, starvation)"},
}};

constexpr bool mutant_table_in_order() {
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    if (static_cast<std::size_t>(kMutantInfo[i].id) != i) return false;
  }
  return true;
}
static_assert(mutant_table_in_order(), "kMutantInfo rows must follow the Mutant enum order");

constexpr std::string_view name_of(Mutant m) {
  return kMutantInfo[static_cast<std::size_t>(m)].name;
}

// mutant_under_sim: whether a simulated case can catch m (MutantInfo::under_sim).
constexpr bool mutant_under_sim(Mutant m) {
  return kMutantInfo[static_cast<std::size_t>(m)].under_sim;
}

constexpr std::optional<Mutant> mutant_from_name(std::string_view name) {
  for (const auto& row : kMutantInfo) {
    if (row.name == name) return row.id;
  }
  return std::nullopt;
}

}  // namespace tlab
