// tests/property/time_arithmetic_support.h: what the time-arithmetic properties
// share (time_arithmetic_property_test.cc: clock.h, the sync primitives, the
// Executor and the coroutines; time_arithmetic_service_property_test.cc: TimerService
// on every strategy): the exact __int128 model, generators that favour the values on
// and next to the int64 limits, the bounded property runner that records the mutant
// for `tlab mutants`, and a driver-mode TimerService on a ManualClock.
#pragma once

#include <gtest/gtest.h>

#include <rapidcheck.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "support/manual_timer_source.h"
#include "support/mutant_platform.h"
#include "tlab/clock.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/sleep_for.h"
#include "tlab/coro/with_timeout.h"
#include "tlab/executor.h"
#include "tlab/queue/strategy.h"
#include "tlab/queue/tick_grid.h"
#include "tlab/sync/timed_mutex.h"
#include "tlab/sync/timed_wait_group.h"
#include "tlab/timer_service.h"
#include "tlab/waiter.h"

namespace tlab::time_arith {

using I64 = std::int64_t;
__extension__ typedef __int128 i128;  // exact model arithmetic, no saturation

constexpr I64 kMax = std::numeric_limits<I64>::max();
constexpr I64 kMin = std::numeric_limits<I64>::min();

// The exact value clamped to int64: what every saturating site must return.
inline I64 clamp(i128 v) {
  if (v > kMax) return kMax;
  if (v < kMin) return kMin;
  return static_cast<I64>(v);
}

// ---- Generators --------------------------------------------------------------

// A uniform uint64 (rapidcheck scales integer ranges by size; size 100 is the
// whole range).
inline std::uint64_t any_u64() {
  return *rc::gen::resize(
      100, rc::gen::inRange<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()));
}

// A value in [lo, hi]: a third of the time one of the values on or next to a
// limit (of the range or of int64) or to zero, a sixth near either end, the
// rest uniform over the range.
inline I64 gen_in(I64 lo, I64 hi) {
  const int kind = *rc::gen::inRange(0, 6);
  if (kind <= 1) {
    const std::vector<i128> edges{kMin,
                                  i128{kMin} + 1,
                                  i128{kMin} + 2,
                                  -1,
                                  0,
                                  1,
                                  i128{kMax} - 2,
                                  i128{kMax} - 1,
                                  kMax,
                                  i128{kMax} / 2,
                                  i128{kMax} / 2 + 1,
                                  lo,
                                  i128{lo} + 1,
                                  hi,
                                  i128{hi} - 1};
    const i128 e = edges[*rc::gen::inRange<std::size_t>(0, edges.size())];
    return static_cast<I64>(std::clamp<i128>(e, lo, hi));
  }
  if (kind == 2) {
    const i128 off = *rc::gen::inRange<I64>(0, 2'000'000);
    return static_cast<I64>(*rc::gen::arbitrary<bool>() ? std::min<i128>(i128{lo} + off, hi)
                                                        : std::max<i128>(i128{hi} - off, lo));
  }
  const std::uint64_t width = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const std::uint64_t u = any_u64();
  const std::uint64_t r = width == std::numeric_limits<std::uint64_t>::max() ? u : u % (width + 1);
  return static_cast<I64>(static_cast<std::uint64_t>(lo) + r);
}
inline I64 gen_any() { return gen_in(kMin, kMax); }

// A period: positive, most often next to Duration::max() (the periods nothing
// drove before), sometimes small.
inline I64 gen_period() {
  if (*rc::gen::inRange(0, 3) == 0) return gen_in(1, 1'000'000);
  return gen_in(1, kMax);
}

// ---- Running a property ---------------------------------------------------------

// Runs `prop` (RC_ASSERTs inside) with bounded effort and prints rapidcheck's
// report (on failure: the seed and the shrunk counterexample).
template <class F>
rc::detail::TestResult run_property(const std::string& what, F prop, int runs = 300) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;  // RC_PARAMS seed
  params.maxSuccess = runs;
  const rc::detail::TestResult result =
      rc::detail::checkTestable(std::move(prop), rc::detail::TestMetadata{what, what}, params);
  std::cerr << "- " << what << ": ";
  rc::detail::printResultMessage(result, std::cerr);
  std::cerr << std::endl;
  return result;
}

template <class F>
void expect_holds(const std::string& what, F prop, int runs = 300) {
  EXPECT_TRUE(run_property(what, std::move(prop), runs).template is<rc::detail::SuccessResult>());
}

// The recorded property names the mutant in --gtest_output: `tlab mutants` maps
// the test to it (tool/mutants_cmd.cc).
template <class F>
void expect_counterexample(Mutant m, const std::string& what, F prop, int runs = 300) {
  ::testing::Test::RecordProperty("mutant", std::string(name_of(m)));
  const auto result =
      run_property(what + " with mutant " + std::string(name_of(m)), std::move(prop), runs);
  EXPECT_TRUE(result.template is<rc::detail::FailureResult>())
      << "rapidcheck found no counterexample for mutant " << name_of(m);
}

template <Mutant M>
using MP = testing::MutantPlatform<ManualStdPlatform, M>;

// Q<T0, P0> -> Q<T, P>: one typed suite over QueueTypes serves every platform.
template <class Q, class T, class P>
struct Rebind;
template <template <class, class> class Q, class T0, class P0, class T, class P>
struct Rebind<Q<T0, P0>, T, P> {
  using type = Q<T, P>;
};

template <class Q, class P>
using ServiceOn = TimerService<typename Rebind<Q, TimerTaskPtr<P>, P>::type, P>;

// Whether Q counts ticks on a TickGrid (the wheels): then a deadline past the
// grid's kLastTick never fires (tick_grid.h).
template <class Q>
inline constexpr bool kOnGrid = false;
template <class T, class P>
inline constexpr bool kOnGrid<HashedWheelQueue<T, P>> = true;
template <class T, class P>
inline constexpr bool kOnGrid<HierarchicalWheelQueue<T, P>> = true;
template <class T, class P>
inline constexpr bool kOnGrid<PerWorkerWheelQueue<T, P>> = true;

// A driver-mode service on a ManualClock that starts at `start`. Tick 1 ns: the
// wheels' due instants are the deadlines themselves, so one model fits all, except
// that on a wheel a deadline more than kLastTick ns after start never fires.
template <class Q, class P>
struct Driven {
  ManualClock clock;
  ServiceOn<Q, P> svc;
  I64 start_ns;
  explicit Driven(Instant start) : clock(start), svc(clock, options()), start_ns(start.ns()) {}
  static TimerServiceOptions options() {
    TimerServiceOptions o;
    o.start_thread = false;
    o.queue.tick = Duration::nanoseconds(1);
    o.queue.wheel_slots = 8;  // revolutions and rounds at every jump
    return o;
  }
  // Whether an entry at `deadline` fires once now reaches it.
  bool reachable(I64 deadline) const {
    return !kOnGrid<Q> || i128{deadline} - start_ns <= TickGrid::kLastTick;
  }
  std::size_t run_to(Instant t) {
    clock.set(t);
    return svc.run_due(t);
  }
};

}  // namespace tlab::time_arith
