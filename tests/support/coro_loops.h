// tests/support/coro_loops.h: the coroutine loop over every queue strategy, for
// typed tests (coro_test.cc, coro_threads_test.cc), one instance per entry of
// StrategyList (queue/strategy.h).
//
//   using Loop = typename Tag::template Loop<ManualStdPlatform>;
//   TYPED_TEST_SUITE(MySuite, CoroLoopStrategies, CoroLoopName);
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tlab/coro/event_loop.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/strategy.h"

namespace tlab::testing {

// One strategy; Loop<P> is the EventLoop over it on platform P.
template <template <class, class> class Q>
struct CoroLoopTag {
  template <class P>
  using Loop = EventLoop<Q, P>;
};

// Every strategy in queue/strategy.h's StrategyList, derived: never list them here.
using CoroLoopStrategies = StrategyList::Wrap<CoroLoopTag, ::testing::Types>;

// Names typed-test instances after the strategy (CoroTest/binary_heap.X).
struct CoroLoopName {
  template <class Tag>
  static std::string GetName(int) {
    return std::string(Tag::template Loop<ManualStdPlatform>::Queue::kName);
  }
};

}  // namespace tlab::testing
