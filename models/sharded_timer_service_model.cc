// models/sharded_timer_service_model.cc: Relacy model of ShardedTimerService: N
// locked shards, one timer thread waiting on the earliest head across them.
//
// Property checked: no lost timer, no run after a successful cancel, no double
// run, across shards.
//   - cross_shard_cancel: two schedulers on different shards; each arms a far
//     timer on its own shard, one cancels the OTHER's far timer (cross-shard) and
//     its own; both cancels of never-due timers must return true; a due-now timer
//     on shard 1 must run exactly once; nothing runs early; shutdown_now() drops
//     nothing (all far timers were cancelled).
//   - cross_shard_wake: a scheduler on shard 0 arms a timer due now and waits
//     for it to run; then a scheduler on shard 1 arms one, racing the timer
//     thread's next pass: whenever the insert lands (while the thread runs the
//     first callback, before, during or after its scan of shard 1, or once it
//     sleeps), the timer runs.
// Time is virtual and RelacyPlatform::wait_until is UNTIMED (relacy_platform.h):
// a timer due now is run only if a wake reaches the thread; a lost wake leaves
// the scheduler waiting for its timer for ever, and Relacy reports DEADLOCK.
//
// Core code instantiated: core/include/tlab/sharded_timer_service.h, the shipped
// ShardedTimerService<BinaryHeapQueue<ShardedCallback, P>, P> with 2 shards,
// unchanged: schedule_on() (each model thread names its shard: Relacy's threads
// are fibers of one OS thread, so this_shard() is the same for all of them),
// cancel(), shutdown_now(), and the timer thread's loop (S0, scan, B, wait)
// entered through run_loop().
//
// Threads (static):
//   cross_shard_cancel  0 timer thread: run_loop()
//                       1 scheduler on shard 1: far_a (10 ms); hand over its id;
//                         due_1 (now) and wait until it ran
//                       2 scheduler on shard 0: far_b (10 ms); wait for far_a's id;
//                         cancel(far_a), cancel(far_b); wait until 1 is done;
//                         shutdown_now()
//   cross_shard_wake    0 timer thread: run_loop()
//                       1 scheduler on shard 1: wait until due_0 ran; due_1 (now),
//                         wait until it ran
//                       2 scheduler on shard 0: due_0 (now), wait until it ran;
//                         wait until 1 is done; shutdown_now()
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   sharded_cancel_wrong_shard   cross_shard_cancel: this_shard() is one shard for
//                                both cancels, so one goes to the wrong shard: it
//                                returns false, or cancels a stranger (due_1:
//                                DEADLOCK; far_b: its own cancel returns false)
//   sharded_no_cross_shard_wake  cross_shard_wake: due_1 on shard 1 is never
//                                reported; if the thread's last scan missed it,
//                                it sleeps for ever: DEADLOCK
// Not modelled: sharded_wait_own_shard_only. Its thread is woken and then sleeps
// past a timer it has seen: the timer is late, and Relacy's waits are untimed, so
// a late timer looks like any timer waiting for its deadline. The scenario
// sharded_races catches it (lost_timer).
//
// Bounds: 3 threads, 2 shards, 2-3 timers, no spin loops (every wait blocks).
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1: cross_shard_wake 24.4M iterations (220 s, label
//           slow); cross_shard_cancel does not end in 5 minutes (mutants only).
//   full    mutants only (it stops at the first failure).
#include <memory>

#include "model_runner.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/sharded_timer_service.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using Service = ShardedTimerServiceOn<BinaryHeapQueue, P>;
using Id = Service::TimerId;

constexpr Instant at_ms(std::int64_t ms) { return Instant::from_ns(ms * 1'000'000); }

// What both tests share: a virtual clock, the service in driver mode with two
// shards, and a monitor through which callbacks report that they ran.
template <class Derived>
struct ShardedSuite : rl::test_suite<Derived, 3> {
  RelacyClock clock_;
  Service service_{clock_, ShardedTimerServiceOptions{.shards = 2, .start_thread = false}};

  P::Mutex mu_;
  P::CondVar cv_;
  rl::var<int> runs_[3] = {0, 0, 0};  // guarded by mu_: runs_[i] counts timer i's runs
  int done_ = 0;                      // guarded by mu_: 1 once thread 1 is done

  // A callback that records its run, checks it is not early, and wakes waiters.
  ShardedCallback counting(int i, Instant deadline) {
    return [this, i, deadline] {
      TLAB_MODEL_CHECK(clock_.now() >= deadline, "a timer ran before its deadline");
      P::Lock lock(mu_);
      runs_[i](RL_INFO) = runs_[i](RL_INFO) + 1;
      P::notify_all(cv_);
    };
  }
  void await_run(int i) {
    P::Lock lock(mu_);
    while (runs_[i](RL_INFO) == 0) P::wait(cv_, lock);
  }
  int runs(int i) {
    P::Lock lock(mu_);
    return runs_[i](RL_INFO);
  }
  void finish_thread1() {
    P::Lock lock(mu_);
    done_ = 1;
    P::notify_all(cv_);
  }
  void await_thread1() {
    P::Lock lock(mu_);
    while (done_ == 0) P::wait(cv_, lock);
  }
};

// cross_shard_cancel: a cancel from shard 0 of a timer on shard 1 finds it.
struct CrossShardCancel : ShardedSuite<CrossShardCancel> {
  enum { kFarA, kFarB, kDue1 };
  Id far_a_{};
  bool handed_ = false;  // guarded by mu_: far_a_ is set
  bool cancelled_a_ = false, cancelled_b_ = false;  // thread 2's results
  std::size_t dropped_ = 1;

  void thread(unsigned index) {
    if (index == 0) {
      service_.run_loop();
    } else if (index == 1) {
      const Id a = service_.schedule_on(1, at_ms(10), counting(kFarA, at_ms(10)));
      {
        P::Lock lock(mu_);
        far_a_ = a;
        handed_ = true;
        P::notify_all(cv_);
      }
      service_.schedule_on(1, at_ms(0), counting(kDue1, at_ms(0)));
      await_run(kDue1);
      finish_thread1();
    } else {
      const Id b = service_.schedule_on(0, at_ms(10), counting(kFarB, at_ms(10)));
      Id a;
      {
        P::Lock lock(mu_);
        while (!handed_) P::wait(cv_, lock);
        a = far_a_;
      }
      cancelled_a_ = service_.cancel(a);
      cancelled_b_ = service_.cancel(b);
      await_thread1();
      dropped_ = service_.shutdown_now();
    }
  }
  void after() {
    TLAB_MODEL_CHECK(cancelled_a_, "cancel from shard 0 missed a pending timer on shard 1");
    TLAB_MODEL_CHECK(cancelled_b_, "cancel missed a pending timer on its own shard");
    TLAB_MODEL_CHECK(runs(kFarA) == 0 && runs(kFarB) == 0, "a cancelled timer ran");
    TLAB_MODEL_CHECK(runs(kDue1) == 1, "the due timer did not run exactly once");
    TLAB_MODEL_CHECK(dropped_ == 0, "shutdown_now() dropped a timer that cancel() removed");
    service_.check_invariants();
  }
};

// cross_shard_wake: a new earliest timer on either shard wakes the thread.
struct CrossShardWake : ShardedSuite<CrossShardWake> {
  enum { kDue0, kDue1 };

  void thread(unsigned index) {
    if (index == 0) {
      service_.run_loop();
    } else if (index == 1) {
      await_run(kDue0);  // the thread is now running, looping, scanning or asleep
      service_.schedule_on(1, at_ms(0), counting(kDue1, at_ms(0)));
      await_run(kDue1);
      finish_thread1();
    } else {
      service_.schedule_on(0, at_ms(0), counting(kDue0, at_ms(0)));
      await_run(kDue0);
      await_thread1();
      service_.shutdown_now();
    }
  }
  void after() {
    TLAB_MODEL_CHECK(runs(kDue0) == 1 && runs(kDue1) == 1, "a due timer did not run exactly once");
    service_.check_invariants();
  }
};

template <class Suite>
bool simulate(rl::test_params& params) {
  return rl::simulate<Suite>(params);
}

constexpr ModelTest kTests[] = {
    {"cross_shard_cancel",
     "a cancel from another shard finds the timer; due timers run once, cancelled never",
     &simulate<CrossShardCancel>,
     "sharded_cancel_wrong_shard",
     CleanRun::kPasses,
     {}},
    {"cross_shard_wake",
     "a new earliest timer on any shard wakes the timer thread",
     &simulate<CrossShardWake>,
     "sharded_no_cross_shard_wake",
     CleanRun::kPasses,
     {.bound_slow = 1}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("sharded_timer_service", tlab::models::kTests, argc, argv);
}
