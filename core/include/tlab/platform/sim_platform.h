// tlab/platform/sim_platform.h: the fourth Platform: the shipped core/ templates
// under deterministic simulation (sim_scheduler.h), with virtual time that expires.
//
// Next to StdPlatform (production), StressPlatform (real threads, fault points)
// and RelacyPlatform (models/): the SAME templates (TimeoutToken<SimPlatform>,
// Waiter<SimPlatform>, TimedMutex<SimPlatform>, ...) run on cooperative tasks,
// and every operation below is a scheduling point.
//
//   member            SimPlatform
//   Atomic<T>         SimAtomic<T>: std::atomic<T>'s member API; a point before
//                     every operation
//   Mutex             SimMutex: lock() blocks the task (a point), unlock() wakes
//                     the waiters (a point)
//   CondVar           SimCondVar: wait() releases the mutex and blocks the task
//   Lock              std::unique_lock<SimMutex>
//   Clock             SimClock: the run's virtual time (Scheduler::now())
//   fault(p)          a point: a fault point marks a race window, and here the
//                     scheduler may switch inside it; the scenario's fault plan
//                     acts in virtual time (a delay is a timed block)
//   mutated(m)        the stress switchboard (stress_control.h), as StressPlatform
//   yield()           a point that marks a spin (under PCT the spinner gives way)
//   Thread, spawn(f)  SimThread: a thread core/ starts (TimerService's timer
//                     thread) is a task of the run; join() blocks the joiner
//   wait_until(...)   a TIMED wait on virtual time: it times out at `deadline` in
//                     every schedule where no notify comes first (unlike Relacy,
//                     loom or shuttle, whose timed waits never time out or time out
//                     at random); SimClock is not kVirtual in core's sense: nobody
//                     has to notify for time to pass
//
// Departs from RelacyPlatform in that memory is sequentially consistent (one task
// runs at a time; orders are accepted and ignored): SimPlatform explores
// interleavings and timeouts, Relacy explores weak memory on small models. And in
// that spurious wake-ups are not injected: a notify wakes exactly the waiters it
// names (notify_one: one, chosen from the seed).
//
// Cost: one scheduling point per operation (a semaphore hand-off when the
// scheduler switches tasks). Ground rules: every operation must come from a task
// of a running sim::Scheduler (TLAB_CHECK otherwise); objects may be constructed
// anywhere (construction is not a point).
#pragma once

#include <atomic>
#include <mutex>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "tlab/clock.h"
#include "tlab/platform/fault_decision.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"
#include "tlab/platform/platform.h"
#include "tlab/platform/sim_scheduler.h"
#include "tlab/platform/stress_control.h"

namespace tlab {

template <class T>
class SimAtomic {
 public:
  SimAtomic() noexcept : v_(T{}) {}
  explicit SimAtomic(T desired) noexcept : v_(desired) {}
  SimAtomic(const SimAtomic&) = delete;
  SimAtomic& operator=(const SimAtomic&) = delete;

  T load(std::memory_order = std::memory_order::seq_cst) const {
    sim::Scheduler::point();
    return v_.load();
  }
  void store(T desired, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    v_.store(desired);
  }
  T exchange(T desired, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.exchange(desired);
  }
  T fetch_add(T arg, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.fetch_add(arg);
  }
  T fetch_sub(T arg, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.fetch_sub(arg);
  }
  T fetch_or(T arg, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.fetch_or(arg);
  }
  T fetch_and(T arg, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.fetch_and(arg);
  }
  T fetch_xor(T arg, std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.fetch_xor(arg);
  }
  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order = std::memory_order::seq_cst) {
    sim::Scheduler::point();
    return v_.compare_exchange_strong(expected, desired);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order, std::memory_order) {
    return compare_exchange_strong(expected, desired);
  }
  // Never fails spuriously: a spurious failure is a schedule the scheduler can
  // already produce (another task's store in between).
  bool compare_exchange_weak(T& expected, T desired,
                             std::memory_order = std::memory_order::seq_cst) {
    return compare_exchange_strong(expected, desired);
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order, std::memory_order) {
    return compare_exchange_strong(expected, desired);
  }

 private:
  std::atomic<T> v_;
};

class SimMutex {
 public:
  SimMutex() = default;
  SimMutex(const SimMutex&) = delete;
  SimMutex& operator=(const SimMutex&) = delete;

