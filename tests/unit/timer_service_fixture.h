// tests/unit/timer_service_fixture.h: the driver-mode fixture shared by the
// TimerService contract tests (timer_service_test.cc: one-shot, cancel, shutdown;
// timer_service_periodic_test.cc: fixed delay, fixed rate, saturation). ManualClock,
// run_due()-driven, no thread, so every outcome is exact.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/mutant_platform.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"

namespace tlab::test_service {

using ::testing::HasSubstr;
using P = ManualStdPlatform;
using Task = TimerTask<P>;
using TaskPtr = TimerTaskPtr<P>;

using HeapService = TimerServiceOn<BinaryHeapQueue, P>;
constexpr TimerServiceOptions kDriverMode{.start_thread = false};

inline Instant at_ms(std::int64_t ms) { return Instant::from_ns(0) + Duration::milliseconds(ms); }
inline Duration ms(std::int64_t n) { return Duration::milliseconds(n); }

// The message of the exception `f` throws as E; fails the test if it throws
// nothing or something else.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (...) {
    ADD_FAILURE() << "threw the wrong exception type";
    return {};
  }
  ADD_FAILURE() << "threw nothing";
  return {};
}

template <class Q>
class TimerServiceTest : public ::testing::Test {
 protected:
  using Service = TimerService<Q, P>;

  // A task that appends `name` to log_ when it runs.
  TaskPtr logging(std::string name) {
    return Task::make([this, name] { log_.push_back(name); });
  }
  // Moves the clock to `ms`, runs what is due, checks invariants.
  std::size_t run_at(std::int64_t t) {
    clock_.set(at_ms(t));
    const std::size_t n = svc_.run_once();
    svc_.check_invariants();
    return n;
  }
  static bool exact() { return Q::kExact; }

  ManualClock clock_;
  std::vector<std::string> log_;
  Service svc_{clock_, kDriverMode};
};

using Queues = QueueTypes<TaskPtr, P, ::testing::Types>;


template <Mutant M>
using MutantService = TimerServiceOn<BinaryHeapQueue, testing::MutantPlatform<P, M>>;

}  // namespace tlab::test_service
