// models/platform_model.cc: self-check of RelacyPlatform (models/relacy_platform.h).
//
// Property checked: the facade hands Relacy exactly what core/ asks for. Every
// RelacyAtomic member is instantiated and its result checked; a memory order is
// passed through rather than strengthened (a relaxed message is a DATA RACE, a
// release/acquire one is not); and wait_until on the virtual clock is an untimed
// wait, so a notify that never comes is reported as DEADLOCK instead of being
// papered over by a Relacy time-out (the design decision in relacy_platform.h).
//
// Core code instantiated: none beyond the Platform concept itself
// (core/include/tlab/platform/platform.h); this model checks the tool, so that a
// failure of a real model can be trusted to be about core/.
//
// Threads: 2. Tests (expected outcome):
//   atomics          pass: every RMW, both CAS forms, try_lock, release/acquire
//                    message passing through each RMW kind
//   relaxed_message  MUST FAIL (DATA RACE): the same message passed relaxed
//   notify           pass: wait_until woken by notify_one after the clock moves
//   lost_notify      MUST FAIL (DEADLOCK): the clock moves, nobody notifies
//
// Bounds: random scheduler, 10^5 iterations by default; all four are small
// enough for the full-search scheduler.
#include <cstdint>

#include "model_runner.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;

// Passes `payload_` from thread 0 to thread 1 through each kind of atomic write,
// with release/acquire (kRelaxed = false) or relaxed (true) orders.
template <bool kRelaxed>
struct AtomicsModel : rl::test_suite<AtomicsModel<kRelaxed>, 2> {
  static constexpr std::memory_order kPublish =
      kRelaxed ? std::memory_order::relaxed : std::memory_order::release;
  static constexpr std::memory_order kObserve =
      kRelaxed ? std::memory_order::relaxed : std::memory_order::acquire;

  P::Atomic<std::uint32_t> flag_;  // default-constructed: must read as 0
  P::Atomic<std::uint64_t> wide_{40};
  // One payload per publishing operation, each written once, before it.
  rl::var<int> by_store_{0}, by_fetch_add_{0}, by_fetch_or_{0}, by_exchange_{0};
  P::Mutex mu_;

  void thread(unsigned index) {
    if (index == 0) {
      by_store_(RL_INFO) = 1;
      flag_.store(1, kPublish);  // 1; each write pairs with thread 1's load
      by_fetch_add_(RL_INFO) = 1;
      flag_.fetch_add(1, kPublish);  // 2
      by_fetch_or_(RL_INFO) = 1;
      flag_.fetch_or(4, kPublish);  // 6
      by_exchange_(RL_INFO) = 1;
      flag_.exchange(7, kPublish);  // 7
    } else {
      std::uint32_t seen;
      while ((seen = flag_.load(kObserve)) == 0) P::yield();  // pairs with thread 0
      TLAB_MODEL_CHECK(seen == 1 || seen == 2 || seen == 6 || seen == 7, "a written value");
      TLAB_MODEL_CHECK(by_store_(RL_INFO) == 1, "store publishes");
      if (seen >= 2) TLAB_MODEL_CHECK(by_fetch_add_(RL_INFO) == 1, "fetch_add publishes");
      if (seen >= 6) TLAB_MODEL_CHECK(by_fetch_or_(RL_INFO) == 1, "fetch_or publishes");
      if (seen == 7) TLAB_MODEL_CHECK(by_exchange_(RL_INFO) == 1, "exchange publishes");
      // Single-threaded RMW semantics on a variable only this thread touches.
      TLAB_MODEL_CHECK(wide_.fetch_sub(2) == 40, "fetch_sub returns the old value");
      TLAB_MODEL_CHECK(wide_.fetch_and(0x3c) == 38, "fetch_and returns the old value");
      TLAB_MODEL_CHECK(wide_.fetch_xor(1) == 36, "fetch_xor returns the old value");
      std::uint64_t expected = 0;
      TLAB_MODEL_CHECK(!wide_.compare_exchange_strong(expected, 9, std::memory_order::acq_rel,
                                                      std::memory_order::acquire),
                       "a mismatching CAS fails");
      TLAB_MODEL_CHECK(expected == 37, "a failed CAS loads the current value");
      while (!wide_.compare_exchange_weak(expected, 50, std::memory_order::acq_rel)) {
        // compare_exchange_weak may fail spuriously; Relacy injects such failures.
      }
      TLAB_MODEL_CHECK(wide_.load() == 50, "the CAS stored");
      TLAB_MODEL_CHECK(mu_.try_lock() || mu_.try_lock(), "try_lock fails spuriously once at most");
      mu_.unlock();
    }
  }
};

// A waiter blocks in wait_until on the virtual clock; the driver moves the clock
// and sets `due_`, then notifies (kNotify) or forgets to (lost notify).
template <bool kNotify>
struct WaitModel : rl::test_suite<WaitModel<kNotify>, 2> {
  P::Clock clock_;
  P::Mutex mu_;
  P::CondVar cv_;
  rl::var<bool> due_{false};  // guarded by mu_

  void thread(unsigned index) {
    const Instant deadline = Instant::from_ns(1000);
    if (index == 0) {
      P::Lock lock(mu_);
      while (!due_(RL_INFO)) P::wait_until(cv_, lock, clock_, deadline);
      TLAB_MODEL_CHECK(clock_.now() >= deadline, "woken only once the deadline passed");
    } else {
      clock_.advance(Duration::nanoseconds(1000));
      P::Lock lock(mu_);
      due_(RL_INFO) = true;
      if (kNotify) P::notify_one(cv_);
    }
  }
};

template <class Suite>
bool simulate_suite(rl::test_params& params) {
  return rl::simulate<Suite>(params);
}

constexpr ModelTest kTests[] = {
    {"atomics",
     "every RelacyAtomic op; release/acquire message passing",
     &simulate_suite<AtomicsModel<false>>,
     "",
     CleanRun::kPasses,
     {.full_quick = true}},
    {"relaxed_message",
     "the same message passed relaxed (expected to fail: data race)",
     &simulate_suite<AtomicsModel<true>>,
     "",
     CleanRun::kFails,
     {.full_quick = true}},
    {"notify",
     "wait_until on the virtual clock, woken by notify_one",
     &simulate_suite<WaitModel<true>>,
     "",
     CleanRun::kPasses,
     {.full_quick = true}},
    {"lost_notify",
     "the clock moves but nobody notifies (expected to fail: deadlock)",
     &simulate_suite<WaitModel<false>>,
     "",
     CleanRun::kFails,
     {.full_quick = true}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("platform", tlab::models::kTests, argc, argv);
}