  void lock() {
    sim::Scheduler::point();
    while (locked_) sim::Scheduler::block(this, std::nullopt);
    locked_ = true;
  }
  bool try_lock() {
    sim::Scheduler::point();
    if (locked_) return false;
    locked_ = true;
    return true;
  }
  void unlock() {
    unlock_quietly();
    sim::Scheduler::point();
  }
  // unlock_quietly: unlock without a point (a condition-variable wait releases
  // the mutex and blocks in one step).
  void unlock_quietly() {
    TLAB_CHECK(locked_);
    locked_ = false;
    sim::Scheduler::wake(this, /*all=*/true);  // they re-check locked_
  }

 private:
  bool locked_ = false;  // only the running task reads or writes it
};

class SimCondVar {
 public:
  SimCondVar() = default;
  SimCondVar(const SimCondVar&) = delete;
  SimCondVar& operator=(const SimCondVar&) = delete;

  // wait: releases `lock`, blocks until notified or (with a deadline) virtual time
  // reaches it, then re-acquires `lock`.
  void wait(std::unique_lock<SimMutex>& lock, std::optional<Instant> deadline) {
    TLAB_CHECK(lock.owns_lock());
    lock.mutex()->unlock_quietly();
    sim::Scheduler::block(this, deadline);
    lock.mutex()->lock();
  }
  void notify(bool all) {
    sim::Scheduler::point();
    sim::Scheduler::wake(this, all);
  }
};

// SimThread: a thread core/ starts for itself (TimerService's timer thread), as a
// task of the running simulation; join() blocks the joining task until it returns.
class SimThread {
 public:
  SimThread() = default;
  explicit SimThread(void* task) : task_(task) {}
  SimThread(SimThread&& o) noexcept : task_(std::exchange(o.task_, nullptr)) {}
  SimThread& operator=(SimThread&& o) noexcept {
    TLAB_CHECK(task_ == nullptr, "SimThread assigned over a joinable thread");
    task_ = std::exchange(o.task_, nullptr);
    return *this;
  }
  SimThread(const SimThread&) = delete;
  SimThread& operator=(const SimThread&) = delete;
  ~SimThread() { TLAB_CHECK(task_ == nullptr, "SimThread destroyed while joinable"); }

  bool joinable() const noexcept { return task_ != nullptr; }
  void join() {
    TLAB_CHECK(task_ != nullptr);
    sim::Scheduler::join_task(std::exchange(task_, nullptr));
  }
  std::thread::id get_id() const {
    return task_ == nullptr ? std::thread::id() : sim::Scheduler::id_of(task_);
  }

 private:
  void* task_ = nullptr;
};

// SimClock: the run's virtual time. Not kVirtual in core's sense (time moves on
// its own, so timed waits are real timed waits).
struct SimClock {
  static constexpr bool kVirtual = false;
  Instant now() const { return sim::Scheduler::now(); }
};

struct SimPlatform {
  template <class T>
  using Atomic = SimAtomic<T>;
  using Mutex = SimMutex;
  using CondVar = SimCondVar;
  using Lock = std::unique_lock<SimMutex>;
  using Clock = SimClock;
  using Thread = SimThread;

  static constexpr std::string_view kName = "sim";

  // spawn: a task of the running simulation (ThreadOf<P>, platform.h). Requires:
  // called from a task (construct a TimerService inside one).
  template <class F>
  static Thread spawn(F&& f) {
    return Thread(sim::Scheduler::spawn_here("thread", std::function<void()>(std::forward<F>(f))));
  }

  // fault: a point, then the scenario's fault plan (stress_control.h) in simulated
  // terms: a delay or spin of L ns blocks the task for L of virtual time (every
  // other task may run meanwhile: the window the plan widens stays open), a yield
  // is a yield point.
  static void fault(FaultPoint p) {
    sim::Scheduler::point();
    const auto d = stress::decide(p);
    if (!d) return;
    if (d->action == stress::FaultAction::kYield || d->length_ns == 0) {
      sim::Scheduler::yield_point();
      return;
    }
    int here = 0;  // a private address: the deadline wakes it
    sim::Scheduler::block(&here, sim::Scheduler::now() +
                                     Duration::nanoseconds(static_cast<std::int64_t>(d->length_ns)));
  }
  static bool mutated(Mutant m) noexcept { return stress::mutant_enabled(m); }
  static void yield() { sim::Scheduler::yield_point(); }

  static void wait(CondVar& cv, Lock& lock) { cv.wait(lock, std::nullopt); }
  static void wait_until(CondVar& cv, Lock& lock, const Clock&, Instant deadline) {
    cv.wait(lock, deadline);
  }
  static void notify_one(CondVar& cv) { cv.notify(false); }
  static void notify_all(CondVar& cv) { cv.notify(true); }
};

static_assert(Platform<SimPlatform>);

}  // namespace tlab
